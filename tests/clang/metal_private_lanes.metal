// A union of a vector and bytes in private memory, its lanes stored one by one (`w.pair.x = ...`),
// a range-for over a row of a constant table and over its rows by reference, and a vector lane
// chosen by a loop counter (`k[i % 3]`). `mix_rows` writes its own four bytes (clean);
// `mix_rows_overlap` writes a fifth, the next thread's first.
#include <metal_stdlib>
using namespace metal;

static constexpr constant uint shifts[2][3] = {{3, 7, 11}, {5, 9, 13}};

union word_bytes {
    uint2 pair;
    uchar4 bytes[2];
};

word_bytes scramble(uint seed, uint3 k) {
    word_bytes w;
    w.pair.x = seed;
    w.pair.y = seed ^ k.z;
    for (int i = 0; i < 2; i++) {
        for (auto s : shifts[i]) {
            w.pair.x += (w.pair.y << s) | k[i % 3];
        }
    }
    for (constant auto &row : shifts) {
        w.pair.y ^= row[2];
    }
    return w;
}

kernel void mix_rows(device uchar *out [[buffer(0)]], constant uint3 &k [[buffer(1)]],
                     uint t [[thread_position_in_grid]]) {
    word_bytes w = scramble(t, k);
    for (int i = 0; i < 4; i++) {
        out[4 * t + i] = w.bytes[0][i];   // clean: bytes 4t to 4t+3 are thread t's
    }
}

kernel void mix_rows_overlap(device uchar *out [[buffer(0)]], constant uint3 &k [[buffer(1)]],
                             uint t [[thread_position_in_grid]]) {
    word_bytes w = scramble(t, k);
    for (int i = 0; i <= 4; i++) {
        out[4 * t + i] = w.bytes[i / 4][i % 4];   // expect: write-after-write (byte 4t+4 is thread t+1's)
    }
}
