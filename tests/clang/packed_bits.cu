// A packed vector built from and stored as its 16 bytes (an int4 copied with memcpy), a class
// template's constructor and methods, its lane count as a static member read through an object.
#include <cstring>
#include <cuda_runtime.h>

template <class E>
struct alignas(16) Bits16 {
    Bits16() = default;
    __device__ explicit Bits16(int4 raw) { memcpy(&lane, &raw, sizeof(raw)); }
    __device__ E& operator[](int k) { return lane[k]; }
    __device__ int4 raw() const {
        int4 out;
        memcpy(&out, &lane, sizeof(out));
        return out;
    }
    static constexpr const int width = sizeof(int4) / sizeof(E);
    E lane[width];
};

template <class E>
__device__ Bits16<E> read16(const E* at) {
    return Bits16<E>{__ldcs(reinterpret_cast<const int4*>(at))};
}

template <class E>
__device__ void write16(E* at, Bits16<E> v) {
    __stcs(reinterpret_cast<int4*>(at), v.raw());
}

// Each thread doubles its own four floats: clean.
__global__ void double_bits(float* data) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Bits16<float>::width;
    Bits16<float> v = read16(data + i);
    for (int k = 0; k < v.width; k++) {
        v[k] = v[k] * 2.0f;
    }
    write16(data + i, v);
}

// Each thread writes its four floats one vector further on, over its neighbour's: a race.
__global__ void push_bits(float* data) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * Bits16<float>::width;
    Bits16<float> v = read16(data + i);
    write16(data + i + 4, v);
}
