// A stated fact parts no threads: the barrier is divergent because of the branch on line 8, and a
// barrier under the fact alone is reached by every thread.
__global__ void assume_then_branch(float *out, int D) {
    __shared__ float sh[256];
    int tid = threadIdx.x;
    __builtin_assume(tid < D);
    __syncthreads();
    if (tid < D / 2) {
        sh[tid] = out[tid];
        __syncthreads();
        out[tid] = sh[tid ^ 1];
    }
}
