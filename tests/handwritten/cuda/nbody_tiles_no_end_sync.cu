// kernelrace-args: --block-dim 64
// verdict: race
// race: shPosition line 10: the barrier at the end of the tile loop is missing, so the next tile is stored while others read this one
__global__ void calculate_forces(const float4 *pos, float4 *acc, int numTiles) {
    __shared__ float4 shPosition[64];
    int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    float4 me = pos[gtid];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int tile = 0; tile < numTiles; tile++) {
        shPosition[threadIdx.x] = pos[tile * blockDim.x + threadIdx.x];   // BUG
        __syncthreads();
        for (int j = 0; j < 64; j++) {
            float4 o = shPosition[j];
            float dx = o.x - me.x, dy = o.y - me.y, dz = o.z - me.z;
            float inv = rsqrtf(dx * dx + dy * dy + dz * dz + 0.01f);
            float s = o.w * inv * inv * inv;
            ax += dx * s; ay += dy * s; az += dz * s;
        }
    }
    acc[gtid] = make_float4(ax, ay, az, 0.0f);
}
