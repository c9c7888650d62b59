// Warp exchanges on the host. A kernel is cut at each exchange as at a block barrier (see
// barrier_regions.h): before the cut each arriving lane writes its offer, with the round and the
// exchange's site number, to its slot of the ThreadContext's exchange area; after the cut, in
// the next round, it reads which lanes of its warp wrote at the same site in the round before,
// and their offers. Lanes that exited, diverged elsewhere or lie past the end of a partial
// warp wrote nothing there and so take no part.
#pragma once

#include <cstdint>

#include <llvm/IR/IRBuilder.h>

namespace xcuda::ptx::host {

// At most this many bytes of exchange area per thread of the block.
uint64_t exchange_bytes_per_thread();

// The i64 bytes of the exchange area for a block of i64 `threads`.
llvm::Value* exchange_area_bytes(llvm::IRBuilder<>& builder, llvm::Value* threads);

// Stores the thread's i64 `offer` for exchange `site` in its slot of the current round.
void emit_offer(llvm::IRBuilder<>& builder, llvm::Value* context, llvm::Value* offer, uint32_t site);

// The i32 mask of the lanes of the thread's warp that offered at `site` in the last round. Adds
// control flow: the builder ends up in a new block. With i1 `together` true the warp's arrival
// cache already holds the answer (see emit_known_arrivals).
llvm::Value* emit_arrived_lanes(llvm::IRBuilder<>& builder, llvm::Value* context, uint32_t site, llvm::Value* together);

// Fills the arrival cache of every warp for the exchange at `site` of round i32 `round`, when all
// unfinished threads of the block offered there: the lanes whose i32 state in `states` is not
// `finished`, of the i32 `threads` of the block, in the exchange area at `area`.
void emit_known_arrivals(llvm::IRBuilder<>& builder, llvm::Value* area, llvm::Value* threads, llvm::Value* states,
                         uint32_t finished, llvm::Value* round, uint32_t site);

// Defines intrinsics::warp_peer: what a lane of the warp offered in the last round.
void define_warp_peer(llvm::Function& function);

}  // namespace xcuda::ptx::host
