#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "target/host/host_target.h"

namespace xcuda::ptx::host {

std::vector<uint8_t> emit_object(llvm::Module& module, llvm::TargetMachine& machine, DiagnosticSink& diagnostics) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    diagnostics.error(SourceLocation{0, 0}, "the host target cannot emit object files");
    return {};
  }
  passes.run(module);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

}  // namespace xcuda::ptx::host
