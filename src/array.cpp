// CUDA arrays: cuArrayCreate, cuArray3DCreate, cuMipmappedArrayCreate and their queries. An
// array's storage is memory of the current context's device, from the backend.
#include "src/array.h"

#include "src/memory.h"

#include "runtime/backend.h"

using namespace xcuda;
using runtime::Array;
using runtime::ArrayDescription;
using runtime::MipmappedArray;

namespace xcuda::api {

runtime::Array* live_array(const char* function, CUarray handle, CUresult& result) {
  if (runtime::live_arrays().contains(handle)) return reinterpret_cast<Array*>(handle);
  // NVIDIA's driver answers a missing array (a 2D copy to CU_MEMORYTYPE_ARRAY with no array,
  // measured on an H200) as a bad value, not a bad handle.
  if (handle == nullptr) {
    result = fail(function, CUDA_ERROR_INVALID_VALUE, "no CUDA array given");
    return nullptr;
  }
  result = fail(function, CUDA_ERROR_INVALID_HANDLE, "not a live CUDA array");
  return nullptr;
}

runtime::MipmappedArray* live_mipmapped_array(const char* function, CUmipmappedArray handle,
                                              CUresult& result) {
  if (runtime::live_mipmapped_arrays().contains(handle))
    return reinterpret_cast<MipmappedArray*>(handle);
  result = fail(function, CUDA_ERROR_INVALID_HANDLE, "not a live mipmapped array");
  return nullptr;
}

CUresult locate_array_region(const char* function, CUarray handle, size_t x, size_t y, size_t z,
                             const runtime::StridedRegion& region, const char* which,
                             ArrayWindow& window) {
  CUresult result;
  Array* array = live_array(function, handle, result);
  if (!array) return result;
  // Each term is bounded by the array's extents, far below overflow, once checked in order.
  bool fits = x <= array->row_pitch() && region.width <= array->row_pitch() - x &&
              y <= array->height() && region.height <= array->height() - y &&
              z <= array->slice_count() && region.depth <= array->slice_count() - z;
  if (!fits)
    return fail(function, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} region ({} bytes at byte {}, {} rows at row {}, {} slices at {}) "
                            "is outside the {}-byte x {} x {} array",
                            which, region.width, x, region.height, y, region.depth, z,
                            array->row_pitch(), array->height(), array->slice_count()));
  window.start = array->data() + z * array->slice_pitch() + y * array->row_pitch() + x;
  window.row_pitch = array->row_pitch();
  window.rows_per_slice = array->height();
  return CUDA_SUCCESS;
}

CUresult locate_array_bytes(const char* function, CUarray handle, size_t offset, size_t bytes,
                            const char* which, unsigned char*& start) {
  CUresult result;
  Array* array = live_array(function, handle, result);
  if (!array) return result;
  if (offset > array->bytes() || bytes > array->bytes() - offset)
    return fail(function, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} range [{}, +{}) is outside the {}-byte array", which, offset, bytes,
                            array->bytes()));
  start = array->data() + offset;
  return CUDA_SUCCESS;
}

}  // namespace xcuda::api

