#include "runtime/module.h"

#include <algorithm>
#include <chrono>

#include "runtime/cache_dump.h"
#include "runtime/code_cache.h"
#include "runtime/environment.h"
#include "runtime/fatbin_reader.h"
#include "runtime/linker.h"
#include "runtime/log.h"
#include "runtime/memory.h"
#include "runtime/tier_up.h"

namespace xcuda::runtime {

namespace {

// The backend loads one module at a time; the background compile links too.
std::mutex& link_mutex() {
  static auto& mutex = *new std::mutex;
  return mutex;
}

Expected<std::unique_ptr<LoadedModule>> load_module(int device, ptx::CompileResult compiled) {
  std::lock_guard lock(link_mutex());
  return backend().load_module(device, std::move(compiled));
}

}  // namespace

HandleRegistry<Module>& live_modules() {
  static auto& registry = *new HandleRegistry<Module>;
  return registry;
}

HandleRegistry<Function>& live_functions() {
  static auto& registry = *new HandleRegistry<Function>;
  return registry;
}

Expected<LoadedKernel*> Function::kernel(uint32_t block_width) { return module_.loaded_kernel(info_.name, block_width); }
bool Function::loaded() { return module_.kernel_loaded(info_.name); }

std::vector<ptx::CompileOptions> compile_units(const ptx::ModuleInfo& info,
                                               const ptx::CompileOptions& base) {
  if (!info.globals.empty() || info.kernels.empty()) {
    // One unit, so every kernel waits for all: a large module's compile in shares on threads.
    ptx::CompileOptions whole = base;
    whole.threads = usable_core_count();
    return {whole};
  }
  std::vector<ptx::CompileOptions> units(info.kernels.size(), base);
  for (size_t index = 0; index < units.size(); ++index) {
    units[index].kernels = {info.kernels[index].name};
    units[index].whole_warp_blocks = base.target == ptx::Target::host;
  }
  return units;
}

ptx::CompileOptions any_width_unit(ptx::CompileOptions whole_warps_unit) {
  whole_warps_unit.whole_warp_blocks = false;
  return whole_warps_unit;
}

Module::Module(Context& context, std::shared_ptr<const std::string> ptx_text, std::string origin,
               std::string key, ptx::ModuleInfo info)
    : context_(context),
      ptx_(std::move(ptx_text)),
      origin_(std::move(origin)),
      key_(std::move(key)),
      info_(std::move(info)) {
  ptx::CompileOptions base = backend().compile_options(context_.device());
  base.file_name = origin_;
  for (ptx::CompileOptions& options : compile_units(info_, base)) {
    bool whole = options.kernels.empty();
    options.ir_dump_prefix = dump_prefix(key_, whole ? std::nullopt : std::optional(units_.size()));
    if (options.whole_warp_blocks) {
      ptx::CompileOptions any_width = any_width_unit(options);
      if (!any_width.ir_dump_prefix.empty()) any_width.ir_dump_prefix += ".any_width";
      any_width_units_.push_back(Unit{std::move(any_width), nullptr, std::nullopt, nullptr});
    }
    units_.push_back(Unit{std::move(options), nullptr, std::nullopt, nullptr});
  }
  live_modules().add(this);
}

Module::~Module() {
  live_modules().remove(this);
  for (std::vector<Unit>* units : {&units_, &any_width_units_})
    for (Unit& unit : *units) {
      if (!unit.tier_up) continue;
      std::lock_guard lock(unit.tier_up->mutex);
      unit.tier_up->cancelled = true;
    }
  if (globals_registered_)
    for (const ptx::GlobalInfo& global : info_.globals)
      if (Expected<void*> address = units_.front().loaded->global(global.name))
        memory_registry().remove(reinterpret_cast<uintptr_t>(*address));
  for (auto& [name, function] : functions_) live_functions().remove(function.get());
}

Expected<ptx::ModuleInfo> scan_ptx(std::string_view ptx_text, const ptx::CompileOptions& options) {
  ptx::CompileResult scanned = ptx::scan(ptx_text, options);
  if (scanned.ok()) return std::move(scanned.module);
  std::string message;
  for (const ptx::Diagnostic& diagnostic : scanned.diagnostics) {
    logger().error("{}", diagnostic.to_string());
    message += (message.empty() ? "" : "\n") + diagnostic.to_string();
  }
  return make_error(ErrorCode::invalid_ptx, std::move(message));
}

Expected<std::unique_ptr<Module>> Module::load(Context& context, const void* image,
                                               std::string_view origin) {
  const DeviceProperties& device = backend().properties(context.device());
  int arch = device.compute_major * 10 + device.compute_minor;
  Expected<LoadedPtx> ptx = load_linked_ptx(image, arch);
  if (!ptx) {
    logger().error("{}: {}", origin, ptx.error().message);
    return ptx.error();
  }
  return load_ptx(context, std::make_shared<const std::string>(std::move(ptx->text)), origin);
}

Expected<std::unique_ptr<Module>> Module::load_ptx(Context& context,
                                                   std::shared_ptr<const std::string> ptx_text,
                                                   std::string_view origin) {
  ptx::CompileOptions options = backend().compile_options(context.device());
  options.file_name = std::string(origin);
  Expected<ptx::ModuleInfo> scanned = scan_ptx(*ptx_text, options);
  if (!scanned) return scanned.error();
  std::string key = CodeCache::key(*ptx_text, options);
  dump_ptx(key, *ptx_text);
  bool eager = environment().eager;
  logger().info("{}: {} kernels, {} globals, module {}; compiling {}", origin,
                scanned->kernels.size(), scanned->globals.size(), key,
                eager ? "every kernel now (XCUDA_EAGER=1)" : "each kernel on first use");
  std::unique_ptr<Module> module(new Module(context, std::move(ptx_text), std::string(origin),
                                            std::move(key), std::move(*scanned)));
  if (eager) {
    std::lock_guard lock(module->mutex_);
    std::vector<Unit*> all;
    for (Unit& unit : module->units_) all.push_back(&unit);
    if (Status status = module->prepare(std::move(all)); !status) return status.error();
  }
  return module;
}

std::string Module::describe(const Unit& unit) const {
  if (unit.options.kernels.empty()) return fmt::format("all {} kernels", info_.kernels.size());
  return fmt::format("kernel {} (1 of {}){}", unit.options.kernels.front(), info_.kernels.size(),
                     any_width_units_.empty() || unit.options.whole_warp_blocks ? "" : ", for blocks of any width");
}

Status Module::prepare(std::vector<Unit*> units) {
  std::vector<Unit*> pending;
  for (Unit* unit : units)
    if (!unit->loaded && !unit->failure) pending.push_back(unit);
  std::vector<FirstCompile> results(pending.size());
  std::vector<double> milliseconds(pending.size());
  run_in_parallel(pending.size(), [&](size_t index) {
    auto start = std::chrono::steady_clock::now();
    results[index] = compile_first(*pending[index]);
    milliseconds[index] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  });
  // Linking stays on this thread: the backend loads one module at a time.
  for (size_t index = 0; index < pending.size(); ++index) {
    auto& [result, quick] = results[index];
    const char* state = !code_cache() ? "cache off" : result.from_cache ? "cache hit" : "cache miss";
    logger().info("{}: {}, {}{}, {:.1f} ms", origin_, state, describe(*pending[index]),
                  quick ? ", first tier" : "", milliseconds[index]);
    link(*pending[index], std::move(result.compiled));
    if (quick && pending[index]->loaded) tier_up(*pending[index]);
  }
  for (const Unit* unit : units)
    if (unit->failure) return *unit->failure;
  return {};
}

Module::FirstCompile Module::compile_first(const Unit& unit) const {
  // Eager loading asked to pay for compiling at load; a unit with globals is linked once.
  bool tiered = environment().tiered && !environment().eager && !unit.options.kernels.empty() &&
                unit.options.target == ptx::Target::host;
  if (!tiered) return {compile_with_cache(*ptx_, unit.options), false};
  if (std::optional<CachedCompile> cached = find_cached(*ptx_, unit.options)) return {std::move(*cached), false};
  ptx::CompileOptions first = unit.options;
  first.optimization_level = 1;
  return {compile_with_cache(*ptx_, first), true};
}

void Module::tier_up(Unit& unit) {
  unit.tier_up = std::make_shared<TierUp>();
  run_in_background([tier_up = unit.tier_up, ptx = ptx_, options = unit.options,
                     quick = unit.loaded.get(), device = context_.device(),
                     origin = origin_](const std::atomic<bool>& stopping) mutable {
    auto start = std::chrono::steady_clock::now();
    options.cancelled = &stopping;
    CachedCompile result = stopping.load(std::memory_order_relaxed) ? CachedCompile{} : compile_with_cache(*ptx, options);
    if (stopping.load(std::memory_order_relaxed)) {
      tier_up->stopped.store(true, std::memory_order_relaxed);
      return;
    }
    std::lock_guard lock(tier_up->mutex);
    if (tier_up->cancelled) return;
    const std::string& name = options.kernels.front();
    if (!result.compiled.ok()) {
      logger().warn("{}: kernel {} keeps its first tier's code: the optimised compile failed: {}",
                    origin, name, result.compiled.diagnostics.front().to_string());
      return;
    }
    Expected<std::unique_ptr<LoadedModule>> optimized = load_module(device, std::move(result.compiled));
    Expected<LoadedKernel*> better = optimized ? (*optimized)->kernel(name) : optimized.error();
    Expected<LoadedKernel*> current = quick->kernel(name);
    if (!better || !current || !(*current)->adopt_code(**better)) {
      logger().warn("{}: kernel {} keeps its first tier's code: {}", origin, name,
                    !better ? better.error().message : "the optimised code expects another frame");
      return;
    }
    tier_up->optimized = std::move(*optimized);
    logger().info("{}: kernel {} runs optimised code from now on ({}, {:.1f} ms in the background)", origin, name,
                  result.from_cache ? "cache hit" : "cache miss",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  });
}

void Module::link(Unit& unit, ptx::CompileResult compiled) {
  if (!compiled.ok()) {
    for (const ptx::Diagnostic& diagnostic : compiled.diagnostics)
      logger().error("{}", diagnostic.to_string());
    unit.failure = make_error(ErrorCode::invalid_ptx, compiled.diagnostics.front().to_string());
    return;
  }
  dump_object(unit.options.ir_dump_prefix, compiled);
  auto loaded = load_module(context_.device(), std::move(compiled));
  if (!loaded) {
    logger().error("{}: {}", origin_, loaded.error().message);
    unit.failure = loaded.error();
    return;
  }
  unit.loaded = std::move(*loaded);
  if (!unit.options.kernels.empty()) return;
  // Globals are device memory too: copies to and from them (cudaMemcpyToSymbol) are checked
  // against the registry like any allocation; __managed__ ones are managed memory.
  for (const ptx::GlobalInfo& global : info_.globals)
    if (Expected<void*> address = unit.loaded->global(global.name))
      memory_registry().add(Allocation{reinterpret_cast<uintptr_t>(*address), global.size,
                                       global.is_managed ? MemoryKind::managed : MemoryKind::device, &context_,
                                       /*owned=*/false});
  globals_registered_ = true;
}

Expected<Function*> Module::function(std::string_view name) {
  std::lock_guard lock(mutex_);
  if (auto found = functions_.find(name); found != functions_.end()) return found->second.get();
  for (const ptx::KernelInfo& kernel : info_.kernels) {
    if (kernel.name != name) continue;
    auto function = std::make_unique<Function>(*this, kernel);
    Function* result = function.get();
    live_functions().add(result);
    functions_.emplace(std::string(name), std::move(function));
    return result;
  }
  return make_error(ErrorCode::not_found, "no kernel named '" + std::string(name) + "'");
}

Module::Unit& Module::unit_of(std::string_view name, uint32_t block_width) {
  std::vector<Unit>& units = block_width % whole_warp != 0 && !any_width_units_.empty() ? any_width_units_ : units_;
  // compile_units: a unit per kernel in the kernels' order, or one unit for all.
  for (size_t index = 0; index < info_.kernels.size() && units.size() > 1; ++index)
    if (info_.kernels[index].name == name) return units[index];
  return units.front();
}

bool Module::kernel_loaded(std::string_view name) {
  std::lock_guard lock(mutex_);
  // Loaded for blocks of either kind: a launch of either ran it.
  return unit_of(name, whole_warp).loaded != nullptr || unit_of(name, /*block_width=*/1).loaded != nullptr;
}

bool Module::takes_any_width(Unit& unit, std::string_view name) {
  if (!unit.loaded) return false;
  LoadedModule* final_code = unit.loaded.get();
  std::unique_lock<std::mutex> tier_lock;
  if (unit.tier_up) {
    // The first tier's code is replaced in the background, perhaps by code for whole warps.
    tier_lock = std::unique_lock(unit.tier_up->mutex);
    final_code = unit.tier_up->optimized.get();
    if (!final_code) return false;
  }
  Expected<LoadedKernel*> kernel = final_code->kernel(name);
  return kernel && !(*kernel)->info().whole_warps_only;
}

Expected<LoadedKernel*> Module::loaded_kernel(std::string_view name, uint32_t block_width) {
  std::lock_guard lock(mutex_);
  Unit* unit = &unit_of(name, whole_warp);
  // Code for blocks of whole warps may run any block (KernelInfo::whole_warps_only says where it
  // does not: kernels with warp paths, and at -O2 and -O3 those without barriers): blocks of
  // another width take it where it is linked or cached, and final, unless they have code of
  // their own already.
  if (Unit& any_width = unit_of(name, block_width); &any_width != unit) {
    if (any_width.loaded || any_width.failure) {
      unit = &any_width;
    } else {
      if (!unit->loaded && !unit->failure)
        if (std::optional<CachedCompile> cached = find_cached(*ptx_, unit->options)) {
          logger().info("{}: cache hit, {}, for a launch of blocks {} wide", origin_, describe(*unit), block_width);
          link(*unit, std::move(cached->compiled));
        }
      if (!takes_any_width(*unit, name)) unit = &any_width;
    }
  }
  // Every launch comes here: once loaded, nothing to prepare (no vector, no thread count).
  if (unit->loaded) {
    if (unit->tier_up && unit->tier_up->stopped.load(std::memory_order_relaxed)) tier_up(*unit);
    return unit->loaded->kernel(name);
  }
  if (Status status = prepare({unit}); !status) return status.error();
  return unit->loaded->kernel(name);
}

Expected<GlobalVariable> Module::global(std::string_view name) {
  for (const ptx::GlobalInfo& global : info_.globals) {
    if (global.name != name) continue;
    // compile_units: a module with globals is a single unit.
    std::lock_guard lock(mutex_);
    if (Status status = prepare({&units_.front()}); !status) return status.error();
    Expected<void*> address = units_.front().loaded->global(name);
    if (!address) return address.error();
    return GlobalVariable{*address, global.size, global.is_managed};
  }
  return make_error(ErrorCode::not_found, "no global variable named '" + std::string(name) + "'");
}

}  // namespace xcuda::runtime
