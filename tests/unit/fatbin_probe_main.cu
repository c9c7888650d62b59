// Linked by nvcc into a real executable whose .nvFatBinSegment and .nv_fatbin sections the
// fatbin reader's tests read as data; it is never run.
#include "fatbin_probe.cu"

int main() {
  xcuda_fatbin_probe<<<1, 1>>>(nullptr, 0);
  return 0;
}
