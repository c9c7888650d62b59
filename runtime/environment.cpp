#include "runtime/environment.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <thread>

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

// "1073741824", "512M", "1G": binary multiples, as people size caches.
bool parse_size(std::string_view text, uint64_t& result) {
  int shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K': case 'k': shift = 10; break;
      case 'M': case 'm': shift = 20; break;
      case 'G': case 'g': shift = 30; break;
      default: break;
    }
    if (shift) text.remove_suffix(1);
  }
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return false;
  if (value > (UINT64_MAX >> shift)) return false;
  result = value << shift;
  return true;
}

void parse_switch(Environment& environment, const char* name, bool& result) {
  const char* value = variable(name);
  if (!value) return;
  std::string_view text = value;
  if (text == "1") result = true;
  else if (text == "0") result = false;
  else complain(environment, name, text, "0 or 1");
}

std::string default_cache_directory() {
  if (const char* value = variable("XDG_CACHE_HOME")) return std::string(value) + "/xcuda";
  if (const char* value = variable("HOME")) return std::string(value) + "/.cache/xcuda";
  return {};
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
  if (const char* value = variable("XCUDA_DEVICE_MAP")) {
    if (!parse_device_map(value, environment.device_map))
      complain(environment, "XCUDA_DEVICE_MAP", value,
               "a list such as 0:1,1:0 numbering CUDA devices from 0, each HIP device once");
  }
  if (const char* value = variable("XCUDA_HOST_THREADS")) {
    unsigned threads = 0;
    if (parse_unsigned(value, threads) && threads <= 4096)
      environment.host_threads = threads;
    else
      complain(environment, "XCUDA_HOST_THREADS", value, "a thread count from 0 to 4096");
  }
  if (const char* value = variable("XCUDA_HOST_DEVICES")) {
    unsigned devices = 0;
    if (parse_unsigned(value, devices) && devices >= 1 && devices <= 64)
      environment.host_devices = devices;
    else
      complain(environment, "XCUDA_HOST_DEVICES", value, "a device count from 1 to 64");
  }
  parse_switch(environment, "XCUDA_CACHE", environment.cache_enabled);
  if (const char* value = variable("XCUDA_CACHE_DIR")) environment.cache_directory = value;
  else environment.cache_directory = default_cache_directory();
  if (const char* value = variable("XCUDA_CACHE_MAX_SIZE")) {
    if (!parse_size(value, environment.cache_max_bytes))
      complain(environment, "XCUDA_CACHE_MAX_SIZE", value, "a size such as 1073741824, 512M or 1G");
  }
  parse_switch(environment, "XCUDA_TRACE", environment.trace);
  parse_switch(environment, "XCUDA_EAGER", environment.eager);
  parse_switch(environment, "XCUDA_TIERED", environment.tiered);
  parse_switch(environment, "XCUDA_PERF_MAP", environment.perf_map);
  if (const char* value = variable("XCUDA_DUMP_DIR")) environment.dump_directory = value;
  if (const char* value = variable("XCUDA_POOL_SIZE")) {
    if (!parse_size(value, environment.pool_bytes))
      complain(environment, "XCUDA_POOL_SIZE", value, "a size such as 268435456, 256M or 1G");
  }
  return environment;
}

}  // namespace

bool parse_device_map(std::string_view text, std::vector<int>& map) {
  // More devices than any machine has: a typo, not a request.
  constexpr unsigned most_devices = 1024;
  std::vector<int> parsed;
  std::vector<bool> hip_seen(most_devices, false);
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view pair = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return false;  // a trailing comma
    size_t colon = pair.find(':');
    if (colon == std::string_view::npos) return false;
    unsigned cuda = 0, hip = 0;
    if (!parse_unsigned(pair.substr(0, colon), cuda) ||
        !parse_unsigned(pair.substr(colon + 1), hip))
      return false;
    if (cuda >= most_devices || hip >= most_devices || hip_seen[hip]) return false;
    hip_seen[hip] = true;
    if (parsed.size() <= cuda) parsed.resize(cuda + 1, -1);
    if (parsed[cuda] != -1) return false;
    parsed[cuda] = static_cast<int>(hip);
  }
  for (int hip : parsed)
    if (hip == -1) return false;  // a CUDA ordinal left out
  if (parsed.empty()) return false;
  map = std::move(parsed);
  return true;
}

const Environment& environment() {
  static const Environment instance = read_environment();
  return instance;
}

unsigned usable_core_count() {
  cpu_set_t cores;
  if (sched_getaffinity(0, sizeof cores, &cores) == 0 && CPU_COUNT(&cores) > 0)
    return static_cast<unsigned>(CPU_COUNT(&cores));
  return std::max(std::thread::hardware_concurrency(), 1u);
}

}  // namespace xcuda::runtime
