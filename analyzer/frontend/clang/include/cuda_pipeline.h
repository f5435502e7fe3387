/* kernelrace's <cuda_pipeline.h>: the primitives of asynchronous copies into shared memory, modelled
   as cp.async is (analyzer/frontend/clang/asm.py): a copy at its issue, completed by the wait. */
#pragma once
__device__ void __pipeline_memcpy_async(void *dst_shared, const void *src_global, unsigned long size_and_align,
                                        unsigned long zfill = 0);
__device__ void __pipeline_commit(void);
__device__ void __pipeline_wait_prior(unsigned long prior);
