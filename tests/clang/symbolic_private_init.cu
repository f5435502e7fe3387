// A private array sized by a template parameter, zero-initialised, in a kernel no host code launches.
template <int READS>
__global__ void row_sums(const float *in, float *out, int n) {
    float acc[READS] = {0};
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * READS;
    for (int r = 0; r < READS; ++r)
        if (base + r < n) acc[r] += in[base + r];
    float total = 0.0f;
    for (int r = 0; r < READS; ++r) total += acc[r];
    out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}
