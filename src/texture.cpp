// Texture and surface objects: cuTexObject* and cuSurfObject*. The backend makes the handle
// from the runtime's immutable TextureDescriptor (on the host its address, which generated code
// hands to the sampling functions; on an AMD GPU the device address of a copy in the GPU's
// form); the API's own descriptors are kept beside it, under the handle, so that the Get*
// queries return them unchanged.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "src/array.h"
#include "src/memory.h"

#include "runtime/backend.h"
#include "runtime/texture.h"

using namespace xcuda;
using runtime::TextureDescriptor;

namespace {

struct TextureObject {
  std::unique_ptr<TextureDescriptor> descriptor;
  int device = 0;
  CUDA_RESOURCE_DESC resource{};
  CUDA_TEXTURE_DESC texture{};
  CUDA_RESOURCE_VIEW_DESC view{};
  bool is_surface = false;
};

class ObjectTable {
 public:
  void add(uint64_t handle, TextureObject object) {
    std::lock_guard lock(mutex_);
    objects_.emplace(handle, std::move(object));
  }
  // A copy of what the application described, or nothing when `handle` is not a live object of
  // that kind.
  std::optional<TextureObject> find(uint64_t handle, bool is_surface) const {
    std::lock_guard lock(mutex_);
    auto found = objects_.find(handle);
    if (found == objects_.end() || found->second.is_surface != is_surface) return std::nullopt;
    const TextureObject& object = found->second;
    return TextureObject{nullptr,        object.device, object.resource,
                         object.texture, object.view,   object.is_surface};
  }
  // The object, no longer in the table, or nothing when `handle` is not a live object of that
  // kind.
  std::optional<TextureObject> take(uint64_t handle, bool is_surface) {
    std::lock_guard lock(mutex_);
    auto found = objects_.find(handle);
    if (found == objects_.end() || found->second.is_surface != is_surface) return std::nullopt;
    TextureObject object = std::move(found->second);
    objects_.erase(found);
    return object;
  }

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, TextureObject> objects_;
};

ObjectTable& objects() {
  static ObjectTable table;
  return table;
}

// The resource as the runtime names it, after checking every handle and range in it.
CUresult resource_of(const char* function, const CUDA_RESOURCE_DESC& resource,
                     runtime::TextureResource& result) {
  XCUDA_MEMORY_REQUIRE(resource.flags == 0, CUDA_ERROR_INVALID_VALUE,
                       "resource descriptor flags must be 0");
  CUresult status = CUDA_SUCCESS;
  switch (resource.resType) {
    case CU_RESOURCE_TYPE_ARRAY:
      result.kind = runtime::ResourceKind::array;
      result.array = api::live_array(function, resource.res.array.hArray, status);
      return status;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      result.kind = runtime::ResourceKind::mipmapped_array;
      result.mipmapped_array =
          api::live_mipmapped_array(function, resource.res.mipmap.hMipmappedArray, status);
      return status;
    case CU_RESOURCE_TYPE_LINEAR: {
      const auto& linear = resource.res.linear;
      Expected<runtime::ElementFormat> element =
          runtime::element_format(linear.format, linear.numChannels);
      if (!element) return api::fail(function, element.error());
      if (CUresult range = api::check_device_range(function, linear.devPtr, linear.sizeInBytes,
                                                   "linear texture memory");
          range != CUDA_SUCCESS)
        return range;
      result = runtime::TextureResource{runtime::ResourceKind::linear, nullptr, nullptr,
                                        reinterpret_cast<unsigned char*>(linear.devPtr),
                                        static_cast<uint32_t>(linear.format), linear.numChannels,
                                        linear.sizeInBytes / element->bytes(), 1,
                                        linear.sizeInBytes};
      return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_PITCH2D: {
      const auto& pitched = resource.res.pitch2D;
      size_t bytes = 0;
      XCUDA_MEMORY_REQUIRE(!__builtin_mul_overflow(pitched.pitchInBytes, pitched.height, &bytes),
                           CUDA_ERROR_INVALID_VALUE, "pitch times height overflows");
      if (CUresult range = api::check_device_range(function, pitched.devPtr, bytes,
                                                   "pitched texture memory");
          range != CUDA_SUCCESS)
        return range;
      result = runtime::TextureResource{runtime::ResourceKind::pitch_2d, nullptr, nullptr,
                                        reinterpret_cast<unsigned char*>(pitched.devPtr),
                                        static_cast<uint32_t>(pitched.format),
                                        pitched.numChannels, pitched.width, pitched.height,
                                        pitched.pitchInBytes};
      return CUDA_SUCCESS;
    }
  }
  return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                   fmt::format("unknown resource type {}", static_cast<int>(resource.resType)));
}

CUresult sampler_of(const char* function, const CUDA_TEXTURE_DESC& texture,
                    runtime::SamplerState& result) {
  for (uint32_t axis = 0; axis < 3; ++axis) {
    XCUDA_MEMORY_REQUIRE(texture.addressMode[axis] >= CU_TR_ADDRESS_MODE_WRAP &&
                             texture.addressMode[axis] <= CU_TR_ADDRESS_MODE_BORDER,
                         CUDA_ERROR_INVALID_VALUE,
                         fmt::format("address mode {} of axis {} is not one of wrap, clamp, "
                                     "mirror, border",
                                     static_cast<int>(texture.addressMode[axis]), axis));
    result.address[axis] = static_cast<runtime::AddressMode>(texture.addressMode[axis]);
  }
  auto is_filter = [](CUfilter_mode mode) {
    return mode == CU_TR_FILTER_MODE_POINT || mode == CU_TR_FILTER_MODE_LINEAR;
  };
  XCUDA_MEMORY_REQUIRE(is_filter(texture.filterMode) && is_filter(texture.mipmapFilterMode),
                       CUDA_ERROR_INVALID_VALUE, "filter mode is not point or linear");
  constexpr unsigned known_flags = CU_TRSF_READ_AS_INTEGER | CU_TRSF_NORMALIZED_COORDINATES |
                                   CU_TRSF_SRGB | CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION |
                                   CU_TRSF_SEAMLESS_CUBEMAP;
  XCUDA_MEMORY_REQUIRE((texture.flags & ~known_flags) == 0, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("unknown texture flags {:#x}", texture.flags & ~known_flags));
  result.filter = static_cast<runtime::FilterMode>(texture.filterMode);
  result.mipmap_filter = static_cast<runtime::FilterMode>(texture.mipmapFilterMode);
  result.normalized_coordinates = texture.flags & CU_TRSF_NORMALIZED_COORDINATES;
  result.read_as_integer = texture.flags & CU_TRSF_READ_AS_INTEGER;
  result.srgb = texture.flags & CU_TRSF_SRGB;
  std::copy(std::begin(texture.borderColor), std::end(texture.borderColor), result.border);
  result.level_bias = texture.mipmapLevelBias;
  result.min_level = texture.minMipmapLevelClamp;
  result.max_level = texture.maxMipmapLevelClamp;
  return CUDA_SUCCESS;
}

// Views that change nothing (no format, the whole resource) are accepted; reinterpreting a
// resource is not supported yet.
bool is_whole_resource_view(const CUDA_RESOURCE_VIEW_DESC& view, const TextureDescriptor& texture) {
  const runtime::TextureImage& base = texture.levels.front();
  return view.format == CU_RES_VIEW_FORMAT_NONE && view.width == base.width &&
         (view.height == 0 || view.height == base.height) &&
         (view.depth == 0 || view.depth == base.depth || view.depth == base.layers) &&
         view.firstMipmapLevel == 0 && view.firstLayer == 0 &&
         view.lastMipmapLevel + 1 >= texture.levels.size() &&
         (base.layers == 0 || view.lastLayer + 1 == base.layers);
}

// Has the backend make the object's handle on its device, for the application (CUsurfObject
// and CUtexObject are one type).
CUresult publish(const char* function, TextureObject object, CUtexObject& result) {
  Expected<uint64_t> handle =
      runtime::backend().create_texture_object(object.device, *object.descriptor);
  if (!handle) return api::fail(function, handle.error());
  objects().add(*handle, std::move(object));
  result = *handle;
  return CUDA_SUCCESS;
}

// The backend's object goes before the descriptor it was made from.
CUresult destroy(const char* function, uint64_t handle, bool is_surface) {
  std::optional<TextureObject> object = objects().take(handle, is_surface);
  if (!object)
    return api::fail(function, CUDA_ERROR_INVALID_HANDLE,
                     is_surface ? "not a live surface object" : "not a live texture object");
  if (Status destroyed = runtime::backend().destroy_texture_object(object->device, handle);
      !destroyed)
    return api::fail(function, destroyed.error());
  return CUDA_SUCCESS;
}

}  // namespace

