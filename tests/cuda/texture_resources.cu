// Texture objects over every kind of resource through the runtime API: tex1Dfetch on linear
// memory (out-of-range indices read 0), a 3D array, a layered 2D array, and the levels of a
// mipmapped array read with tex2DLod. Expected values follow the CUDA C++ Programming Guide's
// "Texture Fetching" appendix, computed here on the host.
#include "check.h"

#include <cmath>
#include <vector>

static void expect(const char* what, int index, float got, float want) {
  if (got != want) {
    std::fprintf(stderr, "%s [%d]: expected %.9g, got %.9g\n", what, index, want, got);
    ++failures;
  }
}

__global__ void fetch_1d(cudaTextureObject_t floats, cudaTextureObject_t integers,
                         const int* indices, float* float_out, int* int_out, int count) {
  int i = threadIdx.x;
  if (i < count) {
    float_out[i] = tex1Dfetch<float>(floats, indices[i]);
    int_out[i] = tex1Dfetch<int>(integers, indices[i]);
  }
}

__global__ void sample_3d(cudaTextureObject_t texture, const float4* points, float* out, int count) {
  int i = threadIdx.x;
  if (i < count) out[i] = tex3D<float>(texture, points[i].x, points[i].y, points[i].z);
}

__global__ void sample_layered(cudaTextureObject_t texture, const float4* points, float* out,
                               int count) {
  int i = threadIdx.x;
  if (i < count)
    out[i] = tex2DLayered<float>(texture, points[i].x, points[i].y, static_cast<int>(points[i].z));
}

__global__ void sample_lod(cudaTextureObject_t texture, const float4* points, float* out, int count) {
  int i = threadIdx.x;
  if (i < count) out[i] = tex2DLod<float>(texture, points[i].x, points[i].y, points[i].z);
}

