#include "compiler.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <llvm/CodeGen/Passes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "check/checker.h"
#include "diagnostics.h"
#include "host_abi.h"
#include "kernel_selection.h"
#include "lower/layout.h"
#include "lower/module_lowering.h"
#include "parse/excerpt.h"
#include "parse/parser.h"
#include "target/amdgpu/amdgpu_target.h"
#include "target/host/fiber_block_function.h"
#include "target/host/host_target.h"
#include "target/object_file.h"

namespace xcuda::ptx {
namespace {

struct Compilation;

struct Pass {
  const char* name;
  void (*run)(Compilation& compilation);
};

// Everything the passes hand each other.
struct Compilation {
  Compilation(std::span<const Pass> pipeline, std::string_view text, const CompileOptions& options, bool variables_elsewhere)
      : pipeline(pipeline), text(text), options(options), variables_elsewhere(variables_elsewhere), diagnostics(options.file_name) {
    // Names of values other than globals are for reading dumps: without them, lowering a 1.8 MB
    // libcusparse module took 0.065 s instead of 0.10, and optimising it 6% less, for the same
    // object.
    context.setDiscardValueNames(options.ir_dump_prefix.empty());
  }

  std::span<const Pass> pipeline;  // the passes this compilation runs
  std::string_view text;
  const CompileOptions& options;
  bool variables_elsewhere;  // a share of the module other than the first (host_compile_in_shares)
  bool finished = false;     // the remaining passes have nothing to do
  DiagnosticSink diagnostics;
  Module syntax;
  SharedLayout shared;
  ModuleInfo info;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> ir;
  std::shared_ptr<llvm::TargetMachine> machine;
  std::vector<uint8_t> object;
};

// For a choice of kernels, only the text they need (parse/excerpt.h). Should the excerpt not
// parse, the whole text does, and its problems are the ones reported.
void parse(Compilation& compilation) {
  if (!compilation.options.kernels.empty())
    if (std::optional<std::string> excerpt = excerpt_for_kernels(compilation.text, compilation.options.kernels)) {
      DiagnosticSink diagnostics(compilation.options.file_name);
      compilation.syntax = parse_module(*excerpt, diagnostics);
      if (!diagnostics.has_errors()) return;
    }
  compilation.syntax = parse_module(compilation.text, compilation.diagnostics);
}

// CompileOptions::kernels: drops every function the chosen kernels cannot reach. Module variables
// all stay, and so may name functions (a table of function pointers); those stay too. A share of
// a module compiled on a thread other than the first declares the module's variables, and the
// first defines them.
void select_kernels(Compilation& compilation) {
  if (compilation.variables_elsewhere)
    for (VariableDeclaration& variable : compilation.syntax.variables) variable.is_extern = true;
  const std::vector<std::string>& chosen = compilation.options.kernels;
  if (chosen.empty()) return;
  std::vector<Function>& functions = compilation.syntax.functions;
  for (const std::string& name : chosen)
    if (std::none_of(functions.begin(), functions.end(),
                     [&](const Function& function) { return function.is_entry && function.name == name; }))
      compilation.diagnostics.error(SourceLocation{0, 0}, "no kernel named '" + name + "'");
  std::unordered_set<std::string> reached = reachable_functions(compilation.syntax, chosen);
  std::vector<Function> kept;
  for (Function& function : functions)
    if (reached.contains(function.name)) kept.push_back(std::move(function));
  functions = std::move(kept);
}

void check(Compilation& compilation) { check_module(compilation.syntax, compilation.diagnostics); }

void lay_out(Compilation& compilation) {
  compilation.shared = lay_out_shared_memory(compilation.syntax, compilation.diagnostics);
  compilation.info = describe_module(compilation.syntax, compilation.shared);
}

void lower(Compilation& compilation) {
  compilation.ir = lower_module(compilation.syntax, compilation.shared, compilation.context, compilation.diagnostics);
}

void inline_helpers(Compilation& compilation) { inline_single_use_helpers(*compilation.ir); }

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

void host_block_local_accesses(Compilation& compilation) { host::mark_block_local_accesses(*compilation.ir); }

void host_fiber_block_functions(Compilation& compilation) { host::form_fiber_block_functions(*compilation.ir); }

void host_block_functions(Compilation& compilation) {
  std::unordered_map<std::string, uint32_t> thread_limits;
  for (const KernelInfo& kernel : compilation.info.kernels)
    if (kernel.max_threads_per_block != 0) thread_limits[kernel.name] = kernel.max_threads_per_block;
  auto stack_bytes = host::form_block_functions(*compilation.ir, thread_limits, /*vectorised=*/compilation.options.optimization_level >= 2,
                                                compilation.options.whole_warp_blocks, compilation.diagnostics);
  for (KernelInfo& kernel : compilation.info.kernels)
    if (auto found = stack_bytes.find(kernel.name); found != stack_bytes.end())
      kernel.host_stack_bytes_per_thread = static_cast<uint32_t>(std::min<uint64_t>(found->second, UINT32_MAX));
}

void host_target_machine(Compilation& compilation) {
  compilation.machine = host::target_machine(compilation.options.optimization_level, compilation.diagnostics);
  if (compilation.machine == nullptr) return;
  compilation.ir->setTargetTriple(compilation.machine->getTargetTriple().str());
  compilation.ir->setDataLayout(compilation.machine->createDataLayout());
}

void write_ir(const Compilation& compilation, std::string_view suffix) {
  if (compilation.options.ir_dump_prefix.empty()) return;
  std::error_code error;
  llvm::raw_fd_ostream out(compilation.options.ir_dump_prefix + std::string(suffix), error);
  // A dump is a debugging aid: failing to write one must not fail the compile (the runtime
  // logs an unwritable dump directory when it writes the module's PTX there).
  if (!error) compilation.ir->print(out, nullptr);
}

void dump_unoptimized_ir(Compilation& compilation) { write_ir(compilation, ".unoptimized.ll"); }

void dump_optimized_ir(Compilation& compilation) { write_ir(compilation, ".optimized.ll"); }

CompileResult run_passes(std::span<const Pass> pipeline, std::string_view ptx_text, const CompileOptions& options,
                         bool variables_elsewhere = false);

// CompileOptions::threads: each thread compiles a share of the kernels from the text up, as lazy
// loading compiles one kernel (parsing again costs less than copying the checked module), and
// the shares' objects are linked into one. The first share defines the module's variables.
void host_compile_in_shares(Compilation& compilation) {
  const CompileOptions& options = compilation.options;
  if (options.threads <= 1 || !options.ir_dump_prefix.empty()) return;
  // The threads take the shares heaviest first as they come free (kernel_selection.h).
  std::vector<std::vector<std::string>> shares = share_out_kernels(compilation.syntax, options.threads);
  if (shares.size() <= 1) return;
  std::vector<CompileResult> results(shares.size());
  {
    std::atomic<size_t> next{0};
    std::vector<std::jthread> threads;
    for (size_t thread = 0; thread < std::min<size_t>(options.threads, shares.size()); ++thread)
      threads.emplace_back([&] {
        for (size_t index = next++; index < shares.size(); index = next++) {
          CompileOptions share = options;
          share.kernels = std::move(shares[index]);
          share.threads = 1;
          results[index] = run_passes(compilation.pipeline, compilation.text, share, /*variables_elsewhere=*/index > 0);
        }
      });
  }
  // Shares that reach the same module-scope problem each report it.
  std::unordered_set<std::string> reported;
  std::vector<std::vector<uint8_t>> objects;
  std::unordered_map<std::string, KernelInfo> kernels;
  for (CompileResult& result : results) {
    for (Diagnostic& diagnostic : result.diagnostics)
      if (reported.insert(diagnostic.to_string()).second) compilation.diagnostics.add(std::move(diagnostic));
    objects.push_back(std::move(result.object));
    for (KernelInfo& kernel : result.module.kernels) kernels[kernel.name] = std::move(kernel);
  }
  if (compilation.diagnostics.has_errors()) return;
  // On one thread: lld's pool of threads, started for each link, cost more work than it saved
  // on small modules (`perf stat -r 20 xcuda compile --target host --whole-warp-blocks`, three
  // alternations: tests/cuda/mma_numerics.cu's 102-108 -> 100-101 ms of CPU, whole_warps.cu's
  // 137-143 -> 132-134; wall-clock time within 1 ms). A 1.8 MB libcusparse module linked as
  // fast; the largest, a 31 MB one, in 48-49 ms instead of 36-42, a trifle beside its compile.
  compilation.object = link_objects(objects, {"-r", "--threads=1"}, "the module's shares", compilation.diagnostics);
  // Each share describes its kernels as it compiled them (the stack its block function needs).
  for (KernelInfo& kernel : compilation.info.kernels) kernel = std::move(kernels.at(kernel.name));
  compilation.finished = true;
}

void host_optimize(Compilation& compilation) {
  const CompileOptions& options = compilation.options;
  host::optimize(*compilation.ir, *compilation.machine, options.optimization_level, options.whole_warp_blocks, options.cancelled);
  for (KernelInfo& kernel : compilation.info.kernels)
    if (const llvm::Function* block = compilation.ir->getFunction(host_abi::block_symbol_prefix + kernel.name))
      kernel.whole_warps_only = block->hasFnAttribute(host::whole_warps_only_attribute);
}

// Without the machine instruction scheduler, which out-of-order x86 processors hardly need: on
// the vector code of a warp's lanes it took 4-5% of the compile (`perf stat -r 5 xcuda compile
// --target host -j 1 --whole-warp-blocks`: tests/cuda/whole_warps.cu's module 118 -> 113.5 ms,
// mma_numerics.cu's 71.4 -> 68), and the benchmark suite's kernels ran as fast.
void host_emit_object(Compilation& compilation) {
  compilation.object = emit_object(*compilation.ir, *compilation.machine, "host", compilation.diagnostics, {&llvm::MachineSchedulerID});
}

// The whole compiler, in order. A pass that reports a problem ends the run after it, so the
// user sees every problem of the earliest stage that found any.
constexpr Pass host_pipeline[] = {
    {"parse", parse},
    {"select kernels", select_kernels},
    {"check", check},
    {"lay out memory", lay_out},
    {"host: compile in shares on threads", host_compile_in_shares},
    {"lower to LLVM IR", lower},
    {"verify", verify},
    {"host: target machine", host_target_machine},
    {"host: block-local accesses", host_block_local_accesses},
    {"host: fiber block functions", host_fiber_block_functions},
    {"host: runtime services", host_runtime_services},
    {"host: block functions", host_block_functions},
    {"inline single-use helpers", inline_helpers},
    {"verify", verify},
    {"dump unoptimized IR", dump_unoptimized_ir},
    {"host: optimize", host_optimize},
    {"dump optimized IR", dump_optimized_ir},
    {"host: emit object", host_emit_object},
};

// The AMDGPU passes. Each finds the processor again by name; the target-machine pass has
// reported an unknown one, which ends the run before any other.
amdgpu::Processor amdgpu_processor(const Compilation& compilation) {
  return *amdgpu::find_processor(compilation.options.amdgpu_processor);
}

void amdgpu_target_machine(Compilation& compilation) {
  compilation.machine = amdgpu::create_target_machine(compilation.options.amdgpu_processor,
                                                      compilation.options.optimization_level, compilation.diagnostics);
  if (compilation.machine == nullptr) return;
  compilation.ir->setTargetTriple(compilation.machine->getTargetTriple().str());
  compilation.ir->setDataLayout(compilation.machine->createDataLayout());
}

void report_not_provided(Compilation& compilation, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    SourceLocation location{0, 0};
    for (const Function& function : compilation.syntax.functions)
      if (function.name == name) location = function.location;
    compilation.diagnostics.error(location, "the " + compilation.options.amdgpu_processor + " target does not provide '" + name + "' yet");
  }
}

void amdgpu_runtime_services(Compilation& compilation) {
  report_not_provided(compilation, amdgpu::define_runtime_services(*compilation.ir, amdgpu_processor(compilation),
                                                                   compilation.shared.static_bytes));
}

void amdgpu_directed_rounding(Compilation& compilation) {
  report_not_provided(compilation, amdgpu::expand_directed_rounding(*compilation.ir));
}

void amdgpu_kernels(Compilation& compilation) {
  amdgpu::form_kernels(*compilation.ir, compilation.info, amdgpu_processor(compilation));
}

void amdgpu_device_libraries(Compilation& compilation) {
  report_not_provided(compilation, amdgpu::link_device_libraries(*compilation.ir, amdgpu_processor(compilation),
                                                                 compilation.options.code_object_version));
}

void amdgpu_finish(Compilation& compilation) {
  int version = compilation.options.code_object_version;
  if (version != 4 && version != 5) {
    compilation.diagnostics.error(SourceLocation{0, 0}, "code object version " + std::to_string(version) + " is not 4 or 5");
    return;
  }
  amdgpu::finish_module(*compilation.ir, version);
}

// Generic: the pass builder takes the target's own passes from the machine.
void amdgpu_optimize(Compilation& compilation) { host_optimize(compilation); }

void amdgpu_emit_code_object(Compilation& compilation) {
  compilation.object = amdgpu::emit_code_object(*compilation.ir, *compilation.machine, compilation.diagnostics);
}

constexpr Pass amdgpu_pipeline[] = {
    {"parse", parse},
    {"select kernels", select_kernels},
    {"check", check},
    {"lay out memory", lay_out},
    {"lower to LLVM IR", lower},
    {"inline single-use helpers", inline_helpers},
    {"verify", verify},
    {"amdgpu: target machine", amdgpu_target_machine},
    {"amdgpu: directed rounding", amdgpu_directed_rounding},
    {"amdgpu: runtime services", amdgpu_runtime_services},
    {"amdgpu: kernels", amdgpu_kernels},
    {"amdgpu: device libraries", amdgpu_device_libraries},
    {"amdgpu: finish module", amdgpu_finish},
    {"verify", verify},
    {"dump unoptimized IR", dump_unoptimized_ir},
    {"amdgpu: optimize", amdgpu_optimize},
    {"dump optimized IR", dump_optimized_ir},
    {"amdgpu: emit code object", amdgpu_emit_code_object},
};

constexpr Pass front_end[] = {
    {"parse", parse},
    {"check", check},
    {"lay out memory", lay_out},
};

constexpr Pass front_end_and_lowering[] = {
    {"parse", parse},
    {"check", check},
    {"lay out memory", lay_out},
    {"lower to LLVM IR", lower},
    {"inline single-use helpers", inline_helpers},
    {"verify", verify},
};

bool earlier(const Diagnostic& left, const Diagnostic& right) {
  return std::tie(left.line, left.column) < std::tie(right.line, right.column);
}

}  // namespace

