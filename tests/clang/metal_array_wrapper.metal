// A private array wrapped in a struct whose operator[] is overloaded for each address space of its
// object, return type included (`device T& operator[](uint) device` repeats the `thread` one, as
// SPIR-V-to-Metal translators write it): C++ cannot overload on either, so each repeat is dropped and
// the first read. `counts` keeps per-thread counters in the wrapper (clean); `counts_shared_slot`
// writes them where the next thread writes too.
#include <metal_stdlib>
using namespace metal;

template <typename T, uint N>
struct fixed_array {
    T items[N];
    thread T &operator[](uint k) thread { return items[k]; }
    const thread T &operator[](uint k) const thread { return items[k]; }
    device T &operator[](uint k) device { return items[k]; }
    const device T &operator[](uint k) const device { return items[k]; }
    threadgroup T &operator[](uint k) threadgroup { return items[k]; }
    const constant T &operator[](uint k) const constant { return items[k]; }
};

kernel void counts(device const uint *keys [[buffer(0)]], device uint *out [[buffer(1)]],
                   uint t [[thread_position_in_grid]], uint n [[threads_per_grid]]) {
    fixed_array<uint, 4> bins;
    for (uint k = 0; k < 4; k++) bins[k] = 0;
    bins[keys[t] % 4]++;
    for (uint k = 0; k < 4; k++) out[k * n + t] = bins[k];   // clean: column t is thread t's
}

kernel void counts_shared_slot(device const uint *keys [[buffer(0)]], device uint *out [[buffer(1)]],
                               uint t [[thread_position_in_grid]]) {
    fixed_array<uint, 4> bins;
    for (uint k = 0; k < 4; k++) bins[k] = 0;
    bins[keys[t] % 4]++;
    for (uint k = 0; k < 4; k++) out[t * 3 + k] = bins[k];   // expect: write-after-write (t*3+3 is t+1's first)
}
