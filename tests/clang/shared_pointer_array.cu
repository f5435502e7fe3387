// An array of pointers in shared memory is one a block: every thread stores its own pointer into
// rows[0] (a race on rows itself) and writes through whichever it reads back. Read as one a thread,
// each would write its own a[threadIdx.x]: clean, wrongly.
__global__ void shared_rows(float* a) {
  __shared__ float* rows[1];
  rows[0] = a + threadIdx.x;
  rows[0][0] = 1.0f + threadIdx.x;
}
