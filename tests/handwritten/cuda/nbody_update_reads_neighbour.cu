// kernelrace-args: --block-dim 64
// verdict: race
// race: pos line 9: positions are updated in place while other threads read neighbours' positions for the spring force
__global__ void spring_step(float *pos, float *vel, float k, float dt, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        float f = k * (pos[i - 1] - 2.0f * pos[i] + pos[i + 1]);
        vel[i] += f * dt;
        pos[i] += vel[i] * dt;   // BUG
    }
}
