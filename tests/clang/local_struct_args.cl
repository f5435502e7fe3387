// A local struct passed by value to a helper, and by pointer for the helper to fill (as rodinia's
// cfd passes its FLOAT3 momentum and velocity).
typedef struct { float x, y, z; } vec3;

inline void scale_into(float d, vec3 m, vec3 *v) { v->x = m.x / d; v->y = m.y / d; v->z = m.z / d; }
inline float norm2(vec3 v) { return v.x * v.x + v.y * v.y + v.z * v.z; }

// Clean: each work-item reads its three components and writes its own element.
kernel void speeds(global const float *var, global float *out, int n) {
    int i = get_global_id(0);
    vec3 m;
    m.x = var[i]; m.y = var[i + n]; m.z = var[i + 2 * n];
    vec3 v;
    scale_into(var[i + 3 * n], m, &v);
    out[i] = norm2(v);
}

// A race: the element written is the struct's value, the same for every work-item when n is.
kernel void speeds_at_norm(global const float *var, global float *out, int n) {
    vec3 m;
    m.x = n; m.y = 0.0f; m.z = 0.0f;
    vec3 v;
    scale_into(1.0f, m, &v);
    out[(int)v.x] = get_global_id(0);
}
