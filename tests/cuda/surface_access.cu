// Surface objects through the runtime API: a kernel writes a 2D surface with surf2Dwrite,
// another reads it back with surf2Dread, the host checks the array through cudaMemcpy2DFromArray;
// out-of-range reads under cudaBoundaryModeZero give 0 and under cudaBoundaryModeClamp the
// nearest element; uchar4 elements, a 3D surface and a layered one. The x coordinate of a
// surface access counts bytes (CUDA C++ Programming Guide, "Surface Functions").
#include "check.h"

#include <vector>

static void expect(const char* what, int index, long long got, long long want) {
  if (got != want) {
    std::fprintf(stderr, "%s [%d]: expected %lld, got %lld\n", what, index, want, got);
    ++failures;
  }
}

constexpr int width = 6, height = 5;

__global__ void write_2d(cudaSurfaceObject_t surface) {
  int x = threadIdx.x, y = threadIdx.y;
  surf2Dwrite(100 * y + x, surface, x * static_cast<int>(sizeof(int)), y);
}

__global__ void read_2d(cudaSurfaceObject_t surface, int* out) {
  int x = threadIdx.x, y = threadIdx.y;
  int value;
  surf2Dread(&value, surface, x * static_cast<int>(sizeof(int)), y);
  out[y * width + x] = value + 1;
}

// Reads at element columns -2 .. width + 1 of row `row`, under both boundary modes.
__global__ void read_outside(cudaSurfaceObject_t surface, int row, int* zero, int* clamp) {
  int column = static_cast<int>(threadIdx.x) - 2;
  zero[threadIdx.x] = surf2Dread<int>(surface, column * static_cast<int>(sizeof(int)), row,
                                      cudaBoundaryModeZero);
  clamp[threadIdx.x] = surf2Dread<int>(surface, column * static_cast<int>(sizeof(int)), row,
                                       cudaBoundaryModeClamp);
}

__global__ void swap_channels(cudaSurfaceObject_t surface) {
  int x = threadIdx.x;
  uchar4 value = surf2Dread<uchar4>(surface, x * 4, 0);
  surf2Dwrite(make_uchar4(value.w, value.z, value.y, value.x), surface, x * 4, 0);
}

__global__ void fill_3d(cudaSurfaceObject_t surface) {
  int x = threadIdx.x, y = threadIdx.y, z = threadIdx.z;
  surf3Dwrite(static_cast<float>(1000 * z + 10 * y + x), surface, x * 4, y, z);
}

__global__ void fill_layered(cudaSurfaceObject_t surface) {
  int x = threadIdx.x, y = threadIdx.y, layer = threadIdx.z;
  short value = static_cast<short>(-(300 * layer + 10 * y + x));
  surf2DLayeredwrite(value, surface, x * 2, y, layer);
}

static cudaSurfaceObject_t surface_of(cudaArray_t array) {
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaSurfaceObject_t surface = 0;
  CHECK(cudaCreateSurfaceObject(&surface, &resource));
  return surface;
}

