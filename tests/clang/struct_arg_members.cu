// Scalar members of struct arguments are parameters of their own: `a.o` and `b.o` of two arguments
// of one struct type, or `a.o` and an argument `o`, are different values.
struct Off { int o; };

__global__ void two_structs(float *x, Off a, Off b) {
    x[threadIdx.x + a.o] = 1.0f;
    x[threadIdx.x + b.o] = 2.0f;
}

__global__ void struct_and_scalar(float *x, Off a, int o) {
    x[threadIdx.x + a.o] = 1.0f;
    x[threadIdx.x + o] = 2.0f;
}

// One argument's member twice: the same value, each thread its own element.
__global__ void one_struct(float *x, Off a) {
    x[threadIdx.x + a.o] = 1.0f;
    x[threadIdx.x + a.o] = 2.0f;
}
