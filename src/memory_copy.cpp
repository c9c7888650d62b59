// Rectangular copies and fills: cuMemcpy2D/3D (and their unaligned, async, peer and
// per-thread forms) and cuMemsetD2D*. Each becomes ONE queued piece of work however many rows
// it has. A CUDA array side is the array's memory with the array's own pitches.
#include <tuple>

#include "src/memory.h"

#include "src/array.h"

#include "runtime/strided_copy.h"

using namespace xcuda;
using runtime::StridedRegion;

namespace {

// One side of a copy, whichever descriptor it came from.
struct CopySide {
  CUmemorytype type;
  const void* host;
  CUdeviceptr device;
  CUarray array;
  CUcontext context;  // only peer copies name one
  size_t x, y, z;
  size_t pitch, height;  // `height`: rows per slice, for 3D copies
};

struct CopyShape {
  StridedRegion region;
  CopySide source, destination;
};

// Multiplies and adds without wrapping; false when the result does not fit.
bool span_bytes(const StridedRegion& region, const CopySide& side, size_t& offset, size_t& extent) {
  size_t rows_before = 0, slice_rows = 0, last_row = 0, start = 0, end = 0;
  return !__builtin_mul_overflow(side.z, side.height, &rows_before) &&
         !__builtin_add_overflow(rows_before, side.y, &rows_before) &&
         !__builtin_mul_overflow(rows_before, side.pitch, &start) &&
         !__builtin_add_overflow(start, side.x, &offset) &&
         !__builtin_mul_overflow(region.depth - 1, side.height, &slice_rows) &&
         !__builtin_add_overflow(slice_rows, region.height - 1, &last_row) &&
         !__builtin_mul_overflow(last_row, side.pitch, &end) &&
         !__builtin_add_overflow(end, region.width, &extent);
}

// Where one side's first byte is, after checking that everything the copy touches there exists.
CUresult resolve_side(const char* function, const StridedRegion& region, const CopySide& side,
                      const char* which, const unsigned char*& result) {
  XCUDA_MEMORY_REQUIRE(side.type == CU_MEMORYTYPE_HOST || side.type == CU_MEMORYTYPE_DEVICE ||
                           side.type == CU_MEMORYTYPE_UNIFIED,
                       CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} memory type {} is not one of host, device, array or unified",
                                   which, static_cast<int>(side.type)));
  bool several_rows = region.height > 1 || region.depth > 1;
  XCUDA_MEMORY_REQUIRE(!several_rows || side.x + region.width <= side.pitch,
                       CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} pitch {} is smaller than x {} plus width {}", which,
                                   side.pitch, side.x, region.width));
  XCUDA_MEMORY_REQUIRE(region.depth == 1 || side.y + region.height <= side.height,
                       CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} height {} is smaller than y {} plus the copy's height {}",
                                   which, side.height, side.y, region.height));
  if (side.context)
    XCUDA_MEMORY_REQUIRE(runtime::live_contexts().contains(side.context),
                         CUDA_ERROR_INVALID_CONTEXT,
                         fmt::format("{} context is not a live context", which));
  size_t offset = 0, extent = 0;
  XCUDA_MEMORY_REQUIRE(span_bytes(region, side, offset, extent), CUDA_ERROR_INVALID_VALUE,
                       fmt::format("{} region does not fit in the address space", which));
  uintptr_t base =
      side.type == CU_MEMORYTYPE_HOST ? reinterpret_cast<uintptr_t>(side.host) : side.device;
  XCUDA_MEMORY_REQUIRE(base, CUDA_ERROR_INVALID_VALUE, fmt::format("{} pointer is null", which));
  // Unified addresses may name host memory CUDA knows nothing about; device ones may not.
  bool known = runtime::memory_registry().find(base + offset).has_value();
  if (side.type == CU_MEMORYTYPE_DEVICE || (side.type == CU_MEMORYTYPE_UNIFIED && known)) {
    if (CUresult status = api::check_device_range(function, base + offset, extent, which);
        status != CUDA_SUCCESS)
      return status;
  }
  result = reinterpret_cast<const unsigned char*>(base + offset);
  return CUDA_SUCCESS;
}

// An array side becomes the memory behind it, at the copy's origin: to the queue, an array's
// texels are memory like any other of its device's.
CUresult bind_array(const char* function, const StridedRegion& region, CopySide& side,
                    const char* which) {
  if (side.type != CU_MEMORYTYPE_ARRAY) return CUDA_SUCCESS;
  api::ArrayWindow window;
  if (CUresult status = api::locate_array_region(function, side.array, side.x, side.y, side.z,
                                                 region, which, window);
      status != CUDA_SUCCESS)
    return status;
  side = CopySide{CU_MEMORYTYPE_HOST, window.start, 0, nullptr, nullptr, 0, 0, 0,
                  window.row_pitch, window.rows_per_slice};
  return CUDA_SUCCESS;
}

