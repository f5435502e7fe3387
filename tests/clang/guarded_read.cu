// A conditional expression reads s[t % 32] only when t >= 32, where the thread reads its own write:
// clean (read unconditionally, thread 5 would read what thread 37 writes).
__global__ void upper(float *out) {
    __shared__ float s[32];
    int t = threadIdx.x;
    if (t >= 32)
        s[t - 32] = t;
    float v = t >= 32 ? s[t % 32] : 0.0f;
    out[blockIdx.x * 64 + t] = v;
}
