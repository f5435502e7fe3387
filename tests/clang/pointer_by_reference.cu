// A pointer passed by reference and moved by the function it is passed to moves the caller's
// variable: even work-items then store at the next one's element (a race). The lowering binds the
// parameter to the caller's pointer value, not to its variable, so the move is `unknown`.
__device__ void advance(float *&p, int n) { p += n; }

__global__ void moved_by_callee(float *out) {
    float *p = out + threadIdx.x;
    advance(p, 1 - threadIdx.x % 2);
    *p = (float)threadIdx.x;
}

__global__ void not_moved(float *out) {
    float *p = out + threadIdx.x;
    *p = (float)threadIdx.x;
}
