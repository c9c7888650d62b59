// Exchanges of words (intrinsics::warp_exchange_words) for the targets whose lanes meet at every
// exchange anyway, AMDGPU's and the host's fibers: each becomes one single-word exchange per
// word, each followed by a loop that copies the warp's offers of that word into a table in the
// thread's memory, which intrinsics::warp_peer_word then reads. The host's block functions,
// which cut a kernel at each exchange, take them whole instead (target/host/warp_exchange.h).
#pragma once

#include <llvm/IR/Function.h>

namespace xcuda::ptx {

// The expansion in place of every exchange of words and peer_word `function` calls.
void expand_word_exchanges(llvm::Function& function);

}  // namespace xcuda::ptx
