// kernelrace-args: --block-dim 64
// verdict: race
// race: p line 8: each particle's velocity is nudged toward the next particle's position, which that particle's thread is updating
struct Particle { float x, y, z, w; float vx, vy, vz, pad; };
__global__ void advance(Particle *p, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) {
        p[i].vx += (p[i + 1].x - p[i].x) * dt;   // BUG
        p[i].x += p[i].vx * dt;
    }
}
