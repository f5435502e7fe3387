// An asm block that may touch memory makes its kernel unknown; the other kernel, with a private
// array initialised from a list, is analysed.
__global__ void fence_asm(float *x) {
    asm volatile("red.global.add.f32 [%0], %1;" :: "l"(x), "f"(1.0f) : "memory");
}

__global__ void private_init(float *out) {
    float a[4] = {1.0f, 2.0f};
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    out[t] = a[t % 4];
}
