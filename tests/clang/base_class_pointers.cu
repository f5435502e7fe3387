// A kernel parameter of a struct whose pointers are members of its base class.
struct Common {
    void *src;
    void *dst;
    int n;
};
struct Params : public Common {
    float scale;
};

__global__ void scale_copy(Params p) {
    const float *src = static_cast<const float *>(p.src);
    float *dst = static_cast<float *>(p.dst);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n) dst[i] = src[i] * p.scale;
}

__global__ void scale_first(Params p) {
    float *dst = static_cast<float *>(p.dst);
    dst[0] = p.scale * threadIdx.x;
}
