// Copies and fills of rectangular regions (cuMemcpy2D/3D, cuMemsetD2D*, and copies into and out
// of CUDA arrays), queued on a stream by Queue::copy_region and Queue::fill_region as ONE piece
// of work however many rows they have, so that a 3D copy costs one enqueue and runs in order
// with the stream's other work.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/backend.h"

namespace xcuda::runtime {

// `depth` slices of `height` rows of `width` bytes. A row starts `pitch` bytes after the one
// before it, a slice `slice_pitch` bytes after the slice before it.
struct StridedRegion {
  size_t width = 0;
  size_t height = 1;
  size_t depth = 1;
};

struct StridedCopy {
  StridedRegion region;
  unsigned char* destination = nullptr;
  size_t destination_pitch = 0;
  size_t destination_slice_pitch = 0;
  const unsigned char* source = nullptr;
  size_t source_pitch = 0;
  size_t source_slice_pitch = 0;
};

// `region.width` counts bytes; it is a whole number of patterns.
struct StridedFill {
  StridedRegion region;
  unsigned char* destination = nullptr;
  size_t destination_pitch = 0;
  uint32_t pattern = 0;
  uint32_t pattern_bytes = 1;
};

}  // namespace xcuda::runtime
