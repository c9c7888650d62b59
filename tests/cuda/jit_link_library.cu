// Device code for tests/cuda/jit_link.cpp's archive input (CU_JIT_INPUT_LIBRARY), built with
// `nvcc -rdc=true -lib`: the `scale` and `offset` the linked kernel declares `.extern`, as
// jit_link.cpp's library_ptx defines them (scale(x) = 3 * x + 2).
static __device__ unsigned local_value = 2;

extern "C" __device__ int scale(int x) { return 3 * x + static_cast<int>(local_value); }

extern "C" __device__ unsigned offset = 7;
