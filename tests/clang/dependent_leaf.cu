// A macro that reports a template instance with no code for this target: `__FUNCTION__` is
// dependent inside the template, and the reporting function is also named as a value.
#include <cstdio>
#define TEXT_(x) #x
#define TEXT(x) TEXT_(x)
static __device__ void no_code_for(const char *file, int line, const char *fn, int arch, const char *list) {
    printf("%s:%d: %s has no code for %d (built for %s)\n", file, line, fn, arch, list);
    __trap();
    (void) no_code_for;
}
#define NO_CODE_HERE no_code_for(__FILE__, __LINE__, __FUNCTION__, __CUDA_ARCH__, TEXT(__CUDA_ARCH_LIST__))

template <int width>
__global__ void fill_width(float *out, int n) {
    if (width > 64) {
        NO_CODE_HERE;
        return;
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = width;
}

template <int width>
void launch_fill(float *out, int n) { fill_width<width><<<n / 128, 128>>>(out, n); }
template void launch_fill<32>(float *, int);
template void launch_fill<128>(float *, int);
