// What other API families need from CUDA arrays: copies (memory_copy.cpp) and textures
// (texture.cpp) reach an array's memory through these checks.
#pragma once

#include "src/api.h"

#include "runtime/array.h"
#include "runtime/strided_copy.h"

namespace xcuda::api {

// The array behind a handle, or nullptr after reporting CUDA_ERROR_INVALID_HANDLE.
runtime::Array* live_array(const char* function, CUarray handle, CUresult& result);
runtime::MipmappedArray* live_mipmapped_array(const char* function, CUmipmappedArray handle,
                                              CUresult& result);

// One end of a rectangular copy inside an array: its first byte at byte column `x`, row `y`,
// slice `z`, and the array's pitches, after checking that `region` fits there.
struct ArrayWindow {
  unsigned char* start = nullptr;
  size_t row_pitch = 0;
  size_t rows_per_slice = 0;
};
CUresult locate_array_region(const char* function, CUarray handle, size_t x, size_t y, size_t z,
                             const runtime::StridedRegion& region, const char* which,
                             ArrayWindow& window);

// cuMemcpyHtoA and friends: `bytes` bytes from byte `offset` of the array, rows taken in order.
CUresult locate_array_bytes(const char* function, CUarray handle, size_t offset, size_t bytes,
                            const char* which, unsigned char*& start);

}  // namespace xcuda::api
