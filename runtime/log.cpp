#include "runtime/log.h"

#include <cstdio>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "runtime/environment.h"

namespace xcuda::runtime {
namespace {

// The logger is kept out of spdlog's global registry: an application using spdlog itself, or a
// second copy of the runtime in one process, must not collide with it by name.
std::shared_ptr<spdlog::logger> make_logger() {
  const Environment& settings = environment();
  std::shared_ptr<spdlog::logger> result;
  if (!settings.log_file.empty()) {
    try {
      result = std::make_shared<spdlog::logger>(
          "xcuda", std::make_shared<spdlog::sinks::basic_file_sink_mt>(settings.log_file));
    } catch (const spdlog::spdlog_ex&) {
      result = std::make_shared<spdlog::logger>(
          "xcuda", std::make_shared<spdlog::sinks::stderr_sink_mt>());
      result->error("XCUDA_LOG_FILE='{}' cannot be opened; logging to stderr", settings.log_file);
    }
  } else {
    result = std::make_shared<spdlog::logger>("xcuda",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  result->set_pattern("[xcuda %l] %v");
  result->set_level(spdlog::level::from_str(settings.log_level));
  result->flush_on(spdlog::level::trace);
  // A malformed XCUDA_* variable is the user's mistake to hear about even with logging off.
  if (!settings.problems.empty()) std::fprintf(stderr, "xcuda: %s\n", settings.problems.c_str());
  return result;
}

}  // namespace

spdlog::logger& logger() {
  static auto& instance = *new std::shared_ptr<spdlog::logger>(make_logger());
  return *instance;
}

}  // namespace xcuda::runtime
