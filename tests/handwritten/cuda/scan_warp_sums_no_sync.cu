// kernelrace-args: --block-dim 128
// verdict: race
// race: warp_sums line 16: warp 0 scans the warp totals without waiting for the other warps to publish theirs
__global__ void block_scan(const int *in, int *out) {
    __shared__ int warp_sums[4];
    int tid = threadIdx.x;
    int lane = tid & 31;
    int warp = tid >> 5;
    int v = in[blockIdx.x * 128 + tid];
    for (int d = 1; d < 32; d <<= 1) {
        int y = __shfl_up_sync(0xffffffff, v, d);
        if (lane >= d) v += y;
    }
    if (lane == 31) warp_sums[warp] = v;
    if (warp == 0) {
        int w = lane < 4 ? warp_sums[lane] : 0;   // BUG
        for (int d = 1; d < 4; d <<= 1) {
            int y = __shfl_up_sync(0xffffffff, w, d);
            if (lane >= d) w += y;
        }
        if (lane < 4) warp_sums[lane] = w;
    }
    __syncthreads();
    if (warp > 0) v += warp_sums[warp - 1];
    out[blockIdx.x * 128 + tid] = v;
}
