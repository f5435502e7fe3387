// kernelrace-args: --block-dim 64
// verdict: clean
// Array of structs: each thread updates its own particle.
struct Particle { float x, y, z, w; float vx, vy, vz, pad; };
__global__ void advance(Particle *p, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        p[i].z += p[i].vz * dt;
    }
}
