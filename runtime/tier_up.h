// Tiered compilation on the host. A kernel's first launch waits only for the quick first tier
// (ptx optimisation level 1, about a quarter of the optimised compile's time, with code several
// times slower); one thread in the background then compiles the kernel again, optimised, and
// hands that code to the running kernel (LoadedKernel::adopt_code), so that later launches, and
// the blocks of a running launch not yet started, run it. Where the code cache already holds the
// optimised object, the first tier is skipped. So is a module with .global or .const variables:
// the optimised object would bring a second copy of them. XCUDA_TIERED=0 turns tiering off.
#pragma once

#include <atomic>
#include <functional>

namespace xcuda::runtime {

// Runs `job` on the background compile thread, before the jobs queued earlier and not started.
// When the thread that queued it ends, or calls exit(), the running job is waited for, so that no
// compile is cut off inside LLVM while the process tears down, and the jobs not yet started run
// on that thread at once; `stopping` is true for both, and the running job hands it to its
// compile (ptx::CompileOptions::cancelled) so that the wait is short. A stopped job should leave
// its work to be asked for again (a kernel's next launch queues its compile again).
void run_in_background(std::function<void(const std::atomic<bool>& stopping)> job);

}  // namespace xcuda::runtime
