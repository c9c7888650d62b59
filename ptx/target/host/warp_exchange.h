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

// At most this many bytes of exchange area per thread of the block, for exchanges of at most
// `words` words (intrinsics::warp_exchange_words, whose words lie after the rest of the area).
uint64_t exchange_bytes_per_thread(uint32_t words);

// The i64 bytes of the exchange area for a block of i64 `threads`.
llvm::Value* exchange_area_bytes(llvm::IRBuilder<>& builder, llvm::Value* threads, uint32_t words);

// Stores the thread's i64 `offer` for exchange i32 `site` in its slot of the current round, and,
// unless i1 `together` (see ResumableKernel), the stamp that tells the lanes it arrived.
void emit_offer(llvm::IRBuilder<>& builder, llvm::Value* context, llvm::Value* offer, llvm::Value* site, llvm::Value* together);

// Stores the i64 `words` as the thread's offer at an exchange of words.
void emit_offer_words(llvm::IRBuilder<>& builder, llvm::Value* context, llvm::ArrayRef<llvm::Value*> words);

// The i32 mask of the lanes of the thread's warp that offered at i32 `site` in the last round.
// Adds control flow: the builder ends up in a new block. With i1 `together` true every lane of
// the warp did.
llvm::Value* emit_arrived_lanes(llvm::IRBuilder<>& builder, llvm::Value* context, llvm::Value* site, llvm::Value* together);

// The two above as calls to functions of the module that hold them once (defined on first use),
// for the first tier (optimisation level 1): inline, they were 200 instructions an exchange site,
// most of the code of a kernel of warp collectives, whose first compile waits on them.
void call_offer(llvm::IRBuilder<>& builder, llvm::Value* context, llvm::Value* offer, llvm::Value* site, llvm::Value* together);
llvm::Value* call_arrived_lanes(llvm::IRBuilder<>& builder, llvm::Value* context, llvm::Value* site, llvm::Value* together);

// For a block that stood together in i32 `round` and no longer does: clears the stamps and
// arrival caches and stamps the offers of that round, those of the threads whose i32 resume
// point in `states` follows an exchange, of the i32 `threads` of the block, in the exchange
// area at `area`. The rounds that follow tell arrivals by the stamps.
void emit_stamps(llvm::IRBuilder<>& builder, llvm::Value* area, llvm::Value* threads, llvm::Value* states, llvm::Value* round);

// Defines intrinsics::warp_peer: what a lane of the warp offered in the last round.
void define_warp_peer(llvm::Function& function);
// Defines intrinsics::warp_peer_word: a word a lane of the warp offered in the last round.
void define_warp_peer_word(llvm::Function& function);

}  // namespace xcuda::ptx::host
