#include "runtime/host/host_loader.h"

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <unistd.h>

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>

#include "ptx/host_abi.h"
#include "runtime/environment.h"
#include "runtime/graph.h"
#include "runtime/host/device_printf.h"
#include "runtime/host/fiber.h"
#include "runtime/host/host_kernel.h"
#include "runtime/host/tensor_copy.h"
#include "runtime/host/texture_sampling.h"
#include "runtime/host/worker_pool.h"
#include "runtime/log.h"

// The host target's builtin library, compiled when xcuda is built (ptx/target/host/
// builtin_library.h): its levels, named as host_abi::builtin_levels_symbol and
// builtin_level_count_symbol.
extern "C" const xcuda::ptx::host_abi::BuiltinLevel xcuda_host_builtin_levels[];
extern "C" const uint64_t xcuda_host_builtin_level_count;

namespace xcuda::runtime::host {

namespace {

bool host_runs(std::string_view processor) {
#if defined(__x86_64__)
  if (processor == "x86-64-v4") return __builtin_cpu_supports("x86-64-v4");
  if (processor == "x86-64-v3") return __builtin_cpu_supports("x86-64-v3");
  if (processor == "x86-64-v2") return __builtin_cpu_supports("x86-64-v2");
#endif
  return processor == "generic";
}

}  // namespace

std::span<const ptx::host_abi::Builtin> builtin_library() {
  // None where no level fits: an object that calls the library then fails to link, naming what.
  static const std::span<const ptx::host_abi::Builtin> chosen = [] {
    for (const ptx::host_abi::BuiltinLevel& level : std::span(xcuda_host_builtin_levels, xcuda_host_builtin_level_count))
      if (host_runs(level.processor)) return std::span(level.functions, level.count);
    return std::span<const ptx::host_abi::Builtin>();
  }();
  return chosen;
}

struct HostLoader::Jit {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  std::atomic<uint64_t> modules_loaded{0};
};

namespace {

// What the JIT reported while linking on this thread. A lookup that triggers a failed link only
// says that materialisation failed; the reason (an undefined symbol, say) goes to the session's
// error reporter, which runs on the thread that links because LLJIT's default dispatcher runs
// tasks in place.
thread_local std::string link_problems;

// XCUDA_PERF_MAP: perf(1) names code it finds in anonymous memory from /tmp/perf-PID.map, one
// "start size name" line (hexadecimal) per function. The block functions' sizes come from the
// object's symbol table; their addresses from the JIT.
void write_perf_map(llvm::MemoryBufferRef object, const std::map<std::string, uintptr_t>& addresses) {
  static std::mutex mutex;
  auto file = llvm::object::ObjectFile::createObjectFile(object);
  if (!file) {
    llvm::consumeError(file.takeError());
    return;
  }
  std::lock_guard lock(mutex);
  std::FILE* map = std::fopen(("/tmp/perf-" + std::to_string(getpid()) + ".map").c_str(), "a");
  if (map == nullptr) return;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    auto found = addresses.find(name->str());
    if (found == addresses.end()) continue;
    uint64_t size = llvm::object::ELFSymbolRef(symbol).getSize();
    std::fprintf(map, "%lx %lx %s\n", static_cast<unsigned long>(found->second), static_cast<unsigned long>(size), found->first.c_str());
  }
  std::fclose(map);
}

Error llvm_error(ErrorCode code, const std::string& context, llvm::Error error) {
  std::string message = context + ": " + llvm::toString(std::move(error));
  if (!link_problems.empty()) message += " (" + link_problems + ")";
  link_problems.clear();
  return make_error(code, std::move(message));
}

// __xcuda_set_conditional (ptx/host_abi.h).
void device_set_conditional(uint64_t handle, uint32_t value) {
  if (!set_conditional_from_device(handle, value))
    abandon_current_block(ErrorCode::illegal_address,
                          "cudaGraphSetConditional: not a conditional handle");
}

class HostModule final : public LoadedModule {
 public:
  HostModule(std::shared_ptr<HostLoader> loader, HostLoader::Jit& jit, llvm::orc::JITDylib& library)
      : loader_(std::move(loader)), jit_(jit), library_(library) {}

