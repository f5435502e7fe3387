/* kernelrace's <math.h>. */
#pragma once
#include "kernelrace_math.h"
