/* kernelrace's <cuda_runtime.h>: the prelude declares what kernelrace models. */
#pragma once
