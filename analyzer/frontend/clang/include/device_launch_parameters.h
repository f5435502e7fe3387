/* kernelrace's <device_launch_parameters.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
