// A value thousands of operations deep (an unrolled chain of multiply-adds, as a peak-flops
// benchmark writes it): analysed without recursing through the chain. Clean: each thread stores
// its own element; the second kernel stores every thread's chain to out[0], a race.
#define R10(s) s s s s s s s s s s
#define R1000(s) R10(R10(R10(s)))

__global__ void chain(float *out, float a, float b) {
    float x = out[blockIdx.x * blockDim.x + threadIdx.x];
    R1000(x = x * a + b;)
    R1000(x = x * a + b;)
    R1000(x = x * a + b;)
    out[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

__global__ void chain_one(float *out, float a, float b) {
    float x = threadIdx.x;
    R1000(x = x * a + b;)
    R1000(x = x * a + b;)
    R1000(x = x * a + b;)
    out[0] = x;
}
