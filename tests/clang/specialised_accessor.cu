// A member function of a class template specialised per type (`SharedMemory<T>::GetPointer()`,
// shoc's stencil, the CUDA samples' templates): the specialisation of the kernel's type, its
// extern shared array the kernel's dynamic shared memory. (An unbound type parameter is float.)
template <typename T>
struct SharedMemory {
    __device__ T *GetPointer() {
        extern __device__ void error(void);
        error();
        return 0;
    }
};

template <>
struct SharedMemory<float> {
    __device__ float *GetPointer() {
        extern __shared__ float sh_float[];
        return sh_float;
    }
};

template <>
struct SharedMemory<double> {
    __device__ double *GetPointer() {
        extern __shared__ double sh_double[];
        return sh_double;
    }
};

// stage, barrier, read the neighbour: clean
template <class T>
__global__ void staged(const T *in, T *out) {
    SharedMemory<T> shobj;
    T *sh = shobj.GetPointer();
    sh[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = sh[(threadIdx.x + 1) % blockDim.x];
}

// the same without the barrier: the neighbour's element read while it is written
template <class T>
__global__ void unstaged(const T *in, T *out) {
    SharedMemory<T> shobj;
    T *sh = shobj.GetPointer();
    sh[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sh[(threadIdx.x + 1) % blockDim.x];
}
