// Exchanges of words (intrinsics::warp_exchange_words) for a target whose lanes read each other's
// registers one word at a time (AMDGPU's ds_bpermute): each becomes one single-word exchange per
// word, each followed by a loop that copies the warp's offers of that word into a table in the
// thread's memory, which intrinsics::warp_peer_word then reads. The host takes them whole: its
// block functions in the exchange area (target/host/warp_exchange.h), its fibers through the
// runtime (host_abi.h).
#pragma once

#include <llvm/IR/Module.h>

namespace xcuda::ptx {

// The expansion in place of every exchange of words and peer_word of `module`. A function that
// reads the words of its caller's exchange (the mma.sync forms of matrix.cpp) is inlined into
// its callers first, so that each reads its caller's table.
void expand_word_exchanges(llvm::Module& module);

}  // namespace xcuda::ptx
