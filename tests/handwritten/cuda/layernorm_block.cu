// kernelrace-args: --block-dim 64
// verdict: clean
// Layer norm, one row per block: warp shuffles, partials in shared memory, mean and variance broadcast by thread 0.
__global__ void layernorm(const float *x, const float *gamma, const float *beta, float *y, int cols) {
    __shared__ float s_mean, s_var;
    __shared__ float part[2];
    int row = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    float sum = 0.0f;
    for (int c = tid; c < cols; c += 64) sum += x[row * cols + c];
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffff, sum, o);
    if (lane == 0) part[warp] = sum;
    __syncthreads();
    if (tid == 0) s_mean = (part[0] + part[1]) / cols;
    __syncthreads();
    float mean = s_mean;
    float sq = 0.0f;
    for (int c = tid; c < cols; c += 64) { float d = x[row * cols + c] - mean; sq += d * d; }
    for (int o = 16; o > 0; o >>= 1) sq += __shfl_down_sync(0xffffffff, sq, o);
    if (lane == 0) part[warp] = sq;
    __syncthreads();
    if (tid == 0) s_var = (part[0] + part[1]) / cols;
    __syncthreads();
    float rstd = rsqrtf(s_var + 1e-5f);
    for (int c = tid; c < cols; c += 64)
        y[row * cols + c] = (x[row * cols + c] - mean) * rstd * gamma[c] + beta[c];
}
