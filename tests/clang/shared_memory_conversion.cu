// Extern shared memory given a template's type through a class's conversion operator, as the
// CUDA samples write it, and two extern shared arrays that are one allocation.
template <class T> struct DynShared {
    __device__ inline operator T *() {
        extern __shared__ int dyn_words[];
        return (T *)dyn_words;
    }
};

template <> struct DynShared<double> {
    __device__ inline operator double *() {
        extern __shared__ double dyn_doubles[];
        return (double *)dyn_doubles;
    }
};

// Clean: each thread writes its own slot, a barrier, then reads its neighbour's.
template <class T> __global__ void shift_sync(const T *in, T *out) {
    T *s = DynShared<T>();
    s[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

// A race: the neighbour's slot is read with no barrier.
template <class T> __global__ void shift_nosync(const T *in, T *out) {
    T *s = DynShared<T>();
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

// The specialisation, resolved by clang: the same race on doubles.
__global__ void shift_double(const double *in, double *out) {
    double *s = DynShared<double>();
    s[threadIdx.x] = in[threadIdx.x];
    out[threadIdx.x] = s[(threadIdx.x + 1) % blockDim.x];
}

// Two names for the one dynamic allocation: thread t writes word t through one and reads word
// t + 1 through the other, with no barrier: a race.
__global__ void two_names(float *out) {
    extern __shared__ float first[];
    extern __shared__ float second[];
    first[threadIdx.x] = 1.0f;
    out[threadIdx.x] = second[(threadIdx.x + 1) % blockDim.x];
}
