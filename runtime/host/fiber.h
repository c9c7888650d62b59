// The host backend's always-correct execution model: every thread of a block runs as a fiber (a
// small stack of its own with a hand-written context switch) on the host thread that runs the
// block, and a thread that must wait for others (at a counted barrier, bar.red, or a warp
// collective over a member mask) suspends until they have come. The compiler sends only the
// kernels that need it here (see ptx/host_abi.h); the rest run region by region, much faster.
#pragma once

#include <cstdint>

#include "ptx/host_abi.h"

namespace xcuda::runtime::host {

using FiberThreadFunction = void (*)(const uint8_t* parameters,
                                     const ptx::host_abi::BlockFrame* frame, uint32_t x, uint32_t y,
                                     uint32_t z);

// __xcuda_fiber_run_block: runs every thread of the block as a fiber until all have ended.
// When every thread left waits for something that can no longer happen, abandons the block
// with ErrorCode::launch_failed (a GPU would hang).
void fiber_run_block(const uint8_t* parameters, const ptx::host_abi::BlockFrame* frame,
                     FiberThreadFunction thread);

// __xcuda_fiber_barrier and the warp exchanges (__xcuda_fiber_warp_exchange, _peer,
// _exchange_words, _peer_word), as ptx/host_abi.h describes them; called only from inside
// fiber_run_block.
uint32_t fiber_barrier(uint32_t barrier, uint32_t thread_count, uint32_t operation, uint32_t value);
uint32_t fiber_warp_exchange(uint64_t offer, uint32_t members);
uint64_t fiber_warp_peer(uint32_t lane);
void fiber_warp_exchange_words(const uint64_t* words, uint32_t count);
uint64_t fiber_warp_peer_word(uint32_t lane, uint32_t word);
// __xcuda_thread_stack_contains (isspacep.local): whether `address` lies on the stack of the
// block thread calling: while a fiber runs, the stacks of its block's fibers; otherwise the
// stack of the host thread, on which a block run region by region keeps its threads' locals.
uint32_t thread_stack_contains(uint64_t address);

// __xcuda_fiber_mbarrier, as ptx/host_abi.h describes it.
uint64_t fiber_mbarrier(uint32_t operation, uint64_t* mbarrier, uint64_t value, uint32_t count);

}  // namespace xcuda::runtime::host
