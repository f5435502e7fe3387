// C++ that nvcc takes with a warning and clang's C++17 refuses by default: a `register` local, a
// narrowing inside a braced list, a literal followed by a macro name with no space.
#define STR(x) #x
#define TAG "k"STR(1)

__global__ void own_slot(float *out) {
    register int i = blockIdx.x * blockDim.x + threadIdx.x;
    int w[2] = {1.5 * i, 2.0};
    out[i] = w[0] + sizeof(TAG);
}

// Every thread writing out[w[1]], out[2]: a race.
__global__ void same_slot(float *out) {
    register int i = threadIdx.x;
    int w[2] = {1.5 * i, 2};
    out[w[1]] = i;
}
