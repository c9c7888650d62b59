#include "compiler.h"

#include <algorithm>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "check/checker.h"
#include "diagnostics.h"
#include "lower/layout.h"
#include "lower/module_lowering.h"
#include "parse/parser.h"
#include "target/host/host_target.h"

namespace xcuda::ptx {
namespace {

// Everything the passes hand each other.
struct Compilation {
  std::string_view text;
  const CompileOptions& options;
  DiagnosticSink diagnostics;
  Module syntax;
  SharedLayout shared;
  ModuleInfo info;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir;
  std::unique_ptr<llvm::TargetMachine> machine;
  std::vector<uint8_t> object;
};

void parse(Compilation& compilation) { compilation.syntax = parse_module(compilation.text, compilation.diagnostics); }

void check(Compilation& compilation) { check_module(compilation.syntax, compilation.diagnostics); }

void lay_out(Compilation& compilation) {
  compilation.shared = lay_out_shared_memory(compilation.syntax, compilation.diagnostics);
  compilation.info = describe_module(compilation.syntax, compilation.shared);
}

void lower(Compilation& compilation) {
  compilation.ir = lower_module(compilation.syntax, compilation.shared, compilation.context, compilation.diagnostics);
}

// A broken module here is our bug, not the user's: say so rather than crash in LLVM.
void verify(Compilation& compilation) {
  std::string problems;
  llvm::raw_string_ostream stream(problems);
  if (llvm::verifyModule(*compilation.ir, &stream))
    compilation.diagnostics.error(SourceLocation{0, 0}, "internal compiler error: invalid IR: " + problems);
}

void host_runtime_services(Compilation& compilation) {
  for (const std::string& name : host::define_runtime_services(*compilation.ir, compilation.shared.static_bytes)) {
    SourceLocation location{0, 0};
    for (const Function& function : compilation.syntax.functions)
      if (function.name == name) location = function.location;
    compilation.diagnostics.error(location, "the host target does not provide '" + name + "'");
  }
}

void host_block_functions(Compilation& compilation) {
  auto stack_bytes = host::form_block_functions(*compilation.ir, compilation.diagnostics);
  for (KernelInfo& kernel : compilation.info.kernels)
    if (auto found = stack_bytes.find(kernel.name); found != stack_bytes.end())
      kernel.host_stack_bytes_per_thread = static_cast<uint32_t>(std::min<uint64_t>(found->second, UINT32_MAX));
}

void host_target_machine(Compilation& compilation) {
  compilation.machine = host::create_target_machine(compilation.options.optimization_level, compilation.diagnostics);
  if (compilation.machine == nullptr) return;
  compilation.ir->setTargetTriple(compilation.machine->getTargetTriple().str());
  compilation.ir->setDataLayout(compilation.machine->createDataLayout());
}

void host_optimize(Compilation& compilation) {
  host::optimize(*compilation.ir, *compilation.machine, compilation.options.optimization_level);
}

void host_emit_object(Compilation& compilation) {
  compilation.object = host::emit_object(*compilation.ir, *compilation.machine, compilation.diagnostics);
}

struct Pass {
  const char* name;
  void (*run)(Compilation& compilation);
};

// The whole compiler, in order. A pass that reports a problem ends the run after it, so the
// user sees every problem of the earliest stage that found any.
constexpr Pass host_pipeline[] = {
    {"parse", parse},
    {"check", check},
    {"lay out memory", lay_out},
    {"lower to LLVM IR", lower},
    {"verify", verify},
    {"host: target machine", host_target_machine},
    {"host: runtime services", host_runtime_services},
    {"host: block functions", host_block_functions},
    {"verify", verify},
    {"host: optimize", host_optimize},
    {"host: emit object", host_emit_object},
};

bool earlier(const Diagnostic& left, const Diagnostic& right) {
  return std::tie(left.line, left.column) < std::tie(right.line, right.column);
}

}  // namespace

std::string Diagnostic::to_string() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

CompileResult compile(std::string_view ptx_text, const CompileOptions& options) {
  CompileResult result;
  Compilation compilation{ptx_text, options, DiagnosticSink(options.file_name), {}, {}, {}, {}, {}, {}, {}};
  const char* current = "start";
  try {
    for (const Pass& pass : host_pipeline) {
      current = pass.name;
      pass.run(compilation);
      if (compilation.diagnostics.has_errors()) break;
    }
  } catch (const std::exception& error) {
    compilation.diagnostics.error(SourceLocation{0, 0}, std::string("internal compiler error in ") + current + ": " + error.what());
  } catch (...) {
    compilation.diagnostics.error(SourceLocation{0, 0}, std::string("internal compiler error in ") + current);
  }
  result.diagnostics = compilation.diagnostics.take();
  std::stable_sort(result.diagnostics.begin(), result.diagnostics.end(), earlier);
  if (result.diagnostics.empty()) {
    result.object = std::move(compilation.object);
    result.module = std::move(compilation.info);
  }
  return result;
}

}  // namespace xcuda::ptx