namespace {

ArrayDescription description_of(const CUDA_ARRAY3D_DESCRIPTOR& descriptor) {
  return ArrayDescription{descriptor.Width, descriptor.Height, descriptor.Depth,
                          static_cast<uint32_t>(descriptor.Format), descriptor.NumChannels,
                          descriptor.Flags};
}

CUresult create_array(const char* function, CUarray* result, const ArrayDescription& description) {
  XCUDA_MEMORY_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  CUresult status;
  runtime::Context* context = api::current_context(function, status);
  if (!context) return status;
  Expected<std::unique_ptr<Array>> array =
      Array::create(runtime::backend(), context->device(), description);
  if (!array) return api::fail(function, array.error());
  Array* created = array->release();
  runtime::live_arrays().add(created);
  *result = reinterpret_cast<CUarray>(created);
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuArrayCreate_v2(CUarray* result, const CUDA_ARRAY_DESCRIPTOR* descriptor) {
  XCUDA_REQUIRE(descriptor, CUDA_ERROR_INVALID_VALUE, "descriptor is null");
  return create_array(__func__, result,
                      ArrayDescription{descriptor->Width, descriptor->Height, 0,
                                       static_cast<uint32_t>(descriptor->Format),
                                       descriptor->NumChannels, 0});
}

XCUDA_EXPORT CUresult cuArray3DCreate_v2(CUarray* result,
                                         const CUDA_ARRAY3D_DESCRIPTOR* descriptor) {
  XCUDA_REQUIRE(descriptor, CUDA_ERROR_INVALID_VALUE, "descriptor is null");
  return create_array(__func__, result, description_of(*descriptor));
}

XCUDA_EXPORT CUresult cuArrayDestroy(CUarray handle) {
  CUresult status;
  Array* array = api::live_array(__func__, handle, status);
  if (!array) return status;
  XCUDA_REQUIRE(!array->is_mipmap_level(), CUDA_ERROR_INVALID_HANDLE,
                "a mipmapped array's level is destroyed with the mipmapped array");
  runtime::live_arrays().remove(array);
  delete array;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR* result, CUarray handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  CUresult status;
  Array* array = api::live_array(__func__, handle, status);
  if (!array) return status;
  const ArrayDescription& description = array->description();
  *result = CUDA_ARRAY3D_DESCRIPTOR{description.width, description.height, description.depth,
                                    static_cast<CUarray_format>(description.format),
                                    description.channels, description.flags};
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR* result, CUarray handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  CUDA_ARRAY3D_DESCRIPTOR full;
  if (CUresult status = cuArray3DGetDescriptor_v2(&full, handle); status != CUDA_SUCCESS)
    return status;
  *result = CUDA_ARRAY_DESCRIPTOR{full.Width, full.Height, full.Format, full.NumChannels};
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray* result,
                                             const CUDA_ARRAY3D_DESCRIPTOR* descriptor,
                                             unsigned int levels) {
  XCUDA_REQUIRE(result && descriptor, CUDA_ERROR_INVALID_VALUE, "null pointer");
  CUresult status;
  runtime::Context* context = api::current_context(__func__, status);
  if (!context) return status;
  Expected<std::unique_ptr<MipmappedArray>> mipmapped = MipmappedArray::create(
      runtime::backend(), context->device(), description_of(*descriptor), levels);
  if (!mipmapped) return api::fail(__func__, mipmapped.error());
  MipmappedArray* created = mipmapped->release();
  runtime::live_mipmapped_arrays().add(created);
  for (uint32_t level = 0; level < created->level_count(); ++level)
    runtime::live_arrays().add(&created->level(level));
  *result = reinterpret_cast<CUmipmappedArray>(created);
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray handle) {
  CUresult status;
  MipmappedArray* mipmapped = api::live_mipmapped_array(__func__, handle, status);
  if (!mipmapped) return status;
  runtime::live_mipmapped_arrays().remove(mipmapped);
  for (uint32_t level = 0; level < mipmapped->level_count(); ++level)
    runtime::live_arrays().remove(&mipmapped->level(level));
  delete mipmapped;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuMipmappedArrayGetLevel(CUarray* result, CUmipmappedArray handle,
                                               unsigned int level) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  CUresult status;
  MipmappedArray* mipmapped = api::live_mipmapped_array(__func__, handle, status);
  if (!mipmapped) return status;
  XCUDA_REQUIRE(level < mipmapped->level_count(), CUDA_ERROR_INVALID_VALUE,
                fmt::format("level {} of a {}-level mipmapped array", level,
                            mipmapped->level_count()));
  *result = reinterpret_cast<CUarray>(&mipmapped->level(level));
  return CUDA_SUCCESS;
}
