#include "runtime/host/host_properties.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <fstream>
#include <string>
#include <string_view>

namespace xcuda::runtime::host {
namespace {

// The value of the first "key : value" line of /proc/cpuinfo with this key, or "".
std::string cpuinfo_value(std::string_view key) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string_view name(line.data(), colon);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
    if (name != key) continue;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

std::string first_line(const char* path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

int clamp_to_int(long long value) {
  return static_cast<int>(std::clamp<long long>(value, 0, INT_MAX));
}

// From cpuinfo's current MHz where x86 reports it, else the kernel's maximum frequency.
int clock_rate_khz() {
  std::string megahertz = cpuinfo_value("cpu MHz");
  double value = 0;
  if (!megahertz.empty() &&
      std::from_chars(megahertz.data(), megahertz.data() + megahertz.size(), value).ec ==
          std::errc() &&
      value > 0)
    return clamp_to_int(static_cast<long long>(value * 1000));
  std::string kilohertz = first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  long long frequency = 0;
  if (std::from_chars(kilohertz.data(), kilohertz.data() + kilohertz.size(), frequency).ec ==
          std::errc() &&
      frequency > 0)
    return clamp_to_int(frequency);
  return DeviceProperties{}.clock_rate_khz;
}

// The GPU's L2 is the cache all its multiprocessors share; on a CPU that is the last level.
int last_level_cache_bytes() {
  for (int level : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long size = sysconf(level);
    if (size > 0) return clamp_to_int(size);
  }
  return 0;
}

uint64_t fnv1a(std::string_view text, uint64_t hash) {
  for (unsigned char byte : text) {
    hash ^= byte;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// Stable for a machine and CPU across runs, distinct between machines, as a GPU's UUID is.
void machine_uuid(std::string_view cpu_model, unsigned device_index, uint8_t (&uuid)[16]) {
  std::string identity = first_line("/etc/machine-id") + '\n' + std::string(cpu_model);
  if (device_index > 0) identity += '\n' + std::to_string(device_index);
  uint64_t halves[2] = {fnv1a(identity, 0xcbf29ce484222325ull),
                        fnv1a(identity, 0x84222325cbf29ce4ull)};
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<uint8_t>(halves[i / 8] >> (8 * (i % 8)));
  // An RFC 9562 version 8 ("custom") UUID, so tools that parse UUIDs accept it.
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0f) | 0x80);
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3f) | 0x80);
}

}  // namespace

DeviceProperties describe_host_cpu(int compute_major, int compute_minor, unsigned worker_count,
                                   unsigned device_index) {
  DeviceProperties properties;
  std::string model = cpuinfo_value("model name");
  properties.name = "xcuda host: " + (model.empty() ? std::string("CPU") : model);
  machine_uuid(model, device_index, properties.uuid);
  properties.pci_bus_id = clamp_to_int(device_index);
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0)
    properties.total_memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  properties.compute_major = compute_major;
  properties.compute_minor = compute_minor;
  properties.multiprocessor_count = clamp_to_int(worker_count);
  properties.clock_rate_khz = clock_rate_khz();
  properties.l2_cache_bytes = last_level_cache_bytes();
  properties.integrated = true;
  properties.virtual_memory = true;
  // A worker runs one block at a time: each is a multiprocessor holding one block, which is
  // what the occupancy calculator and cooperative launches must count with.
  properties.max_blocks_per_multiprocessor = 1;
  properties.max_threads_per_multiprocessor = properties.max_threads_per_block;
  // Grids of different streams share the workers.
  properties.concurrent_kernels = true;
  return properties;
}

}  // namespace xcuda::runtime::host
