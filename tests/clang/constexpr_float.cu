// A floating-point constant at file scope (`constexpr float F8_MAX = 448.0f;`, mlx): device code
// reads the constant itself, not a variable of the host.
constexpr float LIMIT = 448.0f;
constexpr float SCALE = 1.0f / (LIMIT * 6.0f);

// each thread its own element: clean
__global__ void scaled(float *out, const float *in) {
    out[threadIdx.x] = in[threadIdx.x] * SCALE;
}

// every thread stores the one constant: the same value
__global__ void same_constant(float *out) {
    out[0] = LIMIT;
}

// the first thread stores another value than the others: a write-write race
__global__ void constant_or_not(float *out) {
    out[0] = threadIdx.x > 0 ? LIMIT : 1.0f;
}
