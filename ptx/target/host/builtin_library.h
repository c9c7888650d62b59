// The host target's builtin library: functions that every module (every share of one, every
// lazily compiled kernel) would otherwise compile again, compiled once when xcuda is built
// (write_builtin_library.cpp) into an object that the runtime links in. A module's compile drops
// its own bodies of them (runtime_services.cpp), and the loader resolves its calls through the
// library's table (host_abi::BuiltinLevel; runtime/host/host_loader.cpp). It holds the tensor
// cores' dot products (tensor_core.h) of every mma.sync and wmma form, a copy for each processor
// level. The floating-point ones cost a module 4-5 ms of CPU each to compile: tests/cuda/
// mma_numerics.cu's module (three types, in two shares that both compiled all three) took 80-89
// ms of CPU instead of 102-106 on two threads, 46-50 ms of wall-clock time instead of 58-65, 72-73
// instead of 84-87 on one (`perf stat -r 10 xcuda compile --target host --whole-warp-blocks`,
// three alternations); a loop of m16n8k16 .f16 mma.sync ran in 44-45 ms instead of 43-44 (2048
// warps), one per warp in 22.6-23.5 instead of 22.1-23.5 (4096). The integer and .f64 ones cost
// 2.5-5 ms, wmma's .tf32 10 (`perf stat -r 10 xcuda compile --target host -j 1
// --whole-warp-blocks` on tests/conformance/cases/matrix: mma_m16n8k16_s32_s8_s8_s32 47.9 ->
// 45.4 ms, mma_m16n8k8_f64_f64_f64_f64 48.1 -> 43.3, wmma_m16n16k8_f32_tf32_tf32_f32_rcrc
// 100 -> 90).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "diagnostics.h"

namespace xcuda::ptx::host {

// Whether the library holds the function named `name`.
bool is_builtin(std::string_view name);

// The library, a relocatable object for the host's architecture.
std::vector<uint8_t> compile_builtin_library(DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx::host
