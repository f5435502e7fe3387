/* kernelrace's <sm_60_atomic_functions.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
