// Kernels on a type the including file declares (app.cu, through work.cu).

// Each thread its own cell: clean.
__global__ void spread(Cell* c, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) {
        c[i].n = threadIdx.x + (c[i].v > 0.0f);
    }
}

// Another field of the next cell: clean with Cell's layout (n at byte 4, v at byte 0).
__global__ void other_field(Cell* c, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i + 1 < n) {
        c[i].n = (int)c[i + 1].v;
    }
}

// The same field of the next cell: a write-after-read between neighbours.
__global__ void same_field(Cell* c, int n) {
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i + 1 < n) {
        c[i].n = c[i + 1].n;
    }
}
