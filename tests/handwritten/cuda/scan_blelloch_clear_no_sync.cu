// kernelrace-args: --block-dim 32
// verdict: race
// race: temp line 19: the last thread clears the root right after the up-sweep with no barrier, racing with thread 0's last up-sweep add
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
    if (thid == blockDim.x - 1) temp[n - 1] = 0;   // BUG
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
