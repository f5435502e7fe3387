// Every thread stores g0[24 + threadIdx.y] + 2.0f to one element of g2, once per iteration. The
// threads write g0[threadIdx.y] only: with fewer than 25 rows no write reaches the element they
// load, so every load of it, in any thread and any iteration, reads one value, and the stores are a
// benign write-write. Two rows load two elements, which may hold two values.
__global__ void gather_first(float *g0, float *g2, int P0, int P1) {
    g0[threadIdx.y] = 1.0f;
    for (int r = 0; r < P1; r++)
        g2[2 * P0 + P1] = g0[24 + threadIdx.y] + 2.0f;
}
