// A 16-byte packed vector held in registers: its array member is private storage,
// operator[] names one lane, and whole-vector loads and stores touch global memory lane by lane.
template <class E>
struct alignas(16) Lanes16 {
    E lane[16 / sizeof(E)];
    static constexpr int count = 16 / sizeof(E);
    __device__ E& operator[](int k) { return lane[k]; }
    __device__ const E& operator[](int k) const { return lane[k]; }
    __device__ E total() const {
        E s = 0;
        for (int k = 0; k < count; k++) s += this->lane[k];
        return s;
    }
};

template <class E>
__device__ Lanes16<E> fetch16(const E* at) {
    return *reinterpret_cast<const Lanes16<E>*>(at);
}

template <class E>
__device__ void put16(E* at, Lanes16<E> v) {
    *reinterpret_cast<Lanes16<E>*>(at) = v;
}

// Each thread scales four floats in place: clean.
__global__ void scale_lanes(float* data, float s, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Lanes16<float>::count;
    if (i >= n) return;
    Lanes16<float> v = fetch16(data + i);
    for (int k = 0; k < Lanes16<float>::count; k++) {
        v[k] = v[k] * s;
    }
    put16(data + i, v);
}

// The same shift into a separate output: each thread writes only its own four floats.
__global__ void shift_lanes_out(const float* data, float* out, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Lanes16<float>::count;
    if (i + 4 >= n) return;
    Lanes16<float> v = fetch16(data + i + 4);
    v[0] = v[0] + 1.0f;
    put16(out + i, v);
}

// A member function reading the lanes through `this`: each thread sums its own four floats.
__global__ void sum_lanes(const float* data, float* sums, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if ((t + 1) * Lanes16<float>::count > n) return;
    Lanes16<float> v = fetch16(data + t * Lanes16<float>::count);
    sums[t] = v.total();
}
