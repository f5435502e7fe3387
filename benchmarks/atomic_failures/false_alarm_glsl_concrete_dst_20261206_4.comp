// kernelrace-args: --grid-dim 2
// atomic campaign seed 20261206 kernel 4, shrunk: false alarm (concrete) on dst
#version 450
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 0) buffer Bdst { int dst[]; };
layout(std430, binding = 1) buffer Bsink { int sink[]; };
shared int c0;
void main() {
    int t0 = atomicLoad(c0, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);
    int t1 = atomicAdd(c0, 1);
    dst[t0] = t1;
}
