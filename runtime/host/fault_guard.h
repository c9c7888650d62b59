// A kernel's wild access must fail its launch (CUDA_ERROR_ILLEGAL_ADDRESS), not kill the
// application. Faults raised while a worker runs a block abandon that block; any other fault
// goes to whatever handler the process had before, or kills it as usual.
#pragma once

namespace xcuda::runtime::host {

// Installs the handlers for SIGSEGV, SIGBUS, SIGFPE and SIGILL once per process.
void install_fault_handlers();

// Gives the calling thread an alternate signal stack, so that a kernel that overflows the stack
// can still be caught. Once per thread; keeps a stack the application installed itself.
void prepare_thread_for_faults();

}  // namespace xcuda::runtime::host
