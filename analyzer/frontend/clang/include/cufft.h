/* kernelrace's <cufft.h>: the types of cuFFT's data, which kernels read and write (the library's
   host API is not declared: host code is the host's business). */
#pragma once
#include <cuda_runtime.h>
typedef float cufftReal;
typedef double cufftDoubleReal;
typedef float2 cufftComplex;
typedef double2 cufftDoubleComplex;
