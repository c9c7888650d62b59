#include "runtime/log.h"

#include <cstdio>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "runtime/environment.h"

namespace xcuda::runtime {
namespace {

std::shared_ptr<spdlog::logger> make_logger() {
  const Environment& settings = environment();
  std::shared_ptr<spdlog::logger> result;
  if (!settings.log_file.empty()) {
    try {
      result = spdlog::basic_logger_mt("xcuda", settings.log_file);
    } catch (const spdlog::spdlog_ex&) {
      result = spdlog::stderr_logger_mt("xcuda");
      result->error("XCUDA_LOG_FILE='{}' cannot be opened; logging to stderr", settings.log_file);
    }
  } else {
    result = spdlog::stderr_logger_mt("xcuda");
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
