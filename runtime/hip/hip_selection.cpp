#include "runtime/hip/hip_selection.h"

#include <cstdio>

#include "runtime/hip/hip_backend.h"
#include "runtime/log.h"

namespace xcuda::runtime::hip {
namespace {

Expected<std::unique_ptr<HipBackend>> open(const Environment& settings, const HipLoader& load) {
  Expected<HipFunctions> functions = load();
  if (!functions) return functions.error();
  HipBackendOptions options;
  options.compute_major = settings.compute_major;
  options.compute_minor = settings.compute_minor;
  options.device_map = settings.device_map;
  return open_hip_backend(std::move(*functions), options);
}

}  // namespace

std::unique_ptr<Backend> select_hip_backend(const Environment& settings, const HipLoader& load) {
  if (settings.backend == BackendChoice::host) return nullptr;
  Expected<std::unique_ptr<HipBackend>> opened = open(settings, load);
  if (opened) return std::move(*opened);
  if (settings.backend == BackendChoice::automatic) {
    logger().info("no usable AMD GPU ({}); using the host CPU", opened.error().message);
    return nullptr;
  }
  logger().error("XCUDA_BACKEND=hip, but no usable AMD GPU: {}", opened.error().message);
  std::fprintf(stderr, "xcuda: XCUDA_BACKEND=hip, but no usable AMD GPU: %s\n",
               opened.error().message.c_str());
  return make_deviceless_hip_backend();
}

}  // namespace xcuda::runtime::hip