  ~HostModule() override { remove_library(jit_, library_); }

  // Also used to undo a load that failed half way.
  static void remove_library(HostLoader::Jit& jit, llvm::orc::JITDylib& library) {
    std::string name = library.getName();
    if (llvm::Error error = jit.lljit->getExecutionSession().removeJITDylib(library))
      logger().warn("unloading {}: {}", name, llvm::toString(std::move(error)));
  }

  Expected<LoadedKernel*> kernel(std::string_view name) override {
    auto found = kernels_.find(name);
    if (found == kernels_.end())
      return make_error(ErrorCode::not_found, "no kernel named '" + std::string(name) + "'");
    return static_cast<LoadedKernel*>(found->second.get());
  }

  Expected<void*> global(std::string_view name) override {
    auto found = globals_.find(name);
    if (found == globals_.end())
      return make_error(ErrorCode::not_found,
                        "no global variable named '" + std::string(name) + "'");
    return found->second;
  }

  void add_kernel(const ptx::KernelInfo& info, BlockFunction function) {
    kernels_.emplace(info.name, std::make_unique<HostKernel>(info, function));
  }
  void add_global(const std::string& name, void* address) { globals_.emplace(name, address); }

 private:
  std::shared_ptr<HostLoader> loader_;
  HostLoader::Jit& jit_;
  llvm::orc::JITDylib& library_;
  std::map<std::string, std::unique_ptr<HostKernel>, std::less<>> kernels_;
  std::map<std::string, void*, std::less<>> globals_;
};

}  // namespace

HostLoader::HostLoader(std::unique_ptr<Jit> jit) : jit_(std::move(jit)) {}

HostLoader::~HostLoader() = default;

Expected<std::shared_ptr<HostLoader>> HostLoader::create() {
  static const bool native_target_ready = [] {
    return !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter();
  }();
  if (!native_target_ready)
    return make_error(ErrorCode::not_supported, "LLVM cannot generate code for this machine");

  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> lljit = llvm::orc::LLJITBuilder().create();
  if (!lljit) return llvm_error(ErrorCode::not_supported, "starting the JIT", lljit.takeError());
  // ORC's default reporter would print on stderr, past our logger; the load that failed
  // reports the problem with its own error instead.
  (*lljit)->getExecutionSession().setErrorReporter([](llvm::Error error) {
    if (!link_problems.empty()) link_problems += "; ";
    link_problems += llvm::toString(std::move(error));
  });

  auto jit = std::make_unique<Jit>();
  jit->lljit = std::move(*lljit);
  return std::shared_ptr<HostLoader>(new HostLoader(std::move(jit)));
}

