// Scalars passed by reference to constant memory, struct members and a template's bool parameter hold
// their type's values: a bool is 0 or 1, a ulong never negative. `spread` and `stride_rows` are clean
// only so read (odd = -1 or n = -1 would send every thread to element 0); `halve` races when flag is 1.
#include <metal_stdlib>
using namespace metal;

struct Shape {
  ulong rows;
  bool padded;
};

kernel void spread(device float *out [[buffer(0)]],
                   constant bool &odd [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
  out[i * (odd + 1)] = float(i);
}

kernel void stride_rows(device float *out [[buffer(0)]],
                        constant ulong &n [[buffer(1)]],
                        constant Shape &s [[buffer(2)]],
                        uint i [[thread_position_in_grid]]) {
  if (i < 1024)
    out[i * (n + 1) + i * (s.padded + 1) * 2048] = float(i);
}

kernel void halve(device float *out [[buffer(0)]],
                  constant bool &flag [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  out[flag ? i / 2 : i] = float(i);   // expect: write-after-write (threads 2k and 2k + 1 when flag holds)
}

// A template's `bool` non-type parameter, read in the pattern as a symbolic value, is 0 or 1 too:
// `spread_t` is clean, `halve_t` races when FWD holds.
template <bool FWD>
[[kernel]] void spread_t(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i * (FWD + 1)] = float(i);
}

template <bool FWD>
[[kernel]] void halve_t(device float *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[FWD ? i / 2 : i] = float(i);   // expect: write-after-write (threads 2k and 2k + 1 when FWD holds)
}
