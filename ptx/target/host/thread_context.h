// How the host target's generated code sees one thread: the block's frame and the thread's
// index in the block. It never leaves generated code (the runtime only sees BlockFrame), so
// only the byte offsets below matter; block functions build it, intrinsics read it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "host_abi.h"

namespace xcuda::ptx::host {

struct ThreadContext {
  const host_abi::BlockFrame* frame;
  uint32_t thread_index[3];
};

inline constexpr uint64_t frame_offset = offsetof(ThreadContext, frame);
inline constexpr uint64_t thread_index_offset = offsetof(ThreadContext, thread_index);

}  // namespace xcuda::ptx::host