template <class T>
static T* to_device(const std::vector<T>& host) {
  T* device = nullptr;
  CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

template <class T>
static std::vector<T> to_host(const T* device, size_t count) {
  std::vector<T> host(count);
  CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

static cudaTextureObject_t texture_of(const cudaResourceDesc& resource, cudaTextureFilterMode filter,
                                      bool normalized = false,
                                      cudaTextureReadMode read_mode = cudaReadModeElementType) {
  cudaTextureDesc description{};
  for (auto& mode : description.addressMode) mode = cudaAddressModeClamp;
  description.filterMode = filter;
  description.normalizedCoords = normalized;
  description.readMode = read_mode;
  cudaTextureObject_t texture = 0;
  CHECK(cudaCreateTextureObject(&texture, &resource, &description, nullptr));
  return texture;
}

static void check_linear_memory() {
  const int count = 64;
  std::vector<float> floats(count);
  std::vector<int> integers(count);
  for (int i = 0; i < count; ++i) {
    floats[i] = 0.25f * i - 3.0f;
    integers[i] = i * i - 1000;
  }
  float* float_memory = to_device(floats);
  int* int_memory = to_device(integers);
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeLinear;
  resource.res.linear.devPtr = float_memory;
  resource.res.linear.desc = cudaCreateChannelDesc<float>();
  resource.res.linear.sizeInBytes = count * sizeof(float);
  cudaTextureObject_t float_texture = texture_of(resource, cudaFilterModePoint);
  resource.res.linear.devPtr = int_memory;
  resource.res.linear.desc = cudaCreateChannelDesc<int>();
  cudaTextureObject_t int_texture = texture_of(resource, cudaFilterModePoint);

  std::vector<int> indices = {0, 1, 17, 63, 64, 1000, -1, 32};
  int* device_indices = to_device(indices);
  float* float_out = nullptr;
  int* int_out = nullptr;
  CHECK(cudaMalloc(&float_out, indices.size() * sizeof(float)));
  CHECK(cudaMalloc(&int_out, indices.size() * sizeof(int)));
  fetch_1d<<<1, static_cast<unsigned>(indices.size())>>>(float_texture, int_texture, device_indices,
                                                         float_out, int_out,
                                                         static_cast<int>(indices.size()));
  CHECK_LAUNCH();
  std::vector<float> got_floats = to_host(float_out, indices.size());
  std::vector<int> got_ints = to_host(int_out, indices.size());
  for (size_t i = 0; i < indices.size(); ++i) {
    bool inside = indices[i] >= 0 && indices[i] < count;
    expect("tex1Dfetch<float>", static_cast<int>(i), got_floats[i], inside ? floats[indices[i]] : 0.0f);
    expect("tex1Dfetch<int>", static_cast<int>(i), static_cast<float>(got_ints[i]),
           inside ? static_cast<float>(integers[indices[i]]) : 0.0f);
  }
  CHECK(cudaDestroyTextureObject(float_texture));
  CHECK(cudaDestroyTextureObject(int_texture));
  for (void* pointer : {static_cast<void*>(float_memory), static_cast<void*>(int_memory),
                        static_cast<void*>(device_indices), static_cast<void*>(float_out),
                        static_cast<void*>(int_out)})
    CHECK(cudaFree(pointer));
}

static float value_3d(int x, int y, int z) { return static_cast<float>(100 * z + 10 * y + x); }

static void check_3d() {
  const int width = 5, height = 3, depth = 4;
  std::vector<float> values(width * height * depth);
  for (int z = 0; z < depth; ++z)
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) values[(z * height + y) * width + x] = value_3d(x, y, z);
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  CHECK(cudaMalloc3DArray(&array, &format, make_cudaExtent(width, height, depth)));
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(values.data(), width * sizeof(float), width, height);
  copy.dstArray = array;
  copy.extent = make_cudaExtent(width, height, depth);
  copy.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&copy));
  // Reading it back through a 3D copy gives the same values.
  std::vector<float> back(values.size());
  cudaMemcpy3DParms read{};
  read.srcArray = array;
  read.dstPtr = make_cudaPitchedPtr(back.data(), width * sizeof(float), width, height);
  read.extent = copy.extent;
  read.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&read));
  for (size_t i = 0; i < values.size(); ++i) expect("3D array round trip", static_cast<int>(i), back[i], values[i]);

  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  std::vector<float4> points = {{0.5f, 0.5f, 0.5f, 0}, {4.5f, 2.5f, 3.5f, 0}, {2.5f, 1.5f, 2.0f, 0},
                                {1.75f, 0.5f, 0.5f, 0}, {9.0f, -1.0f, 1.5f, 0}};
  float4* device_points = to_device(points);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, points.size() * sizeof(float)));
  cudaTextureObject_t point_texture = texture_of(resource, cudaFilterModePoint);
  sample_3d<<<1, static_cast<unsigned>(points.size())>>>(point_texture, device_points, out,
                                                         static_cast<int>(points.size()));
  CHECK_LAUNCH();
  std::vector<float> got = to_host(out, points.size());
  auto clamped = [](float v, int n) {
    int i = static_cast<int>(std::floor(v));
    return i < 0 ? 0 : i >= n ? n - 1 : i;
  };
  for (size_t i = 0; i < points.size(); ++i)
    expect("tex3D point", static_cast<int>(i), got[i],
           value_3d(clamped(points[i].x, width), clamped(points[i].y, height),
                    clamped(points[i].z, depth)));
  cudaTextureObject_t linear_texture = texture_of(resource, cudaFilterModeLinear);
  sample_3d<<<1, static_cast<unsigned>(points.size())>>>(linear_texture, device_points, out,
                                                         static_cast<int>(points.size()));
  CHECK_LAUNCH();
  got = to_host(out, points.size());
  // Texel centres read the texel; z = 2.0 lies halfway between slices 1 and 2; x = 1.75 a
  // quarter of the way from texel 1 to texel 2.
  expect("tex3D linear", 0, got[0], value_3d(0, 0, 0));
  expect("tex3D linear", 1, got[1], value_3d(4, 2, 3));
  expect("tex3D linear", 2, got[2], 0.5f * value_3d(2, 1, 1) + 0.5f * value_3d(2, 1, 2));
  expect("tex3D linear", 3, got[3], 0.75f * value_3d(1, 0, 0) + 0.25f * value_3d(2, 0, 0));
  expect("tex3D linear", 4, got[4], value_3d(4, 0, 1));
  CHECK(cudaDestroyTextureObject(point_texture));
  CHECK(cudaDestroyTextureObject(linear_texture));
  CHECK(cudaFree(device_points));
  CHECK(cudaFree(out));
  CHECK(cudaFreeArray(array));
}

static void check_layered() {
  const int width = 4, height = 2, layers = 3;
  std::vector<float> values(width * height * layers);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 1.5f;
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaArray_t array = nullptr;
  CHECK(cudaMalloc3DArray(&array, &format, make_cudaExtent(width, height, layers), cudaArrayLayered));
  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(values.data(), width * sizeof(float), width, height);
  copy.dstArray = array;
  copy.extent = make_cudaExtent(width, height, layers);
  copy.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&copy));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaTextureObject_t texture = texture_of(resource, cudaFilterModeLinear);
  // Filtering stays inside a layer: (1.0, 0.5) is halfway between texels 0 and 1 of row 0.
  std::vector<float4> points = {{0.5f, 0.5f, 0, 0}, {3.5f, 1.5f, 2, 0}, {1.0f, 0.5f, 1, 0},
                                {2.5f, 1.0f, 2, 0}};
  float4* device_points = to_device(points);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, points.size() * sizeof(float)));
  sample_layered<<<1, static_cast<unsigned>(points.size())>>>(texture, device_points, out,
                                                              static_cast<int>(points.size()));
  CHECK_LAUNCH();
  std::vector<float> got = to_host(out, points.size());
  auto at = [&](int x, int y, int layer) { return values[(layer * height + y) * width + x]; };
  expect("tex2DLayered", 0, got[0], at(0, 0, 0));
  expect("tex2DLayered", 1, got[1], at(3, 1, 2));
  expect("tex2DLayered", 2, got[2], 0.5f * at(0, 0, 1) + 0.5f * at(1, 0, 1));
  expect("tex2DLayered", 3, got[3], 0.5f * at(2, 0, 2) + 0.5f * at(2, 1, 2));
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFree(device_points));
  CHECK(cudaFree(out));
  CHECK(cudaFreeArray(array));
}

