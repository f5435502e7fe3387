// A template helper's `T *` parameter has the element type of the argument it is given: 8-byte
// elements here, never the 4-byte default of an unbound type parameter.
template <typename T>
__device__ void put(T *buf, unsigned i, T v) {
    buf[i] = v;
}

// Thread i writes element i whole, then the upper half of the same element: no other thread's bytes.
__global__ void own_element(long long *buf, long long v) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    put(buf, i, v);
    ((int *)buf)[2 * i + 1] = 0;
}

// Thread i writes element i + 1 whole and the lower half of element i: thread i + 1 writes that half.
__global__ void next_element(long long *buf, long long v) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    put(buf, i + 1, v);
    ((int *)buf)[2 * i] = 0;
}
