// A 16-lane vector built from four 4-lane ones and stored with vstore16.
__kernel void pack16(__global float *out, __global const float4 *parts) {
    const int i = get_global_id(0);
    float4 a = parts[4 * i], b = parts[4 * i + 1], c = parts[4 * i + 2], d = parts[4 * i + 3];
    vstore16(convert_float16((float16)(a, b, c, d)), i, out);
}

__kernel void pack16_overlap(__global float *out, __global const float4 *parts) {
    const int i = get_global_id(0);
    float4 a = parts[i];
    vstore16((float16)(a, a, a, a), 0, out + i * 8);
}
