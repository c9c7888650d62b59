// libFuzzer entry point for the PTX front end: any bytes, read as PTX text, must come out of the
// lexer, the parser and the checker as a syntax tree and diagnostics, never as a crash, a hang
// or a sanitizer report. The checker runs even after parse errors, on whatever the parser kept,
// so that it is exercised on every partial tree the parser can build. Seed it with
// tests/fuzz/ptx_seeds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "check/checker.h"
#include "parse/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xcuda::ptx;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DiagnosticSink diagnostics("fuzz.ptx");
  Module module = parse_module(text, diagnostics);
  check_module(module, diagnostics);
  return 0;
}