Expected<std::unique_ptr<LoadedModule>> HostLoader::load(const ptx::CompileResult& compiled) {
  if (compiled.object.empty())
    return make_error(ErrorCode::invalid_image, "the compiled module holds no object code");
  llvm::orc::LLJIT& lljit = *jit_->lljit;
  link_problems.clear();
  std::string name = "xcuda_module_" + std::to_string(++jit_->modules_loaded);
  llvm::Expected<llvm::orc::JITDylib&> created = lljit.createJITDylib(name);
  if (!created) return llvm_error(ErrorCode::unknown, name, created.takeError());
  llvm::orc::JITDylib& library = *created;
  auto fail = [&](Error error) -> Expected<std::unique_ptr<LoadedModule>> {
    HostModule::remove_library(*jit_, library);
    return error;
  };

  auto callback = [&](const char* symbol, auto* function) {
    return std::pair{lljit.mangleAndIntern(symbol),
                     llvm::orc::ExecutorSymbolDef(
                         llvm::orc::ExecutorAddr::fromPtr(function),
                         llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable)};
  };
  namespace abi = ptx::host_abi;
  llvm::orc::SymbolMap callbacks;
  callbacks.insert(callback(abi::vprintf_symbol, &device_vprintf));
  callbacks.insert(callback(abi::assert_fail_symbol, &device_assert_fail));
  callbacks.insert(callback(abi::trap_symbol, &device_trap));
  callbacks.insert(callback(abi::illegal_instruction_symbol, &device_illegal_instruction));
  callbacks.insert(callback(abi::stack_overflow_symbol, &device_stack_overflow));
  callbacks.insert(callback(abi::try_cancel_symbol, &try_cancel_block));
  callbacks.insert(callback(abi::set_conditional_symbol, &device_set_conditional));
  callbacks.insert(callback(abi::texture_fetch_symbol, &texture_fetch));
  callbacks.insert(callback(abi::surface_load_symbol, &surface_load));
  callbacks.insert(callback(abi::surface_store_symbol, &surface_store));
  callbacks.insert(callback(abi::surface_reduce_symbol, &surface_reduce));
  callbacks.insert(callback(abi::resource_query_symbol, &resource_query));
  callbacks.insert(callback(ptx::tensor_map::copy_symbol, &tensor_copy));
  callbacks.insert(callback(ptx::tensor_map::bulk_reduce_symbol, &bulk_reduce));
  callbacks.insert(callback(abi::fiber_run_block_symbol, &fiber_run_block));
  callbacks.insert(callback(abi::fiber_barrier_symbol, &fiber_barrier));
  callbacks.insert(callback(abi::fiber_warp_exchange_symbol, &fiber_warp_exchange));
  callbacks.insert(callback(abi::fiber_warp_peer_symbol, &fiber_warp_peer));
  callbacks.insert(callback(abi::fiber_warp_exchange_words_symbol, &fiber_warp_exchange_words));
  callbacks.insert(callback(abi::fiber_warp_peer_word_symbol, &fiber_warp_peer_word));
  callbacks.insert(callback(abi::fiber_mbarrier_symbol, &fiber_mbarrier));
  callbacks.insert(callback(abi::thread_stack_contains_symbol, &thread_stack_contains));
  for (const abi::Builtin& builtin : builtin_library()) callbacks.insert(callback(builtin.name, builtin.address));
  if (llvm::Error error = library.define(llvm::orc::absoluteSymbols(std::move(callbacks))))
    return fail(llvm_error(ErrorCode::unknown, name, std::move(error)));

  auto object = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char*>(compiled.object.data()),
                      compiled.object.size()),
      name);
  if (llvm::Error error = lljit.addObjectFile(library, std::move(object)))
    return fail(llvm_error(ErrorCode::invalid_image, name, std::move(error)));

  auto module = std::make_unique<HostModule>(shared_from_this(), *jit_, library);
  // Looking everything up now links the object now, so that a broken one fails to load rather
  // than failing its first launch.
  std::map<std::string, uintptr_t> block_functions;
  for (const ptx::KernelInfo& kernel : compiled.module.kernels) {
    std::string symbol = abi::block_symbol_prefix + kernel.name;
    llvm::Expected<llvm::orc::ExecutorAddr> address = lljit.lookup(library, symbol);
    if (!address) return llvm_error(ErrorCode::invalid_image, symbol, address.takeError());
    module->add_kernel(kernel, address->toPtr<BlockFunction>());
    block_functions[symbol] = address->getValue();
  }
  if (environment().perf_map)
    write_perf_map(llvm::MemoryBufferRef(llvm::StringRef(reinterpret_cast<const char*>(compiled.object.data()), compiled.object.size()), name),
                   block_functions);
  for (const ptx::GlobalInfo& global : compiled.module.globals) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = lljit.lookup(library, global.name);
    if (!address) return llvm_error(ErrorCode::invalid_image, global.name, address.takeError());
    module->add_global(global.name, address->toPtr<void*>());
  }
  // Most modules have none (host_abi.h).
  if (llvm::Expected<llvm::orc::ExecutorAddr> initialiser = lljit.lookup(library, abi::module_initialiser_symbol))
    initialiser->toPtr<void (*)()>()();
  else
    llvm::consumeError(initialiser.takeError());
  logger().debug("{}: loaded {} kernels and {} globals", name, compiled.module.kernels.size(),
                 compiled.module.globals.size());
  return std::unique_ptr<LoadedModule>(std::move(module));
}

}  // namespace xcuda::runtime::host
