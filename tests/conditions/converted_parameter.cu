// Every thread stores 0.0f to g[0], and the threads of one column store (float)p to g[2 * p + z].
// The two stores meet at g[0] where 2 * p + z == 0: for p == 0 both store zero (a benign
// write-write); for p < 0 (thread z == -2p) (float)p is not zero. `scale` is a double: its
// conversion holds no integer, and a store of it against 0.0f races wherever the two meet.
__global__ void fill(float *g, float *h, int p, double scale) {
    g[0] = 0.0f;
    g[2 * p + threadIdx.z] = (float)p;
    h[0] = 0.0f;
    h[2 * p + threadIdx.z] = (float)scale;
}
