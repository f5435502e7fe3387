// kernelrace-args: --block-dim 64
// verdict: race
// race: s line 8: a warp-level exchange through shared memory relies on lockstep execution: no __syncwarp between the store and the read of another lane's slot
__global__ void lane_rotate(const int *in, int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    out[blockIdx.x * 64 + t] = s[(t & ~31) | ((t + 1) & 31)];   // BUG
}
