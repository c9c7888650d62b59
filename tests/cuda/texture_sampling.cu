// 2D texture objects through the runtime API: point and linear filtering, every address mode,
// normalised coordinates, the normalised-float read mode of 8- and 16-bit integers, half
// floats, pitched linear memory and tex2Dgather. Expected values follow the CUDA C++
// Programming Guide's "Texture Fetching" appendix, computed here on the host: point sampling
// reads T[floor(x)], linear filtering (1 - a) T[i] + a T[i + 1] with i = floor(x - 0.5) and
// a = frac(x - 0.5) held in 9-bit fixed point with 8 fractional bits (rounded to nearest). In
// 2D each texel's weight, the product of its two axis weights, is itself rounded to 8
// fractional bits: an NVIDIA H200 returns exactly that when a border colour makes the texels
// differ non-linearly.
// Every mismatch is reported before the program fails, so one run shows them all.
#include "check.h"

#include <cmath>
#include <cuda_fp16.h>
#include <vector>

static void expect(const char* what, int index, float got, float want) {
  bool same = got == want || (std::isnan(got) && std::isnan(want));
  if (!same) {
    std::fprintf(stderr, "%s [%d]: expected %.9g, got %.9g\n", what, index, want, got);
    ++failures;
  }
}

constexpr int width = 4, height = 4;

static float texel(int x, int y) { return static_cast<float>(16 * y + x); }

// Address modes applied to an integer texel index, as the appendix defines them.
static int wrap(int i, int n) { return ((i % n) + n) % n; }
static int mirror(int i, int n) {
  int folded = ((i % (2 * n)) + 2 * n) % (2 * n);
  return folded < n ? folded : 2 * n - 1 - folded;
}
static int clamp_index(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

static int resolve(int i, int n, cudaTextureAddressMode mode) {
  switch (mode) {
    case cudaAddressModeWrap: return wrap(i, n);
    case cudaAddressModeMirror: return mirror(i, n);
    case cudaAddressModeBorder: return i >= 0 && i < n ? i : -1;
    default: return clamp_index(i, n);
  }
}

// In 256ths.
static int fixed_point_weight(float fraction) { return static_cast<int>(std::nearbyint(fraction * 256.0f)); }
static float product_weight(int a, int b) { return static_cast<float>((a * b + 128) / 256) / 256.0f; }

static float reference(float x, float y, cudaTextureFilterMode filter, cudaTextureAddressMode mode,
                       float border) {
  auto fetch = [&](int i, int j) {
    int xi = resolve(i, width, mode), yj = resolve(j, height, mode);
    return xi < 0 || yj < 0 ? border : texel(xi, yj);
  };
  if (filter == cudaFilterModePoint)
    return fetch(static_cast<int>(std::floor(x)), static_cast<int>(std::floor(y)));
  float xb = x - 0.5f, yb = y - 0.5f;
  int i = static_cast<int>(std::floor(xb)), j = static_cast<int>(std::floor(yb));
  int a = fixed_point_weight(xb - std::floor(xb)), b = fixed_point_weight(yb - std::floor(yb));
  return product_weight(256 - a, 256 - b) * fetch(i, j) + product_weight(a, 256 - b) * fetch(i + 1, j) +
         product_weight(256 - a, b) * fetch(i, j + 1) + product_weight(a, b) * fetch(i + 1, j + 1);
}

__global__ void sample_2d(cudaTextureObject_t texture, const float2* coordinates, float4* out,
                          int count) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index < count) out[index] = tex2D<float4>(texture, coordinates[index].x, coordinates[index].y);
}

__global__ void sample_uchar4(cudaTextureObject_t texture, const float2* coordinates, uchar4* out,
                              int count) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  if (index < count) out[index] = tex2D<uchar4>(texture, coordinates[index].x, coordinates[index].y);
}

__global__ void gather_2d(cudaTextureObject_t texture, float x, float y, float4* out) {
  *out = tex2Dgather<float4>(texture, x, y, 0);
}

