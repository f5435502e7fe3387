#include <cuda_bf16.h>

// A 16-byte packed vector held in registers: its array member is private storage,
// operator[] names one lane, and whole-vector loads and stores touch global memory lane by lane.
template <class E>
struct alignas(16) Lanes16 {
    E lane[16 / sizeof(E)];
    static constexpr int count = 16 / sizeof(E);
    __device__ E& operator[](int k) { return lane[k]; }
    __device__ const E& operator[](int k) const { return lane[k]; }
};

template <class E>
__device__ Lanes16<E> fetch16(const E* at) {
    return *reinterpret_cast<const Lanes16<E>*>(at);
}

template <class E>
__device__ void put16(E* at, Lanes16<E> v) {
    *reinterpret_cast<Lanes16<E>*>(at) = v;
}

// Each thread reads its neighbour's four floats while the neighbour writes them: a race.
__global__ void shift_lanes(float* data, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Lanes16<float>::count;
    if (i + 4 >= n) return;
    Lanes16<float> v = fetch16(data + i + 4);
    v[0] = v[0] + 1.0f;
    put16(data + i, v);
}

// Eight bf16 lanes a vector: each thread writes one lane inside its neighbour's eight (a race); the
// element is 2 bytes, so the write at i - 4 lands in the 16 bytes the thread before reads.
__global__ void bf16_overlap(__nv_bfloat16* data, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Lanes16<__nv_bfloat16>::count;
    if (i + 8 > n) return;
    Lanes16<__nv_bfloat16> v = fetch16(data + i);
    if (i >= 8) data[i - 4] = v[0];
}
