// What a build prepends to each Metal source before compiling it (read with --include): a macro,
// a type and an enum the kernels of metal_build_prelude.metal use without including anything.
#include <metal_stdlib>
using namespace metal;

#define CEIL_DIV(a, b) (((a) + (b) - 1) / (b))
typedef float elem_t;
typedef enum : int { keep = 0, clamp_low = 1 } edge_mode;
