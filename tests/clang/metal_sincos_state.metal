// A member function that updates its object's state (`this->state = ...` on a local struct) and
// sincos, whose cosine is stored through its reference: `waves` keeps both in registers and writes
// its own element (clean); `shifted` steps its walker once, so thread t also writes element t + 1.
#include <metal_stdlib>
using namespace metal;

struct Walker {
    uint state;
    METAL_FUNC float next() {
        uint old = this->state;
        this->state = old * 1664525u + 1013904223u;
        return float(old) * 2.3283064e-10f;
    }
    METAL_FUNC void step() { state = state + 1; }
};

kernel void waves(device float *out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
    Walker w;
    w.state = tid;
    float c;
    float s = sincos(w.next() * 6.2831853f, c);
    out[tid] = s + c + w.next();
}

kernel void shifted(device float *out [[buffer(0)]], uint tid [[thread_position_in_grid]]) {
    Walker w;
    w.state = tid;
    w.step();
    out[tid] = 1.0f;
    out[w.state] = 2.0f;   // expect: write-after-write (thread tid + 1's element)
}