XCUDA_EXPORT CUresult cuTexObjectCreate(CUtexObject* result, const CUDA_RESOURCE_DESC* resource,
                                        const CUDA_TEXTURE_DESC* texture,
                                        const CUDA_RESOURCE_VIEW_DESC* view) {
  XCUDA_REQUIRE(result && resource && texture, CUDA_ERROR_INVALID_VALUE, "null pointer");
  CUresult current;
  runtime::Context* context = api::current_context(__func__, current);
  if (!context) return current;
  runtime::TextureResource memory;
  if (CUresult status = resource_of(__func__, *resource, memory); status != CUDA_SUCCESS)
    return status;
  runtime::SamplerState sampler;
  if (CUresult status = sampler_of(__func__, *texture, sampler); status != CUDA_SUCCESS)
    return status;
  Expected<std::unique_ptr<TextureDescriptor>> descriptor =
      runtime::create_texture(memory, sampler);
  if (!descriptor) return api::fail(__func__, descriptor.error());
  if (view)
    XCUDA_REQUIRE(is_whole_resource_view(*view, **descriptor), CUDA_ERROR_NOT_SUPPORTED,
                  "resource views that reinterpret or select part of a resource are not "
                  "supported yet");
  TextureObject object{std::move(*descriptor), context->device(), *resource, *texture, {}, false};
  if (view) object.view = *view;
  return publish(__func__, std::move(object), *result);
}