template <class T>
static T* to_device(const std::vector<T>& host) {
  T* device = nullptr;
  CHECK(cudaMalloc(&device, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

template <class Element>
static cudaArray_t array_2d(const std::vector<Element>& values, int array_width, int array_height,
                            unsigned flags = 0) {
  cudaChannelFormatDesc format = cudaCreateChannelDesc<Element>();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, array_width, array_height, flags));
  CHECK(cudaMemcpy2DToArray(array, 0, 0, values.data(), array_width * sizeof(Element),
                            array_width * sizeof(Element), array_height, cudaMemcpyHostToDevice));
  return array;
}

static cudaTextureObject_t texture_of(cudaArray_t array, cudaTextureFilterMode filter,
                                      cudaTextureAddressMode mode, bool normalized,
                                      cudaTextureReadMode read_mode, float border = 0) {
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypeArray;
  resource.res.array.array = array;
  cudaTextureDesc description{};
  description.addressMode[0] = description.addressMode[1] = mode;
  description.filterMode = filter;
  description.normalizedCoords = normalized;
  description.readMode = read_mode;
  for (float& channel : description.borderColor) channel = border;
  cudaTextureObject_t texture = 0;
  CHECK(cudaCreateTextureObject(&texture, &resource, &description, nullptr));
  return texture;
}

static std::vector<float4> run_2d(cudaTextureObject_t texture, const std::vector<float2>& points) {
  float2* coordinates = to_device(points);
  float4* out = nullptr;
  CHECK(cudaMalloc(&out, points.size() * sizeof(float4)));
  sample_2d<<<1, static_cast<unsigned>(points.size())>>>(texture, coordinates, out,
                                                         static_cast<int>(points.size()));
  CHECK_LAUNCH();
  std::vector<float4> result(points.size());
  CHECK(cudaMemcpy(result.data(), out, result.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(coordinates));
  CHECK(cudaFree(out));
  return result;
}

static void check_float_modes() {
  std::vector<float> values(width * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) values[y * width + x] = texel(x, y);
  cudaArray_t array = array_2d(values, width, height);
  // Unnormalised coordinates: texel centres, fractions the weights hold exactly, fractions they
  // round, and points outside the texture on every side.
  std::vector<float2> unnormalized = {
      {0.5f, 0.5f},  {1.5f, 2.5f},   {1.75f, 1.5f}, {2.0f, 2.0f},  {3.25f, 0.625f},
      {0.3f, 2.2f},  {2.9f, 1.1f},   {-1.0f, 1.5f}, {5.5f, 3.9f},  {1.5f, -2.0f},
      {4.0f, 4.0f},  {3.99f, 0.01f}, {0.0f, 0.0f},  {2.51f, 1.49f}};
  const cudaTextureFilterMode filters[] = {cudaFilterModePoint, cudaFilterModeLinear};
  for (cudaTextureFilterMode filter : filters) {
    for (cudaTextureAddressMode mode : {cudaAddressModeClamp, cudaAddressModeBorder}) {
      float border = mode == cudaAddressModeBorder ? 100.0f : 0.0f;
      cudaTextureObject_t texture =
          texture_of(array, filter, mode, false, cudaReadModeElementType, border);
      std::vector<float4> got = run_2d(texture, unnormalized);
      char what[96];
      std::snprintf(what, sizeof what, "unnormalised, %s filtering, address mode %d",
                    filter == cudaFilterModePoint ? "point" : "linear", static_cast<int>(mode));
      for (size_t i = 0; i < got.size(); ++i) {
        expect(what, static_cast<int>(i), got[i].x,
               reference(unnormalized[i].x, unnormalized[i].y, filter, mode, border));
        // Channels a one-channel format lacks read as 0, alpha too (as an H200 does).
        if (mode == cudaAddressModeClamp) {
          expect("missing channel y", static_cast<int>(i), got[i].y, 0.0f);
          expect("missing channel w", static_cast<int>(i), got[i].w, 0.0f);
        }
      }
      CHECK(cudaDestroyTextureObject(texture));
    }
  }
  // Normalised coordinates with every address mode; u = x / width.
  std::vector<float2> normalized = {{0.125f, 0.375f}, {1.125f, 0.625f}, {-0.125f, 0.875f},
                                    {0.0f, 0.0f},     {1.0f, 1.0f},     {2.3f, -1.7f},
                                    {0.5f, 0.5f},     {-0.6f, 1.45f}};
  for (cudaTextureFilterMode filter : filters) {
    for (cudaTextureAddressMode mode : {cudaAddressModeWrap, cudaAddressModeClamp,
                                        cudaAddressModeMirror, cudaAddressModeBorder}) {
      cudaTextureObject_t texture = texture_of(array, filter, mode, true, cudaReadModeElementType);
      std::vector<float4> got = run_2d(texture, normalized);
      char what[96];
      std::snprintf(what, sizeof what, "normalised, %s filtering, address mode %d",
                    filter == cudaFilterModePoint ? "point" : "linear", static_cast<int>(mode));
      for (size_t i = 0; i < got.size(); ++i)
        expect(what, static_cast<int>(i), got[i].x,
               reference(normalized[i].x * width, normalized[i].y * height, filter, mode, 0.0f));
      CHECK(cudaDestroyTextureObject(texture));
    }
  }
  CHECK(cudaFreeArray(array));
}

// 8-bit channels: normalised-float reads give v / 255 (unsigned) and max(v / 127, -1)
// (signed); element-type reads give the integers back.
static void check_integer_formats() {
  std::vector<uchar4> values(width * height);
  for (int i = 0; i < width * height; ++i)
    values[i] = make_uchar4(static_cast<unsigned char>(17 * i), 255, 0, static_cast<unsigned char>(i));
  cudaArray_t array = array_2d(values, width, height);
  std::vector<float2> points = {{0.5f, 0.5f}, {2.5f, 1.5f}, {3.5f, 3.5f}, {1.0f, 0.5f}};
  cudaTextureObject_t texture = texture_of(array, cudaFilterModePoint, cudaAddressModeClamp, false,
                                           cudaReadModeNormalizedFloat);
  std::vector<float4> got = run_2d(texture, points);
  for (size_t i = 0; i < points.size(); ++i) {
    const uchar4& want = values[static_cast<int>(points[i].y) * width + static_cast<int>(points[i].x)];
    expect("uchar4 normalised x", static_cast<int>(i), got[i].x, want.x / 255.0f);
    expect("uchar4 normalised y", static_cast<int>(i), got[i].y, 1.0f);
    expect("uchar4 normalised z", static_cast<int>(i), got[i].z, 0.0f);
    expect("uchar4 normalised w", static_cast<int>(i), got[i].w, want.w / 255.0f);
  }
  CHECK(cudaDestroyTextureObject(texture));
  // Linear filtering of normalised values: halfway between 0 / 255 and 17 / 255 in x. An H200
  // filters 8-bit values at a lower precision (0.0333409645 here), so only closeness is checked.
  texture = texture_of(array, cudaFilterModeLinear, cudaAddressModeClamp, false,
                       cudaReadModeNormalizedFloat);
  got = run_2d(texture, {{1.0f, 0.5f}});
  float halfway = 0.5f * (0.0f / 255.0f) + 0.5f * (17.0f / 255.0f);
  expect("uchar4 normalised, linear", 0, std::fabs(got[0].x - halfway) <= 1e-4f ? halfway : got[0].x,
         halfway);
  CHECK(cudaDestroyTextureObject(texture));

  texture = texture_of(array, cudaFilterModePoint, cudaAddressModeClamp, false,
                       cudaReadModeElementType);
  float2* coordinates = to_device(points);
  uchar4* out = nullptr;
  CHECK(cudaMalloc(&out, points.size() * sizeof(uchar4)));
  sample_uchar4<<<1, static_cast<unsigned>(points.size())>>>(texture, coordinates, out,
                                                             static_cast<int>(points.size()));
  CHECK_LAUNCH();
  std::vector<uchar4> raw(points.size());
  CHECK(cudaMemcpy(raw.data(), out, raw.size() * sizeof(uchar4), cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < points.size(); ++i) {
    const uchar4& want = values[static_cast<int>(points[i].y) * width + static_cast<int>(points[i].x)];
    expect("uchar4 element type x", static_cast<int>(i), raw[i].x, want.x);
    expect("uchar4 element type w", static_cast<int>(i), raw[i].w, want.w);
  }
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFree(coordinates));
  CHECK(cudaFree(out));
  CHECK(cudaFreeArray(array));

  std::vector<char> signed_values = {-128, -127, -64, 0, 1, 64, 126, 127};
  cudaArray_t signed_array = array_2d(signed_values, 8, 1);
  texture = texture_of(signed_array, cudaFilterModePoint, cudaAddressModeClamp, false,
                       cudaReadModeNormalizedFloat);
  std::vector<float2> row;
  for (int x = 0; x < 8; ++x) row.push_back({x + 0.5f, 0.5f});
  got = run_2d(texture, row);
  for (int x = 0; x < 8; ++x)
    expect("signed char normalised", x, got[x].x, std::fmax(signed_values[x] / 127.0f, -1.0f));
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFreeArray(signed_array));

  std::vector<unsigned short> shorts = {0, 1, 32768, 65535};
  cudaArray_t short_array = array_2d(shorts, 4, 1);
  texture = texture_of(short_array, cudaFilterModePoint, cudaAddressModeClamp, false,
                       cudaReadModeNormalizedFloat);
  got = run_2d(texture, {{0.5f, 0.5f}, {1.5f, 0.5f}, {2.5f, 0.5f}, {3.5f, 0.5f}});
  for (int x = 0; x < 4; ++x) expect("unsigned short normalised", x, got[x].x, shorts[x] / 65535.0f);
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFreeArray(short_array));
}

