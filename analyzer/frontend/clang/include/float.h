/* kernelrace's <float.h>. */
#pragma once
#include "kernelrace_math.h"
