// A struct of vector members (a ray of two float3s) copied by value: read from memory, passed to a
// device function, given a lane, written back; a free operator whose first operand is a member.
struct Ray {
    float3 o;   // origin
    float3 d;   // direction
};

inline __device__ float3 operator+(float3 a, float3 b) { return make_float3(a.x + b.x, a.y + b.y, a.z + b.z); }
inline __device__ float3 operator*(float3 a, float s) { return make_float3(a.x * s, a.y * s, a.z * s); }

__device__ float reach(Ray r, float t) {
    float3 p = r.o + r.d * t;
    return p.x + p.y + p.z;
}

// each thread reads its ray and writes its own result: clean
__global__ void march(const Ray *rays, float *out, int n, float t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Ray r = rays[i];
    out[i] = reach(r, t);
}

// every thread writes the same slot: a write-write race
__global__ void march_one_slot(const Ray *rays, float *out, float t) {
    Ray r = rays[threadIdx.x];
    out[0] = reach(r, t);
}

// a ray built here, one lane set, stored whole into the thread's own element: clean
__global__ void store_rays(Ray *rays, float t) {
    Ray r;
    r.o = make_float3(0.0f, 0.0f, 0.0f);
    r.d = make_float3(1.0f, 1.0f, 1.0f);
    r.o.x = t;
    r.d.y += t;
    rays[threadIdx.x] = r;
}

// reads its ray and stores it into the next thread's: each 24-byte ray is read and written by two threads
__global__ void shift_rays(Ray *rays) {
    Ray r = rays[threadIdx.x];
    __syncwarp();
    rays[threadIdx.x + 1] = r;
}
