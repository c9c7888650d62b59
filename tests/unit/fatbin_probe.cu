// Compiled only to device code: the fatbin reader's tests look for this kernel's name in the
// PTX they extract from the fatbins nvcc builds out of this file.
extern "C" __global__ void xcuda_fatbin_probe(float* out, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = i * 2.0f;
}
