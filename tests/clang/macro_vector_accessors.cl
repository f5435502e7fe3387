// Vector components spelled in a macro's definition, on a vector the invocation passes (llama.cpp's
// `dequantizeBlockAccum_ns_sgbroadcast_1_hi(totalSum, ..., regB)` doing `y.s0`, `total_sums.s1 +=`):
// the accessor is read from the definition, in order. STORE_AT_X writes out[ij.s0]: one element per
// work-item, clean; STORE_AT_Y writes out[ij.s1], 0 for every work-item: a race. LANES_SUM adds
// lanes into another vector's lanes (a store to a component), whose result picks the element.
#define STORE_AT_X(p, v) p[v.s0] = v.s0;
#define STORE_AT_Y(p, v) p[v.s1] = v.s0;
// Two literals of one expansion are two values: a write of 1.0f then 2.0f to one element races.
#define TWO_VALUES(p) p[0] = 1.0f; p[0] = 2.0f;
#define LANES_SUM(acc, v) acc.s1 += v.s0; acc.s0 += v.s1;

__kernel void at_x(__global int *out) {
    int2 ij = (int2)(get_global_id(0), 0);
    STORE_AT_X(out, ij)
}

__kernel void at_y(__global int *out) {
    int2 ij = (int2)(get_global_id(0), 0);
    STORE_AT_Y(out, ij)
}

__kernel void summed(__global float *out) {
    int2 acc = (int2)(0, 0);
    int2 ij = (int2)(get_global_id(0), 0);
    LANES_SUM(acc, ij)
    out[acc.s1] = 1.0f;      // acc.s1 = ij.s0: one element per work-item
    out[acc.s0 + 4096] = 2.0f;   // acc.s0 = ij.s1 = 0: a race
}

__kernel void two_values(__global float *out) {
    if (get_local_id(0) < 2) {
        TWO_VALUES(out)
    }
}

// as_ushort8 of a uint4 has eight lanes (it was read as its four-lane operand: '.s5' refused).
#define HIGH_HALF(v) as_ushort8(v).s5
__kernel void halves(__global const uint4 *in, __global ushort *out) {
    out[get_global_id(0)] = HIGH_HALF(in[get_global_id(0)]);
}

// Defined twice: which definition holds is not read, the kernel unknown, naming the accessor.
#ifdef FIRST_LANE
#define PICK(v) v.s0
#else
#define PICK(v) v.s1
#endif
__kernel void picked(__global float *out) {
    int2 ij = (int2)(get_global_id(0), 0);
    out[PICK(ij)] = 1.0f;
}