XCUDA_EXPORT CUresult cuTexObjectDestroy(CUtexObject handle) {
  return destroy(__func__, handle, false);
}

XCUDA_EXPORT CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC* result, CUtexObject handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  auto object = objects().find(handle, false);
  XCUDA_REQUIRE(object, CUDA_ERROR_INVALID_HANDLE, "not a live texture object");
  *result = object->resource;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC* result, CUtexObject handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  auto object = objects().find(handle, false);
  XCUDA_REQUIRE(object, CUDA_ERROR_INVALID_HANDLE, "not a live texture object");
  *result = object->texture;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC* result,
                                                     CUtexObject handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  auto object = objects().find(handle, false);
  XCUDA_REQUIRE(object, CUDA_ERROR_INVALID_HANDLE, "not a live texture object");
  *result = object->view;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuSurfObjectCreate(CUsurfObject* result,
                                         const CUDA_RESOURCE_DESC* resource) {
  XCUDA_REQUIRE(result && resource, CUDA_ERROR_INVALID_VALUE, "null pointer");
  CUresult current;
  runtime::Context* context = api::current_context(__func__, current);
  if (!context) return current;
  XCUDA_REQUIRE(resource->resType == CU_RESOURCE_TYPE_ARRAY, CUDA_ERROR_INVALID_VALUE,
                "a surface object needs an array resource");
  XCUDA_REQUIRE(resource->flags == 0, CUDA_ERROR_INVALID_VALUE,
                "resource descriptor flags must be 0");
  CUresult status;
  runtime::Array* array = api::live_array(__func__, resource->res.array.hArray, status);
  if (!array) return status;
  Expected<std::unique_ptr<TextureDescriptor>> descriptor = runtime::create_surface(*array);
  if (!descriptor) return api::fail(__func__, descriptor.error());
  return publish(
      __func__, TextureObject{std::move(*descriptor), context->device(), *resource, {}, {}, true},
      *result);
}

XCUDA_EXPORT CUresult cuSurfObjectDestroy(CUsurfObject handle) {
  return destroy(__func__, handle, true);
}

XCUDA_EXPORT CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC* result,
                                                  CUsurfObject handle) {
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "output pointer is null");
  auto object = objects().find(handle, true);
  XCUDA_REQUIRE(object, CUDA_ERROR_INVALID_HANDLE, "not a live surface object");
  *result = object->resource;
  return CUDA_SUCCESS;
}
