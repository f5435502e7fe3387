// Two launches from host code with different block sizes: the kernel is checked under each.
__global__ void shift(float *x) {
    __shared__ float s[256];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 128) x[threadIdx.x] = s[threadIdx.x + 128];
}
int main() { float *d; shift<<<1, 128>>>(d); shift<<<dim3(1), dim3(256)>>>(d); }
