// kernelrace-args: --block-dim 32
// verdict: clean
// Blelloch work-efficient exclusive scan (GPU Gems 3, ch. 39): up-sweep, clear, down-sweep; two elements per thread.
__global__ void prescan(float *g_odata, const float *g_idata) {
    __shared__ float temp[64];
    const int n = 64;
    int thid = threadIdx.x;
    temp[2 * thid] = g_idata[blockIdx.x * n + 2 * thid];
    temp[2 * thid + 1] = g_idata[blockIdx.x * n + 2 * thid + 1];
    for (int lvl = 0; lvl < 6; ++lvl) {
        int d = 32 >> lvl, offset = 1 << lvl;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            temp[bi] += temp[ai];
        }
    }
    if (thid == 0) temp[n - 1] = 0;
    for (int lvl = 0; lvl < 6; ++lvl) {
        int d = 1 << lvl, offset = 32 >> lvl;
        __syncthreads();
        if (thid < d) {
            int ai = offset * (2 * thid + 1) - 1;
            int bi = offset * (2 * thid + 2) - 1;
            float t = temp[ai];
            temp[ai] = temp[bi];
            temp[bi] += t;
        }
    }
    __syncthreads();
    g_odata[blockIdx.x * n + 2 * thid] = temp[2 * thid];
    g_odata[blockIdx.x * n + 2 * thid + 1] = temp[2 * thid + 1];
}
