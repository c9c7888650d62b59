#include "runtime/library.h"

#include "runtime/fatbin_reader.h"
#include "runtime/linker.h"
#include "runtime/log.h"

namespace xcuda::runtime {

HandleRegistry<Library>& live_libraries() {
  static auto& registry = *new HandleRegistry<Library>;
  return registry;
}

HandleRegistry<Kernel>& live_kernels() {
  static auto& registry = *new HandleRegistry<Kernel>;
  return registry;
}

Expected<Function*> Kernel::function(Context& context) {
  Expected<Module*> module = library_.module(context);
  if (!module) return module.error();
  return (*module)->function(name_);
}

Library::Library(std::shared_ptr<const std::string> ptx, std::string origin)
    : ptx_(std::move(ptx)), origin_(std::move(origin)) {
  live_libraries().add(this);
}

Library::~Library() {
  live_libraries().remove(this);
  for (auto& [name, kernel] : kernels_) live_kernels().remove(kernel.get());
}

Expected<std::unique_ptr<Library>> Library::load(const void* image, std::string_view origin) {
  // Libraries are not tied to a device; PTX is chosen for the first device, which the host
  // backend's only device is.
  const DeviceProperties& device = backend().properties(0);
  Expected<LoadedPtx> ptx =
      load_linked_ptx(image, device.compute_major * 10 + device.compute_minor);
  if (!ptx) {
    logger().error("{}: {}", origin, ptx.error().message);
    return ptx.error();
  }
  return std::unique_ptr<Library>(new Library(
      std::make_shared<const std::string>(std::move(ptx->text)), std::string(origin)));
}

Expected<Module*> Library::module(Context& context) {
  std::lock_guard lock(mutex_);
  if (auto found = modules_.find(&context); found != modules_.end()) return found->second.get();
  auto loaded = Module::load_ptx(context, ptx_, origin_);
  if (!loaded) return loaded.error();
  Module* result = loaded->get();
  modules_.emplace(&context, std::move(*loaded));
  return result;
}

// Libraries are context-independent, and cudart asks for a kernel before it has made any context
// current (a program whose first CUDA call is a launch), so the names come from the front end
// alone, read once.
Expected<Kernel*> Library::kernel(std::string_view name) {
  std::lock_guard lock(mutex_);
  if (kernel_names_.empty()) {
    ptx::CompileOptions options = backend().compile_options(0);
    options.file_name = origin_;
    Expected<ptx::ModuleInfo> scanned = scan_ptx(*ptx_, options);
    if (!scanned) return scanned.error();
    for (const ptx::KernelInfo& kernel : scanned->kernels) kernel_names_.insert(kernel.name);
  }
  if (!kernel_names_.contains(name))
    return make_error(ErrorCode::not_found, "no kernel named '" + std::string(name) + "'");
  auto found = kernels_.find(name);
  if (found == kernels_.end()) {
    auto kernel = std::make_unique<Kernel>(*this, std::string(name));
    live_kernels().add(kernel.get());
    found = kernels_.emplace(std::string(name), std::move(kernel)).first;
  }
  return found->second.get();
}

Expected<std::vector<Kernel*>> Library::kernels(Context& context) {
  Expected<Module*> loaded = module(context);
  if (!loaded) return loaded.error();
  std::vector<Kernel*> result;
  for (const ptx::KernelInfo& info : (*loaded)->info().kernels) {
    Expected<Kernel*> found = kernel(info.name);
    if (!found) return found.error();
    result.push_back(*found);
  }
  return result;
}

}  // namespace xcuda::runtime
