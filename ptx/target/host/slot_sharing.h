// Every value that lives across a cut gets a slot of the block's per-thread storage (see
// barrier_regions.h). A long kernel has thousands of them but few live at once: a libcusolver
// getrf kernel of 81 barriers kept 27 KB per thread, too much for a block of its 256 threads
// on a host worker's stack. Slots of the same size whose values never live in the same region
// become one.
#pragma once

#include <unordered_set>
#include <vector>

#include "target/host/barrier_regions.h"

namespace llvm {
class AllocaInst;
class Function;
}  // namespace llvm

namespace xcuda::ptx::host {

// Merges the allocas of the resumable function that only loads and stores address, but for
// `kept_apart`, wherever no region of `regions` holds the values of two of them.
void share_slots(llvm::Function& resumable, const std::vector<Region>& regions, const std::unordered_set<llvm::AllocaInst*>& kept_apart);

}  // namespace xcuda::ptx::host
