/* kernelrace's <cuda_profiler_api.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
