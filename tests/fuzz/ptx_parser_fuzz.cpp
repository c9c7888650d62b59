// libFuzzer entry point for the PTX front end: any bytes, read as PTX text, must come out of the
// lexer, the parser, the excerpt for one kernel and the checker as a syntax tree and diagnostics,
// never as a crash, a hang or a sanitizer report. The checker runs even after parse errors, on whatever the parser kept,
// so that it is exercised on every partial tree the parser can build. Seed it with
// tests/fuzz/ptx_seeds.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_set>

#include "check/checker.h"
#include "parse/excerpt.h"
#include "parse/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xcuda::ptx;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DiagnosticSink diagnostics("fuzz.ptx");
  Module module = parse_module(text, diagnostics);
  // The cut a compile of one kernel makes before parsing (parse/excerpt.h), for each kernel the
  // whole text holds, and the parse of what it keeps.
  // At most a few kernels, each once: an input of a thousand tiny kernels would otherwise spend
  // the run on cutting the same text a thousand times.
  std::unordered_set<std::string_view> cut;
  for (const Function& function : module.functions) {
    if (!function.is_entry || cut.size() == 8 || !cut.insert(function.name).second) continue;
    if (std::optional<std::string> excerpt = excerpt_for_kernels(text, {&function.name, 1})) {
      // It keeps every line where it was, and adds nothing.
      if (excerpt->size() > text.size() || std::count(excerpt->begin(), excerpt->end(), '\n') != std::count(text.begin(), text.end(), '\n'))
        __builtin_trap();
      DiagnosticSink excerpt_diagnostics("fuzz.ptx");
      (void)parse_module(*excerpt, excerpt_diagnostics);
    }
  }
  check_module(module, diagnostics);
  return 0;
}