std::string Diagnostic::to_string() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

namespace {

CompileResult run_passes(std::span<const Pass> pipeline, std::string_view ptx_text, const CompileOptions& options,
                         bool variables_elsewhere) {
  CompileResult result;
  Compilation compilation(pipeline, ptx_text, options, variables_elsewhere);
  const char* current = "start";
  try {
    for (const Pass& pass : pipeline) {
      current = pass.name;
      if (options.cancelled && options.cancelled->load(std::memory_order_relaxed)) {
        compilation.diagnostics.error(SourceLocation{0, 0}, std::string("compile cancelled before ") + pass.name);
        break;
      }
      auto start = std::chrono::steady_clock::now();
      pass.run(compilation);
      std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      result.pass_times.push_back({pass.name, elapsed.count()});
      if (compilation.diagnostics.has_errors() || compilation.finished) break;
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

}  // namespace

CompileResult compile(std::string_view ptx_text, const CompileOptions& options) {
  if (options.target == Target::amdgpu) return run_passes(amdgpu_pipeline, ptx_text, options);
  return run_passes(host_pipeline, ptx_text, options);
}

CompileResult scan(std::string_view ptx_text, const CompileOptions& options) {
  return run_passes(front_end, ptx_text, options);
}

CompileResult check_and_lower(std::string_view ptx_text, const CompileOptions& options) {
  return run_passes(front_end_and_lowering, ptx_text, options);
}

}  // namespace xcuda::ptx
