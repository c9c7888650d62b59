// Exchanges of words (intrinsics::warp_exchange_words) for a target whose lanes read each other's
// registers one word at a time (AMDGPU's ds_bpermute): each becomes one single-word exchange per
// word, each followed by a loop that copies the warp's offers of that word into a table in the
// thread's memory, which intrinsics::warp_peer_word then reads. The host takes them whole: its
// block functions in the exchange area (target/host/warp_exchange.h), its fibers through the
// runtime (host_abi.h).
#pragma once

#include <llvm/IR/Function.h>

namespace xcuda::ptx {

// The expansion in place of every exchange of words and peer_word `function` calls.
void expand_word_exchanges(llvm::Function& function);

}  // namespace xcuda::ptx
