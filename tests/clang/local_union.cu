// A local union, read through another member than the one written (a node of packed byte triples
// in an anonymous struct, a float read as its bits): it lives in private memory, each member at its
// offset, so a member read is the bytes another member wrote.
struct Node {
    union {
        uint4 data;
        struct {
            uchar3 parent;
            uchar3 start;
            unsigned char pad[10];
        };
    };
};

struct Bits {
    union {
        unsigned int u;
        float f;
    };
};

// equal start bytes in two nodes make two threads write one slot
__global__ void node_starts(float *out, const uint4 *nodes) {
    Node n;
    n.data = nodes[threadIdx.x];
    out[n.start.x] = (float)threadIdx.x;
}

// equal bits in two floats: one slot
__global__ void float_bits(float *out, const float *in) {
    Bits b;
    b.f = in[threadIdx.x];
    out[b.u & 1023] = (float)threadIdx.x;
}

// the member written is the member read: each thread its own slot
__global__ void own_bits(float *out) {
    Bits b;
    b.u = threadIdx.x;
    out[b.u] = (float)threadIdx.x;
}

// anonymous unions nested in an anonymous union (a node's children): `c` is bytes 3 to 5 of `data`
struct Kids {
    union {
        uint4 data;
        union {
            struct { uchar3 a; uchar3 c; char leaf; };
            struct { uchar3 id; unsigned char pad[12]; };
        };
    };
};

__global__ void child_edges(float *out, const uint4 *nodes) {
    Kids k;
    k.data = nodes[threadIdx.x];
    uchar3 next = k.c;
    out[next.x] = (float)threadIdx.x;
}