// Half floats read as floats, and filter like them.
static void check_half() {
  const float values[] = {0.5f, -2.0f, 65504.0f, 0.000060975552f};  // the last is subnormal
  std::vector<__half> halves;
  for (float value : values) halves.push_back(__float2half(value));
  cudaChannelFormatDesc format = cudaCreateChannelDescHalf();
  cudaArray_t array = nullptr;
  CHECK(cudaMallocArray(&array, &format, 4, 1));
  CHECK(cudaMemcpy2DToArray(array, 0, 0, halves.data(), 4 * sizeof(__half), 4 * sizeof(__half), 1,
                            cudaMemcpyHostToDevice));
  cudaTextureObject_t texture = texture_of(array, cudaFilterModePoint, cudaAddressModeClamp, false,
                                           cudaReadModeElementType);
  std::vector<float4> got = run_2d(texture, {{0.5f, 0.5f}, {1.5f, 0.5f}, {2.5f, 0.5f}, {3.5f, 0.5f}});
  for (int x = 0; x < 4; ++x) expect("half", x, got[x].x, values[x]);
  CHECK(cudaDestroyTextureObject(texture));
  texture = texture_of(array, cudaFilterModeLinear, cudaAddressModeClamp, false,
                       cudaReadModeElementType);
  got = run_2d(texture, {{1.0f, 0.5f}});
  expect("half, linear", 0, got[0].x, 0.5f * 0.5f + 0.5f * -2.0f);
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFreeArray(array));
}

