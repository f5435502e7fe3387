// kernelrace-args: --grid-dim 2
// atomic campaign seed 20261206 kernel 4, shrunk: false alarm (concrete) on dst
@group(0) @binding(0) var<storage, read_write> dst: array<i32>;
@group(0) @binding(1) var<storage, read_write> sink: array<i32>;
var<workgroup> c0: atomic<i32>;
@compute @workgroup_size(1)
fn k(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
     @builtin(global_invocation_id) gid: vec3<u32>) {
    let t0 = atomicLoad(&c0);
    let t1 = atomicAdd(&c0, 1);
    dst[t0] = t1;
}