// Each level of an 8 x 8 mipmapped array holds one value, 10 (level + 1), so a sample shows
// which levels it read: tex2DLod picks the nearest level with point mipmap filtering and blends
// the two nearest with linear mipmap filtering.
static void check_mipmaps() {
  const int size = 8, levels = 4;
  cudaChannelFormatDesc format = cudaCreateChannelDesc<float>();
  cudaMipmappedArray_t mipmapped = nullptr;
  CHECK(cudaMallocMipmappedArray(&mipmapped, &format, make_cudaExtent(size, size, 0), levels));
  for (int level = 0; level < levels; ++level) {
    cudaArray_t array = nullptr;
    CHECK(cudaGetMipmappedArrayLevel(&array, mipmapped, level));
    int extent = size >> level;
    cudaChannelFormatDesc level_format;
    cudaExtent level_extent;
    unsigned flags = 0;
    CHECK(cudaArrayGetInfo(&level_format, &level_extent, &flags, array));
    if (static_cast<int>(level_extent.width) != extent || static_cast<int>(level_extent.height) != extent)
      FAIL("level %d is %zu x %zu, expected %d x %d", level, level_extent.width,
           level_extent.height, extent, extent);
    std::vector<float> values(extent * extent, 10.0f * (level + 1));
    CHECK(cudaMemcpy2DToArray(array, 0, 0, values.data(), extent * sizeof(float),
                              extent * sizeof(float), extent, cudaMemcpyHostToDevice));
  }
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeMipmappedArray;
  resource.res.mipmap.mipmap = mipmapped;
  std::vector<float4> points = {{0.5f, 0.5f, 0.0f, 0}, {0.3f, 0.7f, 1.0f, 0}, {0.5f, 0.5f, 1.25f, 0},
                                {0.5f, 0.5f, 2.75f, 0}, {0.5f, 0.5f, 3.0f, 0}, {0.5f, 0.5f, 7.0f, 0},
                                {0.5f, 0.5f, 1.5f, 0}, {0.5f, 0.5f, -1.0f, 0}};
  float4* device_points = to_device(points);
  float* out = nullptr;
  CHECK(cudaMalloc(&out, points.size() * sizeof(float)));
  for (cudaTextureFilterMode mipmap_filter : {cudaFilterModePoint, cudaFilterModeLinear}) {
    cudaTextureDesc description{};
    for (auto& mode : description.addressMode) mode = cudaAddressModeClamp;
    description.filterMode = cudaFilterModeLinear;
    description.mipmapFilterMode = mipmap_filter;
    description.normalizedCoords = 1;
    description.maxMipmapLevelClamp = levels - 1;
    cudaTextureObject_t texture = 0;
    CHECK(cudaCreateTextureObject(&texture, &resource, &description, nullptr));
    sample_lod<<<1, static_cast<unsigned>(points.size())>>>(texture, device_points, out,
                                                            static_cast<int>(points.size()));
    CHECK_LAUNCH();
    std::vector<float> got = to_host(out, points.size());
    for (size_t i = 0; i < points.size(); ++i) {
      float lod = std::fmin(std::fmax(points[i].z, 0.0f), levels - 1.0f);
      float want;
      if (mipmap_filter == cudaFilterModePoint) {
        want = 10.0f * (std::floor(lod + 0.5f) + 1);
      } else {
        float lower = std::floor(lod), fraction = lod - lower;
        want = (1 - fraction) * 10.0f * (lower + 1) + fraction * 10.0f * (lower + 2);
      }
      expect(mipmap_filter == cudaFilterModePoint ? "tex2DLod, point mipmap filter"
                                                  : "tex2DLod, linear mipmap filter",
             static_cast<int>(i), got[i], want);
    }
    CHECK(cudaDestroyTextureObject(texture));
  }
  CHECK(cudaFree(device_points));
  CHECK(cudaFree(out));
  CHECK(cudaFreeMipmappedArray(mipmapped));
}

int main() {
  check_linear_memory();
  check_3d();
  check_layered();
  check_mipmaps();
  if (failures) FAIL("%d texture results differ from the documented ones", failures);
  std::printf("texture_resources: all results as documented\n");
  return 0;
}
