// A device function that returns from inside its loops, inlined: what follows runs only when it did not.
__device__ bool is_dense(int ndims, const int *dims, const int *strides) {
    int expected = 1;
    for (int d = ndims - 1; d >= 0; --d) {
        for (int r = 0; r < 1; ++r)
            if (strides[d] == 0) return false;
        if (strides[d] != expected) return false;
        expected *= dims[d];
    }
    return true;
}

__global__ void fill(float *out, int n, int ndims, const int *info) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (is_dense(ndims, info, info + ndims)) {
        if (i < n) out[i] = 1.0f;
    } else {
        out[0] = 2.0f;   // expect: write-after-write (every thread, when the layout is not dense)
    }
}
