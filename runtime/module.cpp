#include "runtime/module.h"

#include "runtime/cache_dump.h"
#include "runtime/code_cache.h"
#include "runtime/fatbin_reader.h"
#include "runtime/log.h"
#include "runtime/memory.h"

namespace xcuda::runtime {

HandleRegistry<Module>& live_modules() {
  static auto& registry = *new HandleRegistry<Module>;
  return registry;
}

HandleRegistry<Function>& live_functions() {
  static auto& registry = *new HandleRegistry<Function>;
  return registry;
}

Module::Module(Context& context, std::unique_ptr<LoadedModule> loaded, ptx::ModuleInfo info)
    : context_(context), loaded_(std::move(loaded)), info_(std::move(info)) {
  live_modules().add(this);
  // Globals are device memory too: copies to and from them (cudaMemcpyToSymbol) are checked
  // against the registry like any allocation.
  for (const ptx::GlobalInfo& global : info_.globals)
    if (Expected<void*> address = loaded_->global(global.name))
      memory_registry().add(Allocation{reinterpret_cast<uintptr_t>(*address), global.size,
                                       MemoryKind::device, &context_, /*owned=*/false});
}

Module::~Module() {
  live_modules().remove(this);
  for (const ptx::GlobalInfo& global : info_.globals)
    if (Expected<void*> address = loaded_->global(global.name))
      memory_registry().remove(reinterpret_cast<uintptr_t>(*address));
  for (auto& [name, function] : functions_) live_functions().remove(function.get());
}

Expected<std::unique_ptr<Module>> Module::load(Context& context, const void* image,
                                               std::string_view origin) {
  const DeviceProperties& device = backend().properties(context.device());
  int arch = device.compute_major * 10 + device.compute_minor;
  Expected<LoadedPtx> ptx = runtime::load_ptx(image, arch);
  if (!ptx) {
    logger().error("{}: {}", origin, ptx.error().message);
    return ptx.error();
  }
  return load_ptx(context, ptx->text, origin);
}

Expected<std::unique_ptr<Module>> Module::load_ptx(Context& context, std::string_view ptx_text,
                                                   std::string_view origin) {
  ptx::CompileOptions options;
  options.target = backend().compile_target();
  options.file_name = std::string(origin);
  CachedCompile cached = compile_with_cache(ptx_text, options);
  ptx::CompileResult& compiled = cached.compiled;
  if (!compiled.ok()) {
    for (const ptx::Diagnostic& diagnostic : compiled.diagnostics)
      logger().error("{}", diagnostic.to_string());
    return make_error(ErrorCode::invalid_ptx, compiled.diagnostics.front().to_string());
  }
  logger().info("{}: {}, {} kernels", origin,
                !code_cache() ? "cache off" : cached.from_cache ? "cache hit" : "cache miss",
                compiled.module.kernels.size());
  dump_module(cached.key, ptx_text, compiled);
  ptx::ModuleInfo info = compiled.module;
  auto loaded = backend().load_module(context.device(), std::move(compiled));
  if (!loaded) {
    logger().error("{}: {}", origin, loaded.error().message);
    return loaded.error();
  }
  return std::unique_ptr<Module>(new Module(context, std::move(*loaded), std::move(info)));
}

Expected<Function*> Module::function(std::string_view name) {
  std::lock_guard lock(mutex_);
  if (auto found = functions_.find(name); found != functions_.end()) return found->second.get();
  Expected<LoadedKernel*> kernel = loaded_->kernel(name);
  if (!kernel) return kernel.error();
  auto function = std::make_unique<Function>(*this, **kernel);
  Function* result = function.get();
  live_functions().add(result);
  functions_.emplace(std::string(name), std::move(function));
  return result;
}

Expected<GlobalVariable> Module::global(std::string_view name) {
  for (const ptx::GlobalInfo& global : info_.globals) {
    if (global.name != name) continue;
    Expected<void*> address = loaded_->global(name);
    if (!address) return address.error();
    return GlobalVariable{*address, global.size};
  }
  return make_error(ErrorCode::not_found, "no global variable named '" + std::string(name) + "'");
}

}  // namespace xcuda::runtime
