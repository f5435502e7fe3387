// sizeof of a template's type parameter in a kernel no host code launches: the size of the type the
// parameter is read as (float, as for its pointers, when no launch binds it).
template <typename T>
__global__ void pack(char *bytes, const T *in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    *(T *)(bytes + i * sizeof(T)) = in[i];
}

template <typename T>
__global__ void overlap(char *bytes) {
    int i = threadIdx.x;
    bytes[i * sizeof(T) / 8] = (char)i;   // expect: write-after-write (threads 0 and 1 write byte 0)
}

__global__ void launch_pack(char *bytes, const double *in) {}

void host(char *b, const double *d) { pack<double><<<1, 64>>>(b, d); }
