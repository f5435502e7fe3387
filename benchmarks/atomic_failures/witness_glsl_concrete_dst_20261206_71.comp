// kernelrace-args: --grid-dim 2
// atomic campaign seed 20261206 kernel 71, shrunk: witness (concrete) on dst
#version 450
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 2, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 0) buffer Bdst { int dst[]; };
layout(std430, binding = 1) buffer Bsink { int sink[]; };
layout(std430, binding = 2) buffer Bc0 { int c0; };
void main() {
    int t1 = atomicLoad(c0, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelaxed);
    if (t1 < 0) {
        dst[int(gl_LocalInvocationID.x)] = t1;
    }
    if (int(gl_LocalInvocationID.x) < 1) {
        dst[t1] = t1;
        sink[int(gl_GlobalInvocationID.x)] = dst[int(gl_LocalInvocationID.x)];
    }
}
