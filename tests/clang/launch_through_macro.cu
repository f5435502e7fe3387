// Host launches written through macros another header defines: each launch's block is read.
#include "launch_macro/launch.h"

// Clean under the 64 threads LAUNCH_ROWS gives.
__global__ void fold(float *x) {
    x[threadIdx.x % 64] = threadIdx.x;
}

// The same store under LAUNCH_WIDE's 128 threads: thread t and t + 64 write one slot, a race.
__global__ void fold_wide(float *x) {
    x[threadIdx.x % 64] = threadIdx.x;
}

void run(float *d) {
    LAUNCH_ROWS(fold, 4, d);
    LAUNCH_WIDE(fold_wide, d);
}