static void check_2d() {
  cudaChannelFormatDesc format = cudaCreateChannelDesc<int>();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, width, height, cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t surface = surface_of(array);
  write_2d<<<1, dim3(width, height)>>>(surface);
  CHECK_LAUNCH();
  std::vector<int> host(width * height);
  CHECK(cudaMemcpy2DFromArray(host.data(), width * sizeof(int), array, 0, 0, width * sizeof(int),
                              height, cudaMemcpyDeviceToHost));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) expect("surf2Dwrite", y * width + x, host[y * width + x], 100 * y + x);

  int* out = nullptr;
  CHECK(cudaMalloc(&out, width * height * sizeof(int)));
  read_2d<<<1, dim3(width, height)>>>(surface, out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(host.data(), out, host.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) expect("surf2Dread", y * width + x, host[y * width + x], 100 * y + x + 1);

  const int probes = width + 4;
  int *zero = nullptr, *clamp = nullptr;
  CHECK(cudaMalloc(&zero, probes * sizeof(int)));
  CHECK(cudaMalloc(&clamp, probes * sizeof(int)));
  read_outside<<<1, probes>>>(surface, 3, zero, clamp);
  CHECK_LAUNCH();
  std::vector<int> zeros(probes), clamps(probes);
  CHECK(cudaMemcpy(zeros.data(), zero, probes * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(clamps.data(), clamp, probes * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < probes; ++i) {
    int column = i - 2;
    bool inside = column >= 0 && column < width;
    int nearest = column < 0 ? 0 : column >= width ? width - 1 : column;
    expect("cudaBoundaryModeZero", i, zeros[i], inside ? 300 + column : 0);
    expect("cudaBoundaryModeClamp", i, clamps[i], 300 + nearest);
  }
  CHECK(cudaDestroySurfaceObject(surface));
  for (int* pointer : {out, zero, clamp}) CHECK(cudaFree(pointer));
  CHECK(cudaFreeArray(array));
}

static void check_uchar4() {
  const int count = 8;
  cudaChannelFormatDesc format = cudaCreateChannelDesc<uchar4>();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, count, 1, cudaArraySurfaceLoadStore));
  std::vector<uchar4> values(count);
  for (int i = 0; i < count; ++i)
    values[i] = make_uchar4(static_cast<unsigned char>(i), static_cast<unsigned char>(2 * i),
                            static_cast<unsigned char>(200 + i), 255);
  CHECK(cudaMemcpy2DToArray(array, 0, 0, values.data(), count * 4, count * 4, 1, cudaMemcpyHostToDevice));
  cudaSurfaceObject_t surface = surface_of(array);
  swap_channels<<<1, count>>>(surface);
  CHECK_LAUNCH();
  std::vector<uchar4> back(count);
  CHECK(cudaMemcpy2DFromArray(back.data(), count * 4, array, 0, 0, count * 4, 1, cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i) {
    expect("uchar4 x", i, back[i].x, values[i].w);
    expect("uchar4 y", i, back[i].y, values[i].z);
    expect("uchar4 z", i, back[i].z, values[i].y);
    expect("uchar4 w", i, back[i].w, values[i].x);
  }
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(array));
}

static void check_3d_and_layered() {
  const int w = 4, h = 3, d = 2;
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t volume = nullptr;
  CHECK(cudaMalloc3DArray(&volume, &format, make_cudaExtent(w, h, d), cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t surface = surface_of(volume);
  fill_3d<<<1, dim3(w, h, d)>>>(surface);
  CHECK_LAUNCH();
  std::vector<float> floats(w * h * d);
  cudaMemcpy3DParms copy{};
  copy.srcArray = volume;
  copy.dstPtr = make_cudaPitchedPtr(floats.data(), w * sizeof(float), w, h);
  copy.extent = make_cudaExtent(w, h, d);
  copy.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&copy));
  for (int z = 0; z < d; ++z)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        expect("surf3Dwrite", (z * h + y) * w + x, static_cast<long long>(floats[(z * h + y) * w + x]),
               1000 * z + 10 * y + x);
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(volume));

  format = cudaCreateChannelDesc<short>();
  cudaArray_t layered = nullptr;
  CHECK(cudaMalloc3DArray(&layered, &format, make_cudaExtent(w, h, d),
                          cudaArrayLayered | cudaArraySurfaceLoadStore));
  surface = surface_of(layered);
  fill_layered<<<1, dim3(w, h, d)>>>(surface);
  CHECK_LAUNCH();
  std::vector<short> shorts(w * h * d);
  copy.srcArray = layered;
  copy.dstPtr = make_cudaPitchedPtr(shorts.data(), w * sizeof(short), w, h);
  CHECK(cudaMemcpy3D(&copy));
  for (int layer = 0; layer < d; ++layer)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        expect("surf2DLayeredwrite", (layer * h + y) * w + x, shorts[(layer * h + y) * w + x],
               -(300 * layer + 10 * y + x));
  CHECK(cudaDestroySurfaceObject(surface));
  CHECK(cudaFreeArray(layered));
}

int main() {
  check_2d();
  check_uchar4();
  check_3d_and_layered();
  if (failures) FAIL("%d surface results differ from the documented ones", failures);
  std::printf("surface_access: all results as documented\n");
  return 0;
}
