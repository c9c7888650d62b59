// Writes the host target's builtin library (builtin_library.h) as an object file, for the
// runtime to link in: `xcuda_host_builtins OUTPUT.o`. Not for the build machine's processor,
// since the runtime may run on another: the library holds a copy for each processor level.
#include <cstdio>
#include <fstream>
#include <memory>

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "target/host/builtin_library.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.o\n", argv[0]);
    return 2;
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    std::fprintf(stderr, "%s: no LLVM target for %s: %s\n", argv[0], triple.c_str(), error.c_str());
    return 1;
  }
  // The lowest level; each function names its own (target-cpu).
  const char* processor = llvm::Triple(triple).getArch() == llvm::Triple::x86_64 ? "x86-64-v2" : "generic";
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, processor, "", llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::CodeModel::Small, llvm::CodeGenOptLevel::Default));
  xcuda::ptx::DiagnosticSink diagnostics("the host's builtin library");
  std::vector<uint8_t> object = xcuda::ptx::host::compile_builtin_library(*machine, diagnostics);
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
