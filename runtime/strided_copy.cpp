#include "runtime/strided_copy.h"

#include <cstring>
#include <memory>

namespace xcuda::runtime {
namespace {

void run(const StridedCopy& copy) {
  const StridedRegion& region = copy.region;
  for (size_t z = 0; z < region.depth; ++z) {
    for (size_t y = 0; y < region.height; ++y) {
      std::memcpy(copy.destination + z * copy.destination_slice_pitch + y * copy.destination_pitch,
                  copy.source + z * copy.source_slice_pitch + y * copy.source_pitch, region.width);
    }
  }
}

void run(const StridedFill& fill) {
  for (size_t y = 0; y < fill.region.height; ++y) {
    unsigned char* row = fill.destination + y * fill.destination_pitch;
    if (fill.pattern_bytes == 1) {
      std::memset(row, static_cast<int>(fill.pattern), fill.region.width);
      continue;
    }
    for (size_t x = 0; x < fill.region.width; x += fill.pattern_bytes)
      std::memcpy(row + x, &fill.pattern, fill.pattern_bytes);
  }
}

// The queue's host functions take a plain pointer: the work owns its description until it ran.
template <class Work>
void run_on_host(Queue& queue, const Work& work) {
  auto* owned = new Work(work);
  queue.host_function(
      [](void* data) {
        std::unique_ptr<Work> work(static_cast<Work*>(data));
        run(*work);
      },
      owned);
}

}  // namespace

void Queue::copy_region(const StridedCopy& copy) { run_on_host(*this, copy); }
void Queue::fill_region(const StridedFill& fill) { run_on_host(*this, fill); }

}  // namespace xcuda::runtime
