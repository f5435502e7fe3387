// A local union read through another member than the one written (a node of packed byte triples,
// a float read as its bits): the member read is the other's bytes, which the lowering does not
// model, so the kernel is unknown (it was clean: the member read was a variable never set).
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
    out[n.start.x] = 1.0f;
}

__global__ void float_bits(float *out, const float *in) {
    Bits b;
    b.f = in[threadIdx.x];
    out[b.u & 1023] = 1.0f;
}

// no union: analysed
__global__ void plain(float *out, const float *in) {
    out[threadIdx.x] = in[threadIdx.x];
}
