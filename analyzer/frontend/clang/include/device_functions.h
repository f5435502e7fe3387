/* kernelrace's <device_functions.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
