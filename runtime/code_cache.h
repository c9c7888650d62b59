// The on-disk cache of compiled modules, so that an application's PTX is JIT-compiled once per
// machine rather than on every start.
//
// One file per compiled unit (a kernel with the functions it calls, or a whole module), named by
// the key: SHA-256 of the PTX text, the kernels the unit holds, the compile target (the host
// CPU's name and features), a fingerprint of the compiler's sources (so that no process runs
// machine code an older compiler left there), LLVM's version and the options. Writers create a temporary
// file in the cache directory and rename it over the entry, so readers in any process see a
// whole entry or none. Entries carry a checksum; a damaged one is logged, ignored, and replaced
// by the caller's fresh compile. When the directory grows past its limit, the entries used
// least recently (a hit refreshes an entry's modification time) are deleted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ptx/compiler.h"

namespace xcuda::runtime {

struct CacheUsage {
  uint64_t bytes = 0;
  uint64_t entries = 0;
};

class CodeCache {
 public:
  CodeCache(std::filesystem::path directory, uint64_t max_bytes);

  // The key for compiling `ptx_text` with `options` on this machine (64 hex digits).
  static std::string key(std::string_view ptx_text, const ptx::CompileOptions& options);

  // The cached result, or nothing when absent or damaged (a damaged entry is logged).
  std::optional<ptx::CompileResult> find(const std::string& key);
  // Best effort: a failure to write is logged and otherwise ignored, since the caller already
  // holds the result.
  void store(const std::string& key, const ptx::CompileResult& compiled);
  CacheUsage usage() const;
  const std::filesystem::path& directory() const { return directory_; }
  std::filesystem::path entry_path(const std::string& key) const;

 private:
  void evict();

  std::filesystem::path directory_;
  uint64_t max_bytes_;
};

// The process's cache as XCUDA_CACHE, XCUDA_CACHE_DIR and XCUDA_CACHE_MAX_SIZE configure it;
// null when disabled or when no directory can be determined.
CodeCache* code_cache();

struct CachedCompile {
  ptx::CompileResult compiled;
  bool from_cache = false;
  std::string key;  // computed even with the cache off: XCUDA_DUMP_DIR names files by it
};

// ptx::compile through the process's cache. Failed compiles are never stored.
CachedCompile compile_with_cache(std::string_view ptx_text, const ptx::CompileOptions& options);
// The cached result only: nothing when the cache is off or lacks the entry.
std::optional<CachedCompile> find_cached(std::string_view ptx_text, const ptx::CompileOptions& options);

// Runs work(0) … work(count - 1), each once, on up to one thread per core: compiling is
// CPU-bound and independent per unit. Returns how many threads ran.
size_t run_in_parallel(size_t count, const std::function<void(size_t index)>& work);

}  // namespace xcuda::runtime
