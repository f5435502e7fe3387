// A kernel of the includer's, not of cells.cu: checking cells.cu never reports it.
__global__ void every_thread_writes_one(float* out) {
    out[0] = threadIdx.x;
}