// Checks both sides of a non-empty copy and describes it as one strided copy.
CUresult prepare_copy(const char* function, const CopyShape& requested,
                      runtime::StridedCopy& copy) {
  CopyShape shape = requested;
  if (CUresult status = bind_array(function, shape.region, shape.source, "source");
      status != CUDA_SUCCESS)
    return status;
  if (CUresult status = bind_array(function, shape.region, shape.destination, "destination");
      status != CUDA_SUCCESS)
    return status;
  copy.region = shape.region;
  const unsigned char* destination = nullptr;
  if (CUresult status = resolve_side(function, shape.region, shape.source, "source", copy.source);
      status != CUDA_SUCCESS)
    return status;
  if (CUresult status =
          resolve_side(function, shape.region, shape.destination, "destination", destination);
      status != CUDA_SUCCESS)
    return status;
  copy.destination = const_cast<unsigned char*>(destination);
  copy.source_pitch = shape.source.pitch;
  copy.source_slice_pitch = shape.source.pitch * shape.source.height;
  copy.destination_pitch = shape.destination.pitch;
  copy.destination_slice_pitch = shape.destination.pitch * shape.destination.height;
  return CUDA_SUCCESS;
}

bool is_empty(const StridedRegion& region) {
  return region.width == 0 || region.height == 0 || region.depth == 0;
}

CUresult copy_region(const char* function, const CopyShape& shape, CUstream stream, bool per_thread,
                     bool synchronous) {
  if (is_empty(shape.region)) return CUDA_SUCCESS;
  runtime::StridedCopy copy;
  if (CUresult status = prepare_copy(function, shape, copy); status != CUDA_SUCCESS) return status;
  return api::submit(function, stream, per_thread, synchronous, runtime::NodeKind::memcpy,
                     [=](runtime::Queue& queue) { queue.copy_region(copy); });
}

CUresult copy_2d(const char* function, const CUDA_MEMCPY2D* copy, CUstream stream, bool per_thread,
                 bool synchronous) {
  XCUDA_MEMORY_REQUIRE(copy, CUDA_ERROR_INVALID_VALUE, "copy descriptor is null");
  CopyShape shape{{copy->WidthInBytes, copy->Height, 1},
                  {copy->srcMemoryType, copy->srcHost, copy->srcDevice, copy->srcArray, nullptr,
                   copy->srcXInBytes, copy->srcY, 0, copy->srcPitch, copy->Height},
                  {copy->dstMemoryType, copy->dstHost, copy->dstDevice, copy->dstArray, nullptr,
                   copy->dstXInBytes, copy->dstY, 0, copy->dstPitch, copy->Height}};
  return copy_region(function, shape, stream, per_thread, synchronous);
}

// CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER differ only in the peer form's two contexts.
template <class Descriptor>
CopyShape shape_3d(const Descriptor& copy, CUcontext source_context,
                   CUcontext destination_context) {
  return CopyShape{
      {copy.WidthInBytes, copy.Height, copy.Depth},
      {copy.srcMemoryType, copy.srcHost, copy.srcDevice, copy.srcArray, source_context,
       copy.srcXInBytes, copy.srcY, copy.srcZ, copy.srcPitch, copy.srcHeight},
      {copy.dstMemoryType, copy.dstHost, copy.dstDevice, copy.dstArray, destination_context,
       copy.dstXInBytes, copy.dstY, copy.dstZ, copy.dstPitch, copy.dstHeight}};
}

template <class Descriptor>
CUresult copy_3d(const char* function, const Descriptor* copy, CUcontext source_context,
                 CUcontext destination_context, CUstream stream, bool per_thread,
                 bool synchronous) {
  XCUDA_MEMORY_REQUIRE(copy, CUDA_ERROR_INVALID_VALUE, "copy descriptor is null");
  XCUDA_MEMORY_REQUIRE(copy->srcLOD == 0 && copy->dstLOD == 0, CUDA_ERROR_INVALID_VALUE,
                       "mipmap levels must be 0");
  return copy_region(function, shape_3d(*copy, source_context, destination_context), stream,
                     per_thread, synchronous);
}

CUresult copy_3d(const char* function, const CUDA_MEMCPY3D* copy, CUstream stream, bool per_thread,
                 bool synchronous) {
  return copy_3d(function, copy, nullptr, nullptr, stream, per_thread, synchronous);
}

