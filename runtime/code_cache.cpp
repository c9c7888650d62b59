#include "runtime/code_cache.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

#include "runtime/cache_format.h"
#include "runtime/cache_hash.h"
#include "runtime/compiler_fingerprint.h"
#include "runtime/environment.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view entry_extension = ".xcc";
constexpr std::string_view temporary_extension = ".tmp";
// A temporary file this old belongs to a process that died while writing it.
constexpr auto abandoned_after = std::chrono::minutes(10);

// What the host target compiles for: the same CPU name and feature list the compiler hands
// LLVM, sorted because the feature map's order is not stable.
std::string host_target_description() {
  std::string description = llvm::sys::getHostCPUName().str();
  std::vector<std::string> features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures())
    features.push_back((feature.second ? "+" : "-") + feature.first().str());
  std::sort(features.begin(), features.end());
  for (const std::string& feature : features) description += "," + feature;
  return description;
}

// Error-code overloads throughout: another process may remove a file while this one looks.
bool is_entry(const fs::directory_entry& file) {
  std::error_code error;
  return file.path().extension() == entry_extension && file.is_regular_file(error);
}

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Unique per process and per call, so concurrent writers never share a temporary file.
fs::path temporary_path(const fs::path& entry) {
  static std::atomic<uint64_t> counter{0};
  fs::path result = entry;
  result += "." + std::to_string(getpid()) + "." + std::to_string(counter++) +
            std::string(temporary_extension);
  return result;
}

}  // namespace

CodeCache::CodeCache(fs::path directory, uint64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

std::string CodeCache::key(std::string_view ptx_text, const ptx::CompileOptions& options) {
  static const std::string target = host_target_description();
  // Each part is length-prefixed so that no two different inputs concatenate alike.
  std::string material;
  auto add = [&material](std::string_view part) {
    material += std::to_string(part.size()) + ":";
    material += part;
  };
  add(std::string("xcuda compiler ") + compiler_fingerprint + " llvm " LLVM_VERSION_STRING);
  add("target " + std::to_string(int(options.target)) + " " + target);
  if (options.target == ptx::Target::amdgpu)
    add(options.amdgpu_processor + " code object v" + std::to_string(options.code_object_version));
  add("optimization " + std::to_string(options.optimization_level));
  if (options.whole_warp_blocks) add("whole warp blocks");
  add("kernels " + std::to_string(options.kernels.size()));
  for (const std::string& kernel : options.kernels) add(kernel);
  add(ptx_text);
  return to_hex(sha256({reinterpret_cast<const uint8_t*>(material.data()), material.size()}));
}

fs::path CodeCache::entry_path(const std::string& key) const {
  return directory_ / (key + std::string(entry_extension));
}

std::optional<ptx::CompileResult> CodeCache::find(const std::string& key) {
  fs::path path = entry_path(key);
  std::error_code error;
  if (!fs::exists(path, error)) return std::nullopt;
  Expected<ptx::CompileResult> parsed = parse_entry(read_file(path), key);
  if (!parsed) {
    logger().warn("code cache: {} is damaged ({}); recompiling", path.string(),
                  parsed.error().message);
    return std::nullopt;
  }
  // The modification time is the least-recently-used order eviction follows; access times are
  // not kept on many file systems (noatime, relatime).
  fs::last_write_time(path, fs::file_time_type::clock::now(), error);
  return std::move(*parsed);
}

void CodeCache::store(const std::string& key, const ptx::CompileResult& compiled) {
  std::error_code error;
  fs::create_directories(directory_, error);
  fs::path path = entry_path(key);
  fs::path temporary = temporary_path(path);
  std::vector<uint8_t> bytes = serialize_entry(key, compiled);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    out.close();
    if (!out) {
      logger().warn("code cache: cannot write {}; not caching", temporary.string());
      fs::remove(temporary, error);
      return;
    }
  }
  fs::rename(temporary, path, error);
  if (error) {
    logger().warn("code cache: cannot rename {} to {}: {}", temporary.string(), path.string(),
                  error.message());
    fs::remove(temporary, error);
    return;
  }
  evict();
}

CacheUsage CodeCache::usage() const {
  CacheUsage result;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(directory_, error)) {
    if (!is_entry(file)) continue;
    uint64_t bytes = file.file_size(error);
    if (error) continue;
    result.bytes += bytes;
    ++result.entries;
  }
  return result;
}

void CodeCache::evict() {
  struct Candidate {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Candidate> entries;
  uint64_t total = 0;
  std::error_code error;
  auto now = fs::file_time_type::clock::now();
  for (const auto& file : fs::directory_iterator(directory_, error)) {
    auto used = file.last_write_time(error);
    if (error) continue;  // removed by another process meanwhile
    if (file.path().extension() == temporary_extension && now - used > abandoned_after) {
      fs::remove(file.path(), error);
      continue;
    }
    if (!is_entry(file)) continue;
    uint64_t bytes = file.file_size(error);
    if (error) continue;
    entries.push_back({file.path(), bytes, used});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(),
            [](const Candidate& a, const Candidate& b) { return a.used < b.used; });
  for (const Candidate& entry : entries) {
    if (total <= max_bytes_) break;
    // Another process may be evicting too; whoever removes the file, it is gone.
    fs::remove(entry.path, error);
    total -= entry.bytes;
    logger().debug("code cache: evicted {} ({} bytes)", entry.path.string(), entry.bytes);
  }
}

CodeCache* code_cache() {
  static CodeCache* instance = []() -> CodeCache* {
    const Environment& settings = environment();
    if (!settings.cache_enabled || settings.cache_directory.empty()) return nullptr;
    return new CodeCache(settings.cache_directory, settings.cache_max_bytes);
  }();
  return instance;
}

std::optional<CachedCompile> find_cached(std::string_view ptx_text, const ptx::CompileOptions& options) {
  CodeCache* cache = code_cache();
  if (!cache) return std::nullopt;
  CachedCompile result;
  result.key = CodeCache::key(ptx_text, options);
  std::optional<ptx::CompileResult> found = cache->find(result.key);
  if (!found) return std::nullopt;
  result.compiled = std::move(*found);
  result.from_cache = true;
  return result;
}

CachedCompile compile_with_cache(std::string_view ptx_text, const ptx::CompileOptions& options) {
  if (std::optional<CachedCompile> cached = find_cached(ptx_text, options)) return std::move(*cached);
  CachedCompile result;
  result.key = CodeCache::key(ptx_text, options);
  result.compiled = ptx::compile(ptx_text, options);
  // A compile cancelled while it emitted code may have skipped optimisations.
  bool cancelled = options.cancelled && options.cancelled->load(std::memory_order_relaxed);
  if (CodeCache* cache = code_cache(); cache && result.compiled.ok() && !cancelled)
    cache->store(result.key, result.compiled);
  return result;
}

size_t run_in_parallel(size_t count, const std::function<void(size_t index)>& work) {
  size_t threads = std::min<size_t>(usable_core_count(), count);
  if (threads <= 1) {
    for (size_t index = 0; index < count; ++index) work(index);
    return 1;
  }
  std::atomic<size_t> next{0};
  {
    std::vector<std::jthread> pool;
    for (size_t thread = 0; thread < threads; ++thread)
      pool.emplace_back([&] {
        for (size_t index; (index = next++) < count;) work(index);
      });
  }
  return threads;
}

}  // namespace xcuda::runtime
