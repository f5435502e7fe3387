// Arithmetic on values of a template's index type: clang leaves each operator unresolved.
template <typename T>
struct Layout { typedef T index_t; enum { ROWS = 4 }; };

template <typename L>
__global__ void rows(float *out, const float *in) {
    using index_t = typename L::index_t;
    enum { PER_ROW = 32 };
    const index_t lane = threadIdx.x % PER_ROW;
    const index_t row = blockIdx.x * L::ROWS + threadIdx.x / PER_ROW;
    index_t c = row * PER_ROW + lane;
    c += 0;
    out[c] = -in[c] + 1.0f;
    index_t k = 0;
    k++;
    out[row * PER_ROW + (lane + k) % PER_ROW] = 2.0f;
}