CUresult copy_3d_peer(const char* function, const CUDA_MEMCPY3D_PEER* copy, CUstream stream,
                      bool per_thread, bool synchronous) {
  XCUDA_MEMORY_REQUIRE(copy, CUDA_ERROR_INVALID_VALUE, "copy descriptor is null");
  XCUDA_MEMORY_REQUIRE(copy->srcContext && copy->dstContext, CUDA_ERROR_INVALID_CONTEXT,
                       "a peer copy names both contexts");
  return copy_3d(function, copy, copy->srcContext, copy->dstContext, stream, per_thread,
                 synchronous);
}

// Every device shares the process's memory on the host backend, so a peer copy is a copy
// between device ranges once both contexts are known to be alive.
CUresult copy_peer(const char* function, CUdeviceptr destination, CUcontext destination_context,
                   CUdeviceptr source, CUcontext source_context, size_t bytes, CUstream stream,
                   bool per_thread, bool synchronous) {
  XCUDA_MEMORY_REQUIRE(source_context && destination_context, CUDA_ERROR_INVALID_CONTEXT,
                       "a peer copy names both contexts");
  CopyShape shape{
      {bytes, 1, 1},
      {CU_MEMORYTYPE_DEVICE, nullptr, source, nullptr, source_context, 0, 0, 0, bytes, 1},
      {CU_MEMORYTYPE_DEVICE, nullptr, destination, nullptr, destination_context, 0, 0, 0, bytes,
       1}};
  return copy_region(function, shape, stream, per_thread, synchronous);
}

// One end of cuMemcpyHtoA and friends: host or device memory, or an array at a byte offset
// (counted through its rows in order).
struct LinearEnd {
  CUmemorytype type;
  const void* host;
  CUdeviceptr device;
  CUarray array;
  size_t offset;
};

CUresult copy_with_array(const char* function, LinearEnd destination, LinearEnd source,
                         size_t bytes, CUstream stream, bool per_thread, bool synchronous) {
  CopyShape shape{{bytes, 1, 1}, {}, {}};
  for (auto [end, side, which] : {std::tuple{&source, &shape.source, "source"},
                                  std::tuple{&destination, &shape.destination, "destination"}}) {
    *side = CopySide{end->type, end->host, end->device, nullptr, nullptr, 0, 0, 0, bytes, 1};
    if (end->type != CU_MEMORYTYPE_ARRAY) continue;
    unsigned char* start = nullptr;
    if (CUresult status = api::locate_array_bytes(function, end->array, end->offset, bytes, which,
                                                  start);
        status != CUDA_SUCCESS)
      return status;
    side->type = CU_MEMORYTYPE_HOST;
    side->host = start;
  }
  return copy_region(function, shape, stream, per_thread, synchronous);
}

LinearEnd host_end(const void* pointer) {
  return {CU_MEMORYTYPE_HOST, pointer, 0, nullptr, 0};
}
LinearEnd device_end(CUdeviceptr pointer) {
  return {CU_MEMORYTYPE_DEVICE, nullptr, pointer, nullptr, 0};
}
LinearEnd array_end(CUarray array, size_t offset) {
  return {CU_MEMORYTYPE_ARRAY, nullptr, 0, array, offset};
}

CUresult prepare_fill(const char* function, CUdeviceptr destination, size_t pitch,
                      uint32_t pattern, uint32_t pattern_bytes, size_t width, size_t height,
                      runtime::StridedFill& fill) {
  XCUDA_MEMORY_REQUIRE(destination % pattern_bytes == 0 && pitch % pattern_bytes == 0,
                       CUDA_ERROR_INVALID_VALUE,
                       "destination and pitch must be aligned to the element size");
  XCUDA_MEMORY_REQUIRE(width <= SIZE_MAX / pattern_bytes, CUDA_ERROR_INVALID_VALUE,
                       "the row does not fit in the address space");
  fill.region = StridedRegion{width * pattern_bytes, height, 1};
  CopySide side{
      CU_MEMORYTYPE_DEVICE, nullptr, destination, nullptr, nullptr, 0, 0, 0, pitch, height};
  const unsigned char* start = nullptr;
  if (CUresult status = resolve_side(function, fill.region, side, "destination", start);
      status != CUDA_SUCCESS)
    return status;
  fill.destination = const_cast<unsigned char*>(start);
  fill.destination_pitch = pitch;
  fill.pattern = pattern;
  fill.pattern_bytes = pattern_bytes;
  return CUDA_SUCCESS;
}

