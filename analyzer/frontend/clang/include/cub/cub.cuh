/* kernelrace's <cub/cub.cuh>: cub's block collectives BlockReduce and BlockScan, read by name
   (analyzer/frontend/clang/cub.py): each thread writes its slot of the temporary storage, a block
   barrier, each thread reads every slot; results are values the analysis does not interpret. The
   temporary storage holds BLOCK_DIM_X*Y*Z elements (at least cub's size). Other classes of cub are
   not declared: a kernel that uses one is unknown. */
#pragma once
namespace cub {
enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY, BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };
struct Sum { template <typename T> __host__ __device__ T operator()(const T &a, const T &b) const { return a + b; } };
struct Max { template <typename T> __host__ __device__ T operator()(const T &a, const T &b) const { return a < b ? b : a; } };
struct Min { template <typename T> __host__ __device__ T operator()(const T &a, const T &b) const { return b < a ? b : a; } };
template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
public:
    struct TempStorage { T __kr_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z]; };
    __device__ BlockReduce(TempStorage &temp_storage);
    __device__ T Sum(T input);
    __device__ T Sum(T input, int num_valid);
    template <typename Op> __device__ T Reduce(T input, Op op);
    template <typename Op> __device__ T Reduce(T input, Op op, int num_valid);
};
template <typename T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan {
public:
    struct TempStorage { T __kr_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z]; };
    __device__ BlockScan(TempStorage &temp_storage);
    __device__ void InclusiveSum(T input, T &output);
    __device__ void InclusiveSum(T input, T &output, T &block_aggregate);
    __device__ void ExclusiveSum(T input, T &output);
    __device__ void ExclusiveSum(T input, T &output, T &block_aggregate);
    template <typename Op> __device__ void InclusiveScan(T input, T &output, Op op);
    template <typename Op> __device__ void InclusiveScan(T input, T &output, Op op, T &block_aggregate);
    template <typename Op> __device__ void ExclusiveScan(T input, T &output, T initial_value, Op op);
    template <typename Op> __device__ void ExclusiveScan(T input, T &output, T initial_value, Op op,
                                                         T &block_aggregate);
};
}
