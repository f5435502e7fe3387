// Local references bound to memory through a reference cast (`const float4 &k = (float4 &)(p[j])`):
// the reference names that memory, read or written where it is used.
__global__ void dot4(const float *a, const float *b, float *out, int n) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    float y = 0;
    for (int j = 0; j < n; j += 4) {
        const float4 &x = (float4 &)(a[t * n + j]);
        const float4 &w = reinterpret_cast<const float4 &>(b[j]);
        y += x.x * w.x + x.y * w.y + x.z * w.z + x.w * w.w;
    }
    out[t] = y;
}

// The read through the reference races with the neighbour's write: no barrier between them.
__global__ void neighbour(float *out) {
    __shared__ float s[256];
    s[threadIdx.x] = threadIdx.x;
    const float &next = (float &)(s[(threadIdx.x + 1) % 256]);
    out[threadIdx.x] = next;
}

// The same after a barrier: clean.
__global__ void neighbour_synced(float *out) {
    __shared__ float s[256];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    const float &next = (float &)(s[(threadIdx.x + 1) % 256]);
    out[threadIdx.x] = next;
}

// Written through the reference: every thread writes data[0].
__global__ void first_of_all(float *data) {
    float &first = (float &)(data[0]);
    first = threadIdx.x;
}