CUresult fill_2d(const char* function, CUdeviceptr destination, size_t pitch, uint32_t pattern,
                 uint32_t pattern_bytes, size_t width, size_t height, CUstream stream,
                 bool per_thread, bool synchronous) {
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  runtime::StridedFill fill;
  if (CUresult status =
          prepare_fill(function, destination, pitch, pattern, pattern_bytes, width, height, fill);
      status != CUDA_SUCCESS)
    return status;
  return api::submit(function, stream, per_thread, synchronous, runtime::NodeKind::memset,
                     [=](runtime::Queue& queue) { queue.fill_region(fill); });
}

}  // namespace

CUresult api::prepare_copy_3d(const char* function, const CUDA_MEMCPY3D& copy,
                              runtime::StridedCopy& result) {
  XCUDA_MEMORY_REQUIRE(copy.srcLOD == 0 && copy.dstLOD == 0, CUDA_ERROR_INVALID_VALUE,
                       "mipmap levels must be 0");
  CopyShape shape = shape_3d(copy, nullptr, nullptr);
  if (is_empty(shape.region)) {
    result = runtime::StridedCopy{};
    return CUDA_SUCCESS;
  }
  return prepare_copy(function, shape, result);
}

CUresult api::prepare_fill_2d(const char* function, CUdeviceptr destination, size_t pitch,
                              uint32_t pattern, uint32_t pattern_bytes, size_t width,
                              size_t height, runtime::StridedFill& result) {
  if (width == 0 || height == 0) {
    result = runtime::StridedFill{};
    return CUDA_SUCCESS;
  }
  return prepare_fill(function, destination, pitch, pattern, pattern_bytes, width, height,
                      result);
}

