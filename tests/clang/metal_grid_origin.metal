// [[grid_origin]] (the same for every thread, the host's value), [[grid_size]] and
// [[thread_execution_width]]: a kernel reading them is analysed.
#include <metal_stdlib>
using namespace metal;

kernel void shifted(device float *out [[buffer(0)]],
                    uint origin [[grid_origin]],
                    uint size [[grid_size]],
                    uint width [[thread_execution_width]],
                    uint gid [[thread_position_in_grid]]) {
    if (gid < size)
        out[gid - origin] = float(width);
    out[origin] = 1.0f;   // expect: write-after-write (every thread writes element origin)
}
