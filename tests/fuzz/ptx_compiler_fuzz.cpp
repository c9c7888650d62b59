// libFuzzer entry point for the compiler past the front end: any bytes, read as PTX text, go
// through the front end and the lowering to LLVM IR and its verifier (ptx::check_and_lower), and
// text those take without a problem through the whole host compile of the runtime's first tier
// (block functions, optimisation, code generation). What the checker lets through the compiler
// must take: a crash, a hang, a sanitizer report or an internal compiler error (IR that does not
// verify, an exception) is a finding. Seed it with tests/fuzz/ptx_seeds and the PTX of the test
// programs (build/tests/corpus/nvcc), whose instructions give it lowering paths to start from.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compiler.h"

namespace {

void trap_on_internal_error(const xcuda::ptx::CompileResult& result) {
  for (const xcuda::ptx::Diagnostic& diagnostic : result.diagnostics)
    if (diagnostic.message.starts_with("internal compiler error")) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xcuda::ptx;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CompileOptions options;
  options.file_name = "fuzz.ptx";
  CompileResult lowered = check_and_lower(text, options);
  trap_on_internal_error(lowered);
  if (!lowered.ok()) return 0;
  options.optimization_level = 1;
  trap_on_internal_error(compile(text, options));
  return 0;
}