// A texture over pitched linear memory (cudaResourceTypePitch2D) samples like an array.
static void check_pitched() {
  size_t pitch = 0;
  float* memory = nullptr;
  CHECK(cudaMallocPitch(reinterpret_cast<void**>(&memory), &pitch, width * sizeof(float), height));
  std::vector<float> values(width * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) values[y * width + x] = texel(x, y);
  CHECK(cudaMemcpy2D(memory, pitch, values.data(), width * sizeof(float), width * sizeof(float),
                     height, cudaMemcpyHostToDevice));
  cudaResourceDesc resource{};
  resource.resType = cudaResourceTypePitch2D;
  resource.res.pitch2D.devPtr = memory;
  resource.res.pitch2D.desc = cudaCreateChannelDesc<float>();
  resource.res.pitch2D.width = width;
  resource.res.pitch2D.height = height;
  resource.res.pitch2D.pitchInBytes = pitch;
  cudaTextureDesc description{};
  description.filterMode = cudaFilterModeLinear;
  description.addressMode[0] = description.addressMode[1] = cudaAddressModeClamp;
  cudaTextureObject_t texture = 0;
  CHECK(cudaCreateTextureObject(&texture, &resource, &description, nullptr));
  std::vector<float2> points = {{1.5f, 2.5f}, {1.75f, 1.25f}, {3.9f, 0.2f}};
  std::vector<float4> got = run_2d(texture, points);
  for (size_t i = 0; i < points.size(); ++i)
    expect("pitch2D, linear", static_cast<int>(i), got[i].x,
           reference(points[i].x, points[i].y, cudaFilterModeLinear, cudaAddressModeClamp, 0));
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFree(memory));
}

// tex2Dgather (PTX tld4): channel 0 of the four texels bilinear filtering would read, in the
// order (i, j+1), (i+1, j+1), (i+1, j), (i, j).
static void check_gather() {
  std::vector<float> values(width * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) values[y * width + x] = texel(x, y);
  cudaArray_t array = array_2d(values, width, height, cudaArrayTextureGather);
  cudaTextureObject_t texture = texture_of(array, cudaFilterModePoint, cudaAddressModeClamp, false,
                                           cudaReadModeElementType);
  float4* out = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float4)));
  gather_2d<<<1, 1>>>(texture, 2.2f, 1.7f, out);
  CHECK_LAUNCH();
  float4 got;
  CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
  expect("gather", 0, got.x, texel(1, 2));
  expect("gather", 1, got.y, texel(2, 2));
  expect("gather", 2, got.z, texel(2, 1));
  expect("gather", 3, got.w, texel(1, 1));
  CHECK(cudaDestroyTextureObject(texture));
  CHECK(cudaFree(out));
  CHECK(cudaFreeArray(array));
}

int main() {
  check_float_modes();
  check_integer_formats();
  check_half();
  check_pitched();
  check_gather();
  if (failures) FAIL("%d texture results differ from the documented ones", failures);
  std::printf("texture_sampling: all results as documented\n");
  return 0;
}
