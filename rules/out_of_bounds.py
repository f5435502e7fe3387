"""out-of-bounds: two threads collide only through an access outside its buffer or array dimension.

## What it does
Finds a pair of accesses by two threads (at least one a write, nothing ordering them) that never
touch the same element while every index stays in bounds, but do once an index leaves them: a
subscript past a fixed-size dimension (`array<array<f32, 3>>`, `float a[16][17]`,
`threadgroup float t[32][33]`, a GLSL array of known length, TVM's declared buffer shapes), or a
negative offset into a buffer that starts where its binding does (OpenCL `__global` arguments,
Vulkan and WebGPU storage buffers, TVM's buffers, fixed-size arrays). The finding names the access
that leaves the bounds, the index it uses in the witness, the dimension it leaves, and the launch
and parameters the witness needs; it is reported instead of a race, once per pair of accesses.

A race that also exists in bounds stays a race (`write-after-read`, `read-after-write`,
`write-after-write`), with a witness in bounds. The shapes a TVM build's host code declares bound
the indices too, but as a stated assumption: a pair apart only by them is listed by `-v`, not
reported (an index outside needs a launch parameter, a page id, that the host never passes).

## Why is this bad?
An access outside its array is a bug of its own: undefined behaviour in C, CUDA, Metal and OpenCL,
and in WGSL or SPIR-V an access to another element than the one meant (or none). Two threads then
meet on memory that the program's indexing says is theirs alone, so a barrier is not the fix:
the index is. Reporting it as a race would send the reader after the wrong fix.

## Example
```wgsl
@group(0) @binding(0) var<storage, read_write> rows: array<array<f32, 3>>;

@compute @workgroup_size(4, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    rows[lid.y][lid.x] = f32(lid.x);   // lid.x == 3 writes rows[lid.y + 1][0]
}
```

Use instead:
```wgsl
@compute @workgroup_size(4, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    if (lid.x < 3u) {
        rows[lid.y][lid.x] = f32(lid.x);
    }
}
```

## References
- WGSL specification, "Out-of-Bounds Access"; C11 6.5.6 (pointer arithmetic past an array).
"""

from analyzer.analysis.kernel import KernelAnalysis

NAME = "out-of-bounds"
SEVERITY = "warning"
SUMMARY = "two threads collide only through an access outside its buffer or array dimension"


def check(analysis: KernelAnalysis):
    return analysis.out_of_bounds_findings(NAME, SEVERITY)
