/* kernelrace's <cufftXt.h>: cuFFT's types (cufft.h). */
#pragma once
#include <cufft.h>
