/* kernelrace's <cuda_runtime_api.h>: its declarations kernelrace needs are in the prelude. */
#pragma once
