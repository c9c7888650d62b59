#include "src/trace.h"

#include "runtime/environment.h"
#include "runtime/log.h"

namespace xcuda::trace {
namespace {

// Its own logger on the main one's sinks: the trace goes wherever XCUDA_LOG_FILE sends the log,
// yet XCUDA_TRACE=1 alone is enough to see it.
spdlog::logger& trace_logger() {
  static auto& instance = *new spdlog::logger("xcuda trace", runtime::logger().sinks().begin(),
                                              runtime::logger().sinks().end());
  static bool configured = [] {
    instance.set_pattern("[xcuda trace] %v");
    instance.set_level(spdlog::level::trace);
    instance.flush_on(spdlog::level::trace);
    return true;
  }();
  (void)configured;
  return instance;
}

}  // namespace

void* traced(void* function) {
  if (!function || !runtime::environment().trace) return function;
  for (size_t index = 0; index < traced_entry_count; ++index)
    if (traced_entries[index].original == function) return traced_entries[index].traced;
  return function;
}

void write_call(std::string_view symbol, CUresult result, std::string_view arguments) {
  const char* name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS) name = "unknown CUresult";
  trace_logger().info("{}({}) = {} ({})", symbol, arguments, name, int(result));
}

}  // namespace xcuda::trace
