// The host target's fallback for kernels whose threads wait for each other in ways a region by
// region schedule cannot express: a barrier with a thread count, bar.arrive, bar.red, or a warp
// collective whose member mask is not provably the whole warp. Such a kernel runs every thread
// of its block as a fiber (see ptx/host_abi.h and runtime/host/fiber.h); its barriers and warp
// exchanges become calls into the runtime that suspend the thread until the wait is over.
#pragma once

namespace llvm {
class Module;
}

namespace xcuda::ptx::host {

// Gives each such kernel its block function __xcuda_block_<name>, and takes it out of the
// kernels metadata so that form_block_functions leaves it alone. Runs before
// define_runtime_services: it replaces the synchronisation intrinsics in the code fibers run.
void form_fiber_block_functions(llvm::Module& module);

}  // namespace xcuda::ptx::host
