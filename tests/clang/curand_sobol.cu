// Sobol quasi-random generators: curand_init reads the direction vectors it is given, and
// updates the thread's state; curand_uniform reads and updates it.
#include <curand_kernel.h>

__global__ void init_sobol(curandStateSobol32_t *states, curandDirectionVectors32_t *directions, unsigned int n) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(directions[0], tid * n, &states[tid]);
}

__global__ void draw(curandStateSobol64_t *states, double *out) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    curandStateSobol64_t local = states[tid];
    out[tid] = curand_uniform_double(&local);
    states[tid] = local;
}

// Thread 0 rewrites the direction vectors the others read in curand_init: a race.
__global__ void init_while_written(curandStateSobol32_t *states, unsigned int *directions) {
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0)
        directions[5] = 7;
    curand_init(directions, tid, &states[tid]);
}
