/* kernelrace's <limits.h>. */
#pragma once
#include "climits"
