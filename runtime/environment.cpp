#include "runtime/environment.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace xcuda::runtime {
namespace {

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return (value && *value) ? value : nullptr;
}

void complain(Environment& environment, std::string_view name, std::string_view value,
              std::string_view expected) {
  environment.problems += std::string(name) + "='" + std::string(value) + "' is not " +
                          std::string(expected) + "; using the default. ";
}

bool parse_unsigned(std::string_view text, unsigned& result) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), result);
  return error == std::errc() && end == text.data() + text.size();
}

// Accepts "8.6" and "86", the two ways people write a compute capability.
bool parse_compute_capability(std::string_view text, int& major, int& minor) {
  unsigned whole = 0, fraction = 0;
  if (auto dot = text.find('.'); dot != std::string_view::npos) {
    if (!parse_unsigned(text.substr(0, dot), whole) || !parse_unsigned(text.substr(dot + 1), fraction))
      return false;
  } else {
    if (text.size() < 2 || !parse_unsigned(text, whole)) return false;
    fraction = whole % 10;
    whole /= 10;
  }
  if (whole < 3 || whole > 12 || fraction > 9) return false;
  major = static_cast<int>(whole);
  minor = static_cast<int>(fraction);
  return true;
}

Environment read_environment() {
  Environment environment;
  if (const char* value = variable("XCUDA_LOG")) {
    std::string_view level = value;
    if (level == "off" || level == "error" || level == "warn" || level == "info" ||
        level == "debug" || level == "trace")
      environment.log_level = level;
    else
      complain(environment, "XCUDA_LOG", level, "one of off|error|warn|info|debug|trace");
  }
  if (const char* value = variable("XCUDA_LOG_FILE")) environment.log_file = value;
  if (const char* value = variable("XCUDA_CC")) {
    if (!parse_compute_capability(value, environment.compute_major, environment.compute_minor))
      complain(environment, "XCUDA_CC", value, "a compute capability such as 8.6 or 86");
  }
  if (const char* value = variable("XCUDA_BACKEND")) {
    std::string_view choice = value;
    if (choice == "auto") environment.backend = BackendChoice::automatic;
    else if (choice == "host") environment.backend = BackendChoice::host;
    else if (choice == "hip") environment.backend = BackendChoice::hip;
    else complain(environment, "XCUDA_BACKEND", choice, "one of auto|host|hip");
  }
  if (const char* value = variable("XCUDA_HOST_THREADS")) {
    unsigned threads = 0;
    if (parse_unsigned(value, threads) && threads <= 4096)
      environment.host_threads = threads;
    else
      complain(environment, "XCUDA_HOST_THREADS", value, "a thread count from 0 to 4096");
  }
  return environment;
}

}  // namespace

const Environment& environment() {
  static const Environment instance = read_environment();
  return instance;
}

}  // namespace xcuda::runtime
