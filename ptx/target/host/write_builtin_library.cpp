// Writes the host target's builtin library (builtin_library.h) as an object file, for the
// runtime to link in: `xcuda_host_builtins OUTPUT.o`. Not for the build machine's processor,
// since the runtime may run on another: the library holds a copy for each processor level.
#include <cstdio>
#include <fstream>

#include "target/host/builtin_library.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.o\n", argv[0]);
    return 2;
  }
  xcuda::ptx::DiagnosticSink diagnostics("the host's builtin library");
  std::vector<uint8_t> object = xcuda::ptx::host::compile_builtin_library(diagnostics);
  if (object.empty() || diagnostics.has_errors()) {
    for (const auto& diagnostic : diagnostics.take()) std::fprintf(stderr, "%s\n", diagnostic.to_string().c_str());
    return 1;
  }
  std::ofstream output(argv[1], std::ios::binary);
  output.write(reinterpret_cast<const char*>(object.data()), static_cast<std::streamsize>(object.size()));
  if (!output) {
    std::fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
