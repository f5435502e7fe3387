// Inline PTX read instruction by instruction (analyzer/frontend/clang/asm.py): cp.async copies
// into shared memory, ldmatrix reads, mma on registers, ld/st through a macro, and what stays unknown.
#include <cstdint>

#define ASYNC_COPY_16(dst, src) \
    asm volatile("cp.async.cg.shared.global [%0], [%1], %2;\n" :: "r"(dst), "l"(src), "n"(16))
#define ASYNC_COMMIT() asm volatile("cp.async.commit_group;\n" ::)
#define ASYNC_WAIT(n) asm volatile("cp.async.wait_group %0;\n" :: "n"(n))
#define STORE_F32(p, v) asm volatile("st.global.f32 [%0], %1;" :: "l"(p), "f"(v))

// Each thread copies four floats into the tile, waits, and after the barrier reads its right
// neighbour's float: clean. The ldmatrix row read and the mma on registers are clean too.
__global__ void tile_copy(const float *in, float *out) {
    __shared__ float tile[512];
    uint32_t base = __cvta_generic_to_shared(tile);
    uint32_t dst = base + threadIdx.x * 4 * sizeof(float);
    ASYNC_COPY_16(dst, &in[blockIdx.x * 512 + threadIdx.x * 4]);
    ASYNC_COMMIT();
    ASYNC_WAIT(0);
    __syncthreads();
    uint32_t a0, a1, a2, a3;
    uint32_t row = base + (threadIdx.x % 32) * 16;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(row));
    float c0 = 0.0f, c1 = 0.0f;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1}, {%2, %3}, {%4}, {%0, %1};\n"
                 : "+f"(c0), "+f"(c1) : "r"(a0), "r"(a1), "r"(a2));
    out[blockIdx.x * 128 + threadIdx.x] = tile[(threadIdx.x * 4 + 5) % 512] + c0;
}

// The same copy read by a neighbour with no barrier after the wait: a race on `tile`.
__global__ void copy_no_barrier(const float *in, float *out) {
    __shared__ float tile[512];
    uint32_t dst = __cvta_generic_to_shared(&tile[threadIdx.x * 4]);
    ASYNC_COPY_16(dst, &in[threadIdx.x * 4]);
    ASYNC_COMMIT();
    ASYNC_WAIT(0);
    out[threadIdx.x] = tile[(threadIdx.x * 4 + 5) % 512];
}

// Copies never waited for: when they land is not known, so the kernel is unknown.
__global__ void copy_never_waited(const float *in, float *out) {
    __shared__ float tile[512];
    uint32_t dst = __cvta_generic_to_shared(&tile[threadIdx.x * 4]);
    ASYNC_COPY_16(dst, &in[threadIdx.x * 4]);
    __syncthreads();
    out[threadIdx.x] = tile[threadIdx.x];
}

// A store inside a macro'd asm: every thread writes out[0], a race.
__global__ void asm_store_all(float *out) {
    STORE_F32(out, 1.0f);
}

// A store of each thread's own element through asm: clean.
__global__ void asm_store_own(float *out) {
    STORE_F32(out + blockIdx.x * blockDim.x + threadIdx.x, 2.0f);
}

// An atomic in asm is not modelled: unknown, naming the instruction.
__global__ void asm_atomic(unsigned *counter) {
    asm volatile("red.global.add.u32 [%0], %1;" :: "l"(counter), "r"(1u) : "memory");
}


// ldmatrix reads the 16-byte row at its address: rows other threads wrote with no barrier between.
__global__ void ldmatrix_no_barrier(const float *in, float *out) {
    __shared__ float tile[512];
    tile[threadIdx.x] = in[threadIdx.x];
    uint32_t a0;
    uint32_t row = __cvta_generic_to_shared(tile) + (threadIdx.x % 32) * 16;
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(a0) : "r"(row));
    out[threadIdx.x] = (float)a0;
}

// A read-write operand on shared memory (`"+f"(tile[t + 1])`) is read, then written: thread t
// touches the slot thread t + 1 wrote with no barrier, a race; on a local register, nothing.
__global__ void asm_accumulate_neighbour(const float *in, float *out) {
    __shared__ float tile[129];
    float acc = in[threadIdx.x];
    tile[threadIdx.x] = acc;
    asm("add.f32 %0, %0, %1;" : "+f"(acc) : "f"(1.0f));
    asm("add.f32 %0, %0, %1;" : "+f"(tile[threadIdx.x + 1]) : "f"(acc));
    out[threadIdx.x] = acc;
}
