// How the host target's generated code sees one thread: the block's frame and the thread's
// index in the block. It never leaves generated code (the runtime only sees BlockFrame), so
// only the byte offsets below matter; block functions build it, intrinsics read it.
#pragma once

#include <cstddef>
#include <cstdint>

#include <llvm/IR/IRBuilder.h>

#include "host_abi.h"

namespace xcuda::ptx::host {

struct ThreadContext {
  const host_abi::BlockFrame* frame;
  uint32_t thread_index[3];
  // x + y * width + z * width * height, kept only where the kernel is run region by region.
  uint32_t linear_index;
  // The block's number of threads, likewise.
  uint32_t thread_count;
  // The block's round (see block_function.cpp), which tells the warp exchanges of this round
  // from those of the last.
  uint32_t round;
  // While the block stands together (see ResumableKernel), the linear indices of its
  // unfinished threads: together_begin up to, not including, together_end.
  uint32_t together_begin;
  uint32_t together_end;
  // The warp exchanges' area, for the W threads of the block rounded up to whole warps: W
  // offers (u64, as an array of low and one of high words) per round parity, so a lane reading
  // its peers' last offers never sees the next ones, each array with a warp of padding before
  // and after; then W stamps (u64: the round that wrote the offer, shifted 32 left,
  // and which exchange of the kernel; 0: none) per parity, kept only while the block runs in
  // rounds (see emit_stamps); then one ArrivalCache per warp; then, in a kernel with exchanges
  // of words (see warp_exchange.h), W words per word and round parity.
  // Array by array, a loop over the threads writes them at consecutive addresses.
  uint8_t* exchange;
};

// Which lanes of a warp offered at `site` in `round`: the first lane to ask after the exchange
// finds out and keeps the answer here, so the others need not look at 32 slots each.
struct ArrivalCache {
  uint32_t round;  // 0: nothing kept
  uint32_t site;
  uint32_t lanes;
  uint32_t padding;
};

inline constexpr uint64_t frame_offset = offsetof(ThreadContext, frame);
inline constexpr uint64_t thread_index_offset = offsetof(ThreadContext, thread_index);
inline constexpr uint64_t linear_index_offset = offsetof(ThreadContext, linear_index);
inline constexpr uint64_t thread_count_offset = offsetof(ThreadContext, thread_count);
inline constexpr uint64_t round_offset = offsetof(ThreadContext, round);
inline constexpr uint64_t together_begin_offset = offsetof(ThreadContext, together_begin);
inline constexpr uint64_t together_end_offset = offsetof(ThreadContext, together_end);
inline constexpr uint64_t exchange_offset = offsetof(ThreadContext, exchange);

// Room for a ThreadContext, at the builder's place.
inline llvm::AllocaInst* allocate_thread_context(llvm::IRBuilder<>& builder, const char* name) {
  auto* context = builder.CreateAlloca(llvm::ArrayType::get(builder.getInt8Ty(), sizeof(ThreadContext)), nullptr, name);
  context->setAlignment(llvm::Align(alignof(ThreadContext)));
  return context;
}

}  // namespace xcuda::ptx::host
