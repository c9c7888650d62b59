// The other translation unit of separate_compilation.cu.
__device__ int offset = 7;
__device__ int scale(int x) { return 3 * x; }
