// kernelrace-args:
// atomic campaign seed 20261206 kernel 18, shrunk: missed (symbolic) on c0
#version 450
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 1, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 0) buffer Bdst { int dst[]; };
layout(std430, binding = 1) buffer Bsink { int sink[]; };
layout(std430, binding = 2) buffer Bc0 { int c0; };
void main() {
    int t0 = atomicAdd(c0, 1, gl_ScopeWorkgroup, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    dst[int(gl_WorkGroupID.x)] = t0;
}
