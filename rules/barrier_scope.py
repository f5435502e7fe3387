"""barrier-scope: a barrier orders the threads but not the memory their accesses use.

## What it does
Finds two accesses by different threads of a block to the same address (at least one a write)
that a barrier keeps apart in execution, where no barrier between them orders the memory the
accesses use: Metal's `threadgroup_barrier(mem_flags::mem_threadgroup)` between device-memory
accesses, `mem_flags::mem_none` between threadgroup accesses, or a Vulkan/SPIR-V
`OpControlBarrier` whose memory semantics lack UniformMemory (storage buffers) or WorkgroupMemory
(workgroup memory), as GLSL's `barrier()` alone does for buffers. The same pair checker as the
race rules decides the pair, with a witness: it is concurrent when only the barriers that order
its memory space count, and ordered when every barrier does. CUDA's `__syncthreads()` orders
shared and global memory, so CUDA kernels have nothing to report here.

## Why is this bad?
The barrier makes every thread wait for the others, but without the memory flag nothing makes a
store before it visible to the threads after it, or keeps a load before it from seeing a store
issued after it. Whether the code works depends on the GPU's caches and on the compiler, which may
also move the accesses across a barrier that does not order their memory.

## Example
```metal
float s = S[row];                                   // every thread of the row reads S[row]
threadgroup_barrier(mem_flags::mem_threadgroup);    // orders threadgroup memory only
if (tid.x == 0) S[row] = s * 2.0f;                  // device memory: not ordered after the reads
```

Use instead:
```metal
float s = S[row];
threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
if (tid.x == 0) S[row] = s * 2.0f;
```

## References
- Metal Shading Language Specification, "Threadgroup and SIMD-group Synchronization Functions"
  (`threadgroup_barrier` and its `mem_flags`).
- SPIR-V Specification, `OpControlBarrier` and Memory Semantics (UniformMemory 0x40,
  WorkgroupMemory 0x100); GLSL `memoryBarrierBuffer()`, `memoryBarrierShared()`.
- TVM `merge_state_inplace` fix (apache/tvm#20449), whose barrier TVM emits for Metal as
  `threadgroup_barrier(mem_flags::mem_threadgroup)`.
"""

from analyzer.analysis.kernel import KernelAnalysis

NAME = "barrier-scope"
SEVERITY = "warning"
SUMMARY = "a barrier separates two threads' accesses in execution but does not order their memory space"


def check(analysis: KernelAnalysis):
    return analysis.barrier_scope_findings(NAME, SEVERITY)
