// cub's block collectives on their temporary storage in shared memory: each thread's input written to
// the storage, a block barrier, every slot read; the result a value not interpreted. Checked with
// 128 threads a block.
#include <cub/cub.cuh>

struct Pair { float sum; int count; };
struct PairAdd {
    __device__ Pair operator()(const Pair &a, const Pair &b) const { return Pair{a.sum + b.sum, a.count + b.count}; }
};

// one reduction, the result stored by thread 0: clean
__global__ void block_sum(const float *in, float *out) {
    typedef cub::BlockReduce<float, 128> Reduce;
    __shared__ typename Reduce::TempStorage temp;
    float total = Reduce(temp).Sum(in[blockIdx.x * 128 + threadIdx.x]);
    if (threadIdx.x == 0)
        out[blockIdx.x] = total;
}

// two reductions on one storage with a barrier between them: clean
template <int THREADS>
__global__ void two_sums(const float *in, float *out) {
    typedef cub::BlockReduce<float, THREADS> Reduce;
    __shared__ typename Reduce::TempStorage temp;
    float x = in[blockIdx.x * THREADS + threadIdx.x];
    float a = Reduce(temp).Sum(x);
    __syncthreads();
    float b = Reduce(temp).Reduce(x * x, cub::Max());
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = a;
        out[2 * blockIdx.x + 1] = b;
    }
}

// the same without the barrier: the second collective writes the storage the first still reads
__global__ void reused_storage(const float *in, float *out) {
    typedef cub::BlockReduce<float, 128> Reduce;
    __shared__ Reduce::TempStorage temp;
    float x = in[blockIdx.x * 128 + threadIdx.x];
    float a = Reduce(temp).Sum(x);
    float b = Reduce(temp).Sum(x * x);   // expect: write-after-read
    if (threadIdx.x == 0)
        out[blockIdx.x] = a + b;
}

// a scan of a struct with the user's operator, its output in a local struct
__global__ void pair_scan(const float *in, float *out) {
    typedef cub::BlockScan<Pair, 128> Scan;
    __shared__ typename Scan::TempStorage temp;
    Pair mine{in[blockIdx.x * 128 + threadIdx.x], 1};
    Pair prefix;
    Scan(temp).InclusiveScan(mine, prefix, PairAdd());
    out[blockIdx.x * 128 + threadIdx.x] = prefix.sum / prefix.count;
}

// a collective only some threads reach: its barrier is divergent
__global__ void half_the_block(const float *in, float *out) {
    typedef cub::BlockReduce<float, 128> Reduce;
    __shared__ typename Reduce::TempStorage temp;
    if (threadIdx.x < 64)
        out[blockIdx.x] = Reduce(temp).Sum(in[threadIdx.x]);   // expect: barrier divergence
}

void launch(const float *in, float *out) {
    two_sums<128><<<16, 128>>>(in, out);
}
