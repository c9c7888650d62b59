#include "runtime/backend.h"

#include "runtime/environment.h"
#include "runtime/hip/hip_library.h"
#include "runtime/hip/hip_selection.h"
#include "runtime/host/host_backend.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

std::unique_ptr<Backend> choose_backend() {
  const Environment& settings = environment();
  std::unique_ptr<Backend> chosen = hip::select_hip_backend(settings, hip::load_hip_library);
  if (!chosen) {
    HostBackendOptions options;
    options.compute_major = settings.compute_major;
    options.compute_minor = settings.compute_minor;
    options.worker_count = settings.host_threads;
    chosen = make_host_backend(options);
  }
  logger().info("backend: {} ({} device)", chosen->name(), chosen->device_count());
  return chosen;
}

}  // namespace

// The runtime's singletons are never destroyed: applications call the driver from their own
// exit handlers (cudart releases its contexts there), after static destructors may have run.
Backend& backend() {
  static Backend& instance = *choose_backend().release();
  return instance;
}

}  // namespace xcuda::runtime
