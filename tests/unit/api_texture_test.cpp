// CUDA arrays, texture objects and surface objects through the Driver API: descriptors round
// trip, copies in and out of arrays, rejected arguments with their documented error codes, and
// hand-written PTX using tex, txq, suld, sust, sured, suq and istypep. Expected values come from
// the CUDA Driver API and PTX ISA documentation, and istypep's and a misaligned sured's from an
// H200.
#define XCUDA_EXPORTED_NAMES_ONLY
#include "xcuda/cuda.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace {

class TextureApi : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuCtxSetCurrent(context_), CUDA_SUCCESS);
  }
  void TearDown() override { EXPECT_EQ(cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS); }

  CUcontext context_ = nullptr;
};

CUDA_ARRAY3D_DESCRIPTOR shape(size_t width, size_t height, size_t depth, CUarray_format format,
                              unsigned channels, unsigned flags = 0) {
  return CUDA_ARRAY3D_DESCRIPTOR{width, height, depth, format, channels, flags};
}

TEST_F(TextureApi, ArraysDescribeThemselves) {
  const CUDA_ARRAY3D_DESCRIPTOR shapes[] = {
      shape(17, 0, 0, CU_AD_FORMAT_FLOAT, 1),
      shape(9, 5, 0, CU_AD_FORMAT_UNSIGNED_INT8, 4),
      shape(4, 3, 2, CU_AD_FORMAT_HALF, 2),
      shape(8, 0, 3, CU_AD_FORMAT_SIGNED_INT16, 1, CUDA_ARRAY3D_LAYERED),
      shape(8, 8, 6, CU_AD_FORMAT_UNSIGNED_INT32, 1, CUDA_ARRAY3D_CUBEMAP),
      shape(5, 5, 0, CU_AD_FORMAT_SIGNED_INT32, 2, CUDA_ARRAY3D_SURFACE_LDST),
  };
  for (const CUDA_ARRAY3D_DESCRIPTOR& wanted : shapes) {
    CUarray array = nullptr;
    ASSERT_EQ(cuArray3DCreate_v2(&array, &wanted), CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR got{};
    ASSERT_EQ(cuArray3DGetDescriptor_v2(&got, array), CUDA_SUCCESS);
    EXPECT_EQ(got.Width, wanted.Width);
    EXPECT_EQ(got.Height, wanted.Height);
    EXPECT_EQ(got.Depth, wanted.Depth);
    EXPECT_EQ(got.Format, wanted.Format);
    EXPECT_EQ(got.NumChannels, wanted.NumChannels);
    EXPECT_EQ(got.Flags, wanted.Flags);
    EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
  }
  CUDA_ARRAY_DESCRIPTOR two_d{33, 7, CU_AD_FORMAT_UNSIGNED_INT16, 2};
  CUarray array = nullptr;
  ASSERT_EQ(cuArrayCreate_v2(&array, &two_d), CUDA_SUCCESS);
  CUDA_ARRAY_DESCRIPTOR got{};
  ASSERT_EQ(cuArrayGetDescriptor_v2(&got, array), CUDA_SUCCESS);
  EXPECT_EQ(got.Width, 33u);
  EXPECT_EQ(got.Height, 7u);
  EXPECT_EQ(got.Format, CU_AD_FORMAT_UNSIGNED_INT16);
  EXPECT_EQ(got.NumChannels, 2u);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(TextureApi, BadArrayDescriptorsAreRejected) {
  CUarray array = nullptr;
  auto create = [&](CUDA_ARRAY3D_DESCRIPTOR descriptor) {
    return cuArray3DCreate_v2(&array, &descriptor);
  };
  EXPECT_EQ(create(shape(0, 4, 0, CU_AD_FORMAT_FLOAT, 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(shape(4, 4, 0, CU_AD_FORMAT_FLOAT, 3)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(shape(4, 0, 3, CU_AD_FORMAT_FLOAT, 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(shape(4, 4, 0, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_LAYERED)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(shape(8, 4, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP)),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(shape(1 << 18, 0, 0, CU_AD_FORMAT_FLOAT, 1)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(create(shape(4, 4, 0, CU_AD_FORMAT_BC1_UNORM, 1)), CUDA_ERROR_NOT_SUPPORTED);
  CUDA_ARRAY3D_DESCRIPTOR good = shape(4, 4, 0, CU_AD_FORMAT_FLOAT, 1);
  EXPECT_EQ(cuArray3DCreate_v2(nullptr, &good), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuArray3DCreate_v2(&array, nullptr), CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY3D_DESCRIPTOR got{};
  int not_an_array = 0;
  EXPECT_EQ(cuArray3DGetDescriptor_v2(&got, reinterpret_cast<CUarray>(&not_an_array)),
            CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(TextureApi, LinearCopiesMoveBytesThroughArrays) {
  CUDA_ARRAY3D_DESCRIPTOR descriptor = shape(6, 4, 0, CU_AD_FORMAT_UNSIGNED_INT32, 1);
  CUarray first = nullptr, second = nullptr;
  ASSERT_EQ(cuArray3DCreate_v2(&first, &descriptor), CUDA_SUCCESS);
  ASSERT_EQ(cuArray3DCreate_v2(&second, &descriptor), CUDA_SUCCESS);
  std::vector<uint32_t> values(24);
  std::iota(values.begin(), values.end(), 1000u);
  ASSERT_EQ(cuMemcpyHtoA_v2(first, 0, values.data(), 96), CUDA_SUCCESS);
  // Array to array at byte offsets, then out through device memory.
  ASSERT_EQ(cuMemcpyAtoA_v2(second, 8, first, 4, 40), CUDA_SUCCESS);
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, 96), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyAtoD_v2(device, second, 0, 96), CUDA_SUCCESS);
  std::vector<uint32_t> back(24, 7);
  ASSERT_EQ(cuMemcpyDtoH_v2(back.data(), device, 96), CUDA_SUCCESS);
  for (size_t i = 0; i < 24; ++i) {
    uint32_t want = i >= 2 && i < 12 ? values[i - 1] : 0;  // arrays start zeroed
    EXPECT_EQ(back[i], want) << "element " << i;
  }
  ASSERT_EQ(cuMemcpyDtoA_v2(first, 92, device + 8, 4), CUDA_SUCCESS);
  uint32_t last = 0;
  ASSERT_EQ(cuMemcpyAtoH_v2(&last, first, 92, 4), CUDA_SUCCESS);
  EXPECT_EQ(last, values[1]);
  EXPECT_EQ(cuMemcpyAtoH_v2(&last, first, 93, 4), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemcpyHtoA_v2(first, 0, values.data(), 97), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(first), CUDA_SUCCESS);
  EXPECT_EQ(cuArrayDestroy(second), CUDA_SUCCESS);
}

TEST_F(TextureApi, RectangularCopiesUseTheArraysOwnLayout) {
  CUDA_ARRAY3D_DESCRIPTOR descriptor = shape(5, 4, 3, CU_AD_FORMAT_UNSIGNED_INT8, 2);
  CUarray array = nullptr;
  ASSERT_EQ(cuArray3DCreate_v2(&array, &descriptor), CUDA_SUCCESS);
  constexpr size_t pitch = 16, row = 10, rows = 4, slices = 3;
  std::vector<unsigned char> host(pitch * rows * slices);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 13 + 1);
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_HOST;
  copy.srcHost = host.data();
  copy.srcPitch = pitch;
  copy.srcHeight = rows;
  copy.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  copy.dstArray = array;
  copy.WidthInBytes = row;
  copy.Height = rows;
  copy.Depth = slices;
  ASSERT_EQ(cuMemcpy3D_v2(&copy), CUDA_SUCCESS);
  // A 2D copy reads the first slice: here 4 bytes at byte 2 of rows 2 and 3.
  CUDA_MEMCPY2D block{};
  block.srcMemoryType = CU_MEMORYTYPE_ARRAY;
  block.srcArray = array;
  block.srcXInBytes = 2;
  block.srcY = 2;
  std::vector<unsigned char> back(4 * 2);
  block.dstMemoryType = CU_MEMORYTYPE_HOST;
  block.dstHost = back.data();
  block.dstPitch = 4;
  block.WidthInBytes = 4;
  block.Height = 2;
  ASSERT_EQ(cuMemcpy2D_v2(&block), CUDA_SUCCESS);
  for (size_t y = 0; y < 2; ++y)
    for (size_t x = 0; x < 4; ++x) EXPECT_EQ(back[y * 4 + x], host[(2 + y) * pitch + 2 + x]);
  // cuMemcpyAtoH counts its offset through the elements in order: rows of 10 bytes, slices of
  // 4 rows.
  std::vector<unsigned char> flat(row * rows * slices);
  ASSERT_EQ(cuMemcpyAtoH_v2(flat.data(), array, 0, flat.size()), CUDA_SUCCESS);
  for (size_t z = 0; z < slices; ++z)
    for (size_t y = 0; y < rows; ++y)
      for (size_t x = 0; x < row; ++x)
        EXPECT_EQ(flat[(z * rows + y) * row + x], host[(z * rows + y) * pitch + x]);
  block.srcXInBytes = 8;  // 8 + 4 bytes runs past the 10-byte row
  EXPECT_EQ(cuMemcpy2D_v2(&block), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
}

TEST_F(TextureApi, MipmappedArraysHaveHalvingLevels) {
  CUDA_ARRAY3D_DESCRIPTOR descriptor = shape(16, 5, 0, CU_AD_FORMAT_FLOAT, 4);
  CUmipmappedArray mipmapped = nullptr;
  EXPECT_EQ(cuMipmappedArrayCreate(&mipmapped, &descriptor, 6), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(cuMipmappedArrayCreate(&mipmapped, &descriptor, 5), CUDA_SUCCESS);
  const size_t widths[] = {16, 8, 4, 2, 1}, heights[] = {5, 2, 1, 1, 1};
  for (unsigned level = 0; level < 5; ++level) {
    CUarray array = nullptr;
    ASSERT_EQ(cuMipmappedArrayGetLevel(&array, mipmapped, level), CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR got{};
    ASSERT_EQ(cuArray3DGetDescriptor_v2(&got, array), CUDA_SUCCESS);
    EXPECT_EQ(got.Width, widths[level]);
    EXPECT_EQ(got.Height, heights[level]);
    if (level == 1) {
      EXPECT_EQ(cuArrayDestroy(array), CUDA_ERROR_INVALID_HANDLE);
    }
  }
  CUarray array = nullptr;
  EXPECT_EQ(cuMipmappedArrayGetLevel(&array, mipmapped, 5), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMipmappedArrayDestroy(mipmapped), CUDA_SUCCESS);
  EXPECT_EQ(cuMipmappedArrayDestroy(mipmapped), CUDA_ERROR_INVALID_HANDLE);
}

CUDA_RESOURCE_DESC array_resource(CUarray array) {
  CUDA_RESOURCE_DESC resource{};
  resource.resType = CU_RESOURCE_TYPE_ARRAY;
  resource.res.array.hArray = array;
  return resource;
}

TEST_F(TextureApi, TextureObjectsKeepTheirDescriptors) {
  CUDA_ARRAY3D_DESCRIPTOR descriptor = shape(8, 8, 0, CU_AD_FORMAT_SIGNED_INT32, 1);
  CUarray array = nullptr;
  ASSERT_EQ(cuArray3DCreate_v2(&array, &descriptor), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC resource = array_resource(array);
  CUDA_TEXTURE_DESC texture{};
  texture.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR;
  texture.addressMode[1] = CU_TR_ADDRESS_MODE_BORDER;
  texture.flags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES;
  texture.borderColor[2] = 0.5f;
  CUtexObject object = 0;
  ASSERT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC got_resource{};
  CUDA_TEXTURE_DESC got_texture{};
  ASSERT_EQ(cuTexObjectGetResourceDesc(&got_resource, object), CUDA_SUCCESS);
  ASSERT_EQ(cuTexObjectGetTextureDesc(&got_texture, object), CUDA_SUCCESS);
  EXPECT_EQ(got_resource.resType, CU_RESOURCE_TYPE_ARRAY);
  EXPECT_EQ(got_resource.res.array.hArray, array);
  EXPECT_EQ(got_texture.addressMode[0], CU_TR_ADDRESS_MODE_MIRROR);
  EXPECT_EQ(got_texture.addressMode[1], CU_TR_ADDRESS_MODE_BORDER);
  EXPECT_EQ(got_texture.flags, texture.flags);
  EXPECT_EQ(got_texture.borderColor[2], 0.5f);
  // A texture object is not a surface object.
  EXPECT_EQ(cuSurfObjectGetResourceDesc(&got_resource, object), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_EQ(cuTexObjectDestroy(object), CUDA_SUCCESS);
  EXPECT_EQ(cuTexObjectDestroy(object), CUDA_ERROR_INVALID_HANDLE);

  // Integers cannot be filtered linearly; modes must be known ones.
  texture.filterMode = CU_TR_FILTER_MODE_LINEAR;
  EXPECT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_ERROR_INVALID_VALUE);
  texture.filterMode = CU_TR_FILTER_MODE_POINT;
  texture.addressMode[2] = static_cast<CUaddress_mode>(7);
  EXPECT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_ERROR_INVALID_VALUE);
  texture.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
  resource.flags = 1;
  EXPECT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_ERROR_INVALID_VALUE);
  resource.flags = 0;
  // Surfaces need CUDA_ARRAY3D_SURFACE_LDST.
  CUsurfObject surface = 0;
  EXPECT_EQ(cuSurfObjectCreate(&surface, &resource), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuArrayDestroy(array), CUDA_SUCCESS);
  EXPECT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_ERROR_INVALID_HANDLE);
}

TEST_F(TextureApi, LinearResourcesMustLieInsideAnAllocation) {
  CUdeviceptr device = 0;
  ASSERT_EQ(cuMemAlloc_v2(&device, 256), CUDA_SUCCESS);
  CUDA_RESOURCE_DESC resource{};
  resource.resType = CU_RESOURCE_TYPE_LINEAR;
  resource.res.linear.devPtr = device;
  resource.res.linear.format = CU_AD_FORMAT_FLOAT;
  resource.res.linear.numChannels = 1;
  resource.res.linear.sizeInBytes = 256;
  CUDA_TEXTURE_DESC texture{};
  CUtexObject object = 0;
  ASSERT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(cuTexObjectDestroy(object), CUDA_SUCCESS);
  resource.res.linear.sizeInBytes = 512;
  EXPECT_EQ(cuTexObjectCreate(&object, &resource, &texture, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuMemFree_v2(device), CUDA_SUCCESS);
}

// query(tex, surf, out): txq and suq results; copy(tex, surf): surface (x, y) = the texel at
// integer coordinates (x, y) plus 1, then read back with suld into out[8 ..].
constexpr char texture_ptx[] = R"PTX(
.version 7.0
.target sm_50
.address_size 64

.visible .entry query(.param .u64 tex, .param .u64 surf, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [surf];
  ld.param.u64 %rd3, [out];
  txq.width.b32 %r1, [%rd1];
  txq.height.b32 %r2, [%rd1];
  txq.num_mipmap_levels.b32 %r3, [%rd1];
  txq.normalized_coords.b32 %r4, [%rd1];
  suq.width.b32 %r5, [%rd2];
  suq.height.b32 %r6, [%rd2];
  txq.addr_mode_0.b32 %r7, [%rd1];
  st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r4};
  st.global.v2.u32 [%rd3+16], {%r5, %r6};
  st.global.u32 [%rd3+24], %r7;
  ret;
}

.visible .entry copy(.param .u64 tex, .param .u64 surf, .param .u64 out)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [surf];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  tex.2d.v4.s32.s32 {%r3, %r4, %r5, %r6}, [%rd1, {%r1, %r2}];
  add.s32 %r3, %r3, 1;
  shl.b32 %r7, %r1, 2;
  sust.b.2d.b32.trap [%rd2, {%r7, %r2}], {%r3};
  bar.sync 0;
  suld.b.2d.b32.trap {%r8}, [%rd2, {%r7, %r2}];
  mov.u32 %r9, %ntid.x;
  mad.lo.u32 %r10, %r2, %r9, %r1;
  mul.wide.u32 %rd4, %r10, 4;
  add.u64 %rd5, %rd3, %rd4;
  st.global.u32 [%rd5], %r8;
  ret;
}

// reduce(tex, surf, out): thread (x, y) adds y * ntid.x + x + 1 to surface element (x % 2, y)
// with sured.b and raises element (ntid.x, y), clamped to the last column, to it with sured.p;
// thread (0, 0) writes istypep.texref of tex and istypep.surfref of surf to out.
.visible .entry reduce(.param .u64 tex, .param .u64 surf, .param .u64 out)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [tex];
  ld.param.u64 %rd2, [surf];
  ld.param.u64 %rd3, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  add.u32 %r5, %r4, 1;
  and.b32 %r6, %r1, 1;
  shl.b32 %r6, %r6, 2;
  sured.b.add.2d.trap.s32 [%rd2, {%r6, %r2}], %r5;
  sured.p.max.2d.clamp.b32 [%rd2, {%r3, %r2}], %r5;
  setp.ne.u32 %p3, %r4, 0;
  @%p3 bra done;
  istypep.texref %p1, %rd1;
  istypep.surfref %p2, %rd2;
  selp.u32 %r6, 1, 0, %p1;
  selp.u32 %r7, 1, 0, %p2;
  st.global.v2.u32 [%rd3], {%r6, %r7};
done:
  ret;
}

.visible .entry reduce_misaligned(.param .u64 surf)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [surf];
  mov.u32 %r1, 2;
  mov.u32 %r2, 0;
  sured.b.add.2d.zero.s32 [%rd1, {%r1, %r2}], %r1;
  ret;
}

.visible .entry store_outside(.param .u64 surf)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [surf];
  mov.u32 %r1, 4096;
  mov.u32 %r2, 0;
  sust.b.2d.b32.trap [%rd1, {%r1, %r2}], {%r2};
  ret;
}
)PTX";

class TextureKernels : public TextureApi {
 protected:
  void SetUp() override {
    TextureApi::SetUp();
    ASSERT_EQ(cuModuleLoadData(&module_, texture_ptx), CUDA_SUCCESS);
    CUDA_ARRAY3D_DESCRIPTOR descriptor = shape(width, height, 0, CU_AD_FORMAT_SIGNED_INT32, 1,
                                               CUDA_ARRAY3D_SURFACE_LDST);
    ASSERT_EQ(cuArray3DCreate_v2(&source_, &descriptor), CUDA_SUCCESS);
    ASSERT_EQ(cuArray3DCreate_v2(&target_, &descriptor), CUDA_SUCCESS);
    std::vector<int32_t> values(width * height);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int32_t>(i * i) - 20;
    values_ = values;
    ASSERT_EQ(cuMemcpyHtoA_v2(source_, 0, values.data(), values.size() * 4), CUDA_SUCCESS);
    CUDA_RESOURCE_DESC resource = array_resource(source_);
    CUDA_TEXTURE_DESC texture{};
    texture.addressMode[0] = CU_TR_ADDRESS_MODE_MIRROR;
    texture.flags = CU_TRSF_READ_AS_INTEGER;
    ASSERT_EQ(cuTexObjectCreate(&texture_, &resource, &texture, nullptr), CUDA_SUCCESS);
    resource = array_resource(target_);
    ASSERT_EQ(cuSurfObjectCreate(&surface_, &resource), CUDA_SUCCESS);
    ASSERT_EQ(cuMemAlloc_v2(&out_, width * height * 4), CUDA_SUCCESS);
  }
  void TearDown() override {
    EXPECT_EQ(cuTexObjectDestroy(texture_), CUDA_SUCCESS);
    EXPECT_EQ(cuSurfObjectDestroy(surface_), CUDA_SUCCESS);
    EXPECT_EQ(cuArrayDestroy(source_), CUDA_SUCCESS);
    EXPECT_EQ(cuArrayDestroy(target_), CUDA_SUCCESS);
    EXPECT_EQ(cuMemFree_v2(out_), CUDA_SUCCESS);
    EXPECT_EQ(cuModuleUnload(module_), CUDA_SUCCESS);
    TextureApi::TearDown();
  }

  CUresult launch(const char* name, unsigned threads_x, unsigned threads_y,
                  std::vector<void*> arguments) {
    CUfunction function = nullptr;
    if (CUresult status = cuModuleGetFunction(&function, module_, name); status != CUDA_SUCCESS)
      return status;
    if (CUresult status = cuLaunchKernel(function, 1, 1, 1, threads_x, threads_y, 1, 0, nullptr,
                                         arguments.data(), nullptr);
        status != CUDA_SUCCESS)
      return status;
    return cuCtxSynchronize();
  }

  static constexpr size_t width = 7, height = 3;
  CUmodule module_ = nullptr;
  CUarray source_ = nullptr, target_ = nullptr;
  CUtexObject texture_ = 0;
  CUsurfObject surface_ = 0;
  CUdeviceptr out_ = 0;
  std::vector<int32_t> values_;
};

TEST_F(TextureKernels, QueriesReportTheObjects) {
  ASSERT_EQ(launch("query", 1, 1, {&texture_, &surface_, &out_}), CUDA_SUCCESS);
  uint32_t got[7] = {};
  ASSERT_EQ(cuMemcpyDtoH_v2(got, out_, sizeof got), CUDA_SUCCESS);
  EXPECT_EQ(got[0], width);
  EXPECT_EQ(got[1], height);
  EXPECT_EQ(got[2], 1u);  // one mipmap level
  EXPECT_EQ(got[3], 0u);  // unnormalised coordinates
  EXPECT_EQ(got[4], width);
  EXPECT_EQ(got[5], height);
  EXPECT_EQ(got[6], static_cast<uint32_t>(CU_TR_ADDRESS_MODE_MIRROR));
}

TEST_F(TextureKernels, IntegerTexelsGoThroughASurface) {
  ASSERT_EQ(launch("copy", width, height, {&texture_, &surface_, &out_}), CUDA_SUCCESS);
  std::vector<int32_t> got(width * height), stored(width * height);
  ASSERT_EQ(cuMemcpyDtoH_v2(got.data(), out_, got.size() * 4), CUDA_SUCCESS);
  ASSERT_EQ(cuMemcpyAtoH_v2(stored.data(), target_, 0, stored.size() * 4), CUDA_SUCCESS);
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], values_[i] + 1) << "element " << i;
    EXPECT_EQ(stored[i], values_[i] + 1) << "element " << i;
  }
}

TEST_F(TextureKernels, AStoreOutsideTheSurfaceFailsTheLaunch) {
  EXPECT_EQ(launch("store_outside", 1, 1, {&surface_}), CUDA_ERROR_ILLEGAL_ADDRESS);
}

// Reductions from every thread land atomically; the signed format makes sured.p's max signed.
// No texture or surface object is a .texref or .surfref to istypep, as on an H200.
TEST_F(TextureKernels, ReductionsCombineEveryThreadsValue) {
  std::vector<int32_t> initial(width * height, -1000);
  ASSERT_EQ(cuMemcpyHtoA_v2(target_, 0, initial.data(), initial.size() * 4), CUDA_SUCCESS);
  uint32_t kinds[2] = {7, 7};
  ASSERT_EQ(cuMemcpyHtoD_v2(out_, kinds, sizeof kinds), CUDA_SUCCESS);
  ASSERT_EQ(launch("reduce", width, height, {&texture_, &surface_, &out_}), CUDA_SUCCESS);
  std::vector<int32_t> want = initial, got(width * height);
  for (size_t y = 0; y < height; ++y)
    for (size_t x = 0; x < width; ++x) {
      auto value = static_cast<int32_t>(y * width + x + 1);
      want[y * width + x % 2] += value;
      want[y * width + width - 1] = std::max(want[y * width + width - 1], value);
    }
  ASSERT_EQ(cuMemcpyAtoH_v2(got.data(), target_, 0, got.size() * 4), CUDA_SUCCESS);
  EXPECT_EQ(got, want);
  ASSERT_EQ(cuMemcpyDtoH_v2(kinds, out_, sizeof kinds), CUDA_SUCCESS);
  EXPECT_EQ(kinds[0], 0u);
  EXPECT_EQ(kinds[1], 0u);
}

// A column that is not a multiple of the access size fails the launch, even under .zero.
TEST_F(TextureKernels, AMisalignedReductionFailsTheLaunch) {
  EXPECT_EQ(launch("reduce_misaligned", 1, 1, {&surface_}), CUDA_ERROR_MISALIGNED_ADDRESS);
}

}  // namespace