// The _ptds/_ptsz variants differ only in what stream 0 means.
XCUDA_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D* copy) {
  return copy_2d(__func__, copy, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D* copy) {
  return copy_2d(__func__, copy, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* copy) {
  return copy_2d(__func__, copy, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D* copy) {
  return copy_2d(__func__, copy, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* copy, CUstream stream) {
  return copy_2d(__func__, copy, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* copy, CUstream stream) {
  return copy_2d(__func__, copy, stream, true, false);
}

XCUDA_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D* copy) {
  return copy_3d(__func__, copy, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D* copy) {
  return copy_3d(__func__, copy, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D* copy, CUstream stream) {
  return copy_3d(__func__, copy, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D* copy, CUstream stream) {
  return copy_3d(__func__, copy, stream, true, false);
}

XCUDA_EXPORT CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER* copy) {
  return copy_3d_peer(__func__, copy, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER* copy) {
  return copy_3d_peer(__func__, copy, nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER* copy, CUstream stream) {
  return copy_3d_peer(__func__, copy, stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER* copy, CUstream stream) {
  return copy_3d_peer(__func__, copy, stream, true, false);
}

XCUDA_EXPORT CUresult cuMemcpyPeer(CUdeviceptr destination, CUcontext destination_context,
                                   CUdeviceptr source, CUcontext source_context, size_t bytes) {
  return copy_peer(__func__, destination, destination_context, source, source_context, bytes,
                   nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr destination, CUcontext destination_context,
                                        CUdeviceptr source, CUcontext source_context,
                                        size_t bytes) {
  return copy_peer(__func__, destination, destination_context, source, source_context, bytes,
                   nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr destination, CUcontext destination_context,
                                        CUdeviceptr source, CUcontext source_context, size_t bytes,
                                        CUstream stream) {
  return copy_peer(__func__, destination, destination_context, source, source_context, bytes,
                   stream, false, false);
}
XCUDA_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr destination, CUcontext destination_context,
                                             CUdeviceptr source, CUcontext source_context,
                                             size_t bytes, CUstream stream) {
  return copy_peer(__func__, destination, destination_context, source, source_context, bytes,
                   stream, true, false);
}

// 2D fills: cuMemsetD2D8/16/32 and their async and per-thread forms.
#define XCUDA_FILL_2D_ENTRY_POINTS(bits, type)                                                    \
  XCUDA_EXPORT CUresult cuMemsetD2D##bits##_v2(CUdeviceptr destination, size_t pitch, type value, \
                                               size_t width, size_t height) {                     \
    return fill_2d(__func__, destination, pitch, value, bits / 8, width, height, nullptr, false,  \
                   true);                                                                         \
  }                                                                                               \
  XCUDA_EXPORT CUresult cuMemsetD2D##bits##_v2_ptds(CUdeviceptr destination, size_t pitch,        \
                                                    type value, size_t width, size_t height) {    \
    return fill_2d(__func__, destination, pitch, value, bits / 8, width, height, nullptr, true,   \
                   true);                                                                         \
  }                                                                                               \
  XCUDA_EXPORT CUresult cuMemsetD2D##bits##Async(CUdeviceptr destination, size_t pitch,           \
                                                 type value, size_t width, size_t height,         \
                                                 CUstream stream) {                               \
    return fill_2d(__func__, destination, pitch, value, bits / 8, width, height, stream, false,   \
                   false);                                                                        \
  }                                                                                               \
  XCUDA_EXPORT CUresult cuMemsetD2D##bits##Async_ptsz(CUdeviceptr destination, size_t pitch,      \
                                                      type value, size_t width, size_t height,    \
                                                      CUstream stream) {                          \
    return fill_2d(__func__, destination, pitch, value, bits / 8, width, height, stream, true,    \
                   false);                                                                        \
  }

XCUDA_FILL_2D_ENTRY_POINTS(8, unsigned char)
XCUDA_FILL_2D_ENTRY_POINTS(16, unsigned short)
XCUDA_FILL_2D_ENTRY_POINTS(32, unsigned int)

// Copies between linear memory and arrays, and between arrays.
XCUDA_EXPORT CUresult cuMemcpyHtoA_v2(CUarray destination, size_t offset, const void* source,
                                      size_t bytes) {
  return copy_with_array(__func__, array_end(destination, offset), host_end(source), bytes,
                         nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyHtoA_v2_ptds(CUarray destination, size_t offset, const void* source,
                                           size_t bytes) {
  return copy_with_array(__func__, array_end(destination, offset), host_end(source), bytes,
                         nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyHtoAAsync_v2(CUarray destination, size_t offset, const void* source,
                                           size_t bytes, CUstream stream) {
  return copy_with_array(__func__, array_end(destination, offset), host_end(source), bytes, stream,
                         false, false);
}
XCUDA_EXPORT CUresult cuMemcpyHtoAAsync_v2_ptsz(CUarray destination, size_t offset,
                                                const void* source, size_t bytes,
                                                CUstream stream) {
  return copy_with_array(__func__, array_end(destination, offset), host_end(source), bytes, stream,
                         true, false);
}
XCUDA_EXPORT CUresult cuMemcpyAtoH_v2(void* destination, CUarray source, size_t offset,
                                      size_t bytes) {
  return copy_with_array(__func__, host_end(destination), array_end(source, offset), bytes,
                         nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyAtoH_v2_ptds(void* destination, CUarray source, size_t offset,
                                           size_t bytes) {
  return copy_with_array(__func__, host_end(destination), array_end(source, offset), bytes,
                         nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyAtoHAsync_v2(void* destination, CUarray source, size_t offset,
                                           size_t bytes, CUstream stream) {
  return copy_with_array(__func__, host_end(destination), array_end(source, offset), bytes, stream,
                         false, false);
}
XCUDA_EXPORT CUresult cuMemcpyAtoHAsync_v2_ptsz(void* destination, CUarray source, size_t offset,
                                                size_t bytes, CUstream stream) {
  return copy_with_array(__func__, host_end(destination), array_end(source, offset), bytes, stream,
                         true, false);
}
XCUDA_EXPORT CUresult cuMemcpyDtoA_v2(CUarray destination, size_t offset, CUdeviceptr source,
                                      size_t bytes) {
  return copy_with_array(__func__, array_end(destination, offset), device_end(source), bytes,
                         nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyDtoA_v2_ptds(CUarray destination, size_t offset, CUdeviceptr source,
                                           size_t bytes) {
  return copy_with_array(__func__, array_end(destination, offset), device_end(source), bytes,
                         nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyAtoD_v2(CUdeviceptr destination, CUarray source, size_t offset,
                                      size_t bytes) {
  return copy_with_array(__func__, device_end(destination), array_end(source, offset), bytes,
                         nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyAtoD_v2_ptds(CUdeviceptr destination, CUarray source, size_t offset,
                                           size_t bytes) {
  return copy_with_array(__func__, device_end(destination), array_end(source, offset), bytes,
                         nullptr, true, true);
}
XCUDA_EXPORT CUresult cuMemcpyAtoA_v2(CUarray destination, size_t destination_offset,
                                      CUarray source, size_t source_offset, size_t bytes) {
  return copy_with_array(__func__, array_end(destination, destination_offset),
                         array_end(source, source_offset), bytes, nullptr, false, true);
}
XCUDA_EXPORT CUresult cuMemcpyAtoA_v2_ptds(CUarray destination, size_t destination_offset,
                                           CUarray source, size_t source_offset, size_t bytes) {
  return copy_with_array(__func__, array_end(destination, destination_offset),
                         array_end(source, source_offset), bytes, nullptr, true, true);
}
