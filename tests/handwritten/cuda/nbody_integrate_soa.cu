// kernelrace-args: --block-dim 64
// verdict: clean
// n-body integration step over a structure of arrays.
struct BodiesSoA { float *x, *y, *z, *vx, *vy, *vz; };
__global__ void integrate(BodiesSoA b, const float *ax, const float *ay, const float *az, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        b.vx[i] += ax[i] * dt; b.vy[i] += ay[i] * dt; b.vz[i] += az[i] * dt;
        b.x[i] += b.vx[i] * dt; b.y[i] += b.vy[i] * dt; b.z[i] += b.vz[i] * dt;
    }
}
