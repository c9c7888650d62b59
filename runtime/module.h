// A loaded module: the application's image (fatbin, wrapper or PTX text) and the description of
// its kernels and global variables. Loading only reads the PTX's declarations (ptx::scan);
// machine code comes later, one compile unit at a time, when a launch or a global first needs
// it, or for every unit at once, in parallel, when XCUDA_EAGER=1.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend.h"
#include "runtime/code_cache.h"
#include "runtime/context.h"
#include "runtime/handles.h"

namespace xcuda::runtime {

class Module;

inline constexpr uint32_t whole_warp = 32;

class Function {
 public:
  Function(Module& module, const ptx::KernelInfo& info) : module_(module), info_(info) {}
  Module& module() const { return module_; }
  // The description loading found, which launches are checked against.
  const ptx::KernelInfo& info() const { return info_; }
  // The kernel ready to run blocks `block_width` threads wide along x, compiled (or read from the
  // code cache) on first use. A width that is not whole warps may need code of its own
  // (ptx::CompileOptions::whole_warp_blocks), compiled when a launch first asks for it.
  Expected<LoadedKernel*> kernel(uint32_t block_width = whole_warp);
  // Whether kernel() would answer without compiling (cuFuncIsLoaded).
  bool loaded();

  // cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): what launches may ask.
  uint32_t max_dynamic_shared_bytes = 48 * 1024;

 private:
  Module& module_;
  const ptx::KernelInfo& info_;
};

struct GlobalVariable {
  void* address = nullptr;
  size_t size = 0;
  bool is_managed = false;  // a __managed__ variable (cuLibraryGetManaged)
};

// How a module is compiled: one unit per kernel (with the functions it calls), in the order of
// `info.kernels`, so that a launch waits for its own kernel only. A module with .global or
// .const variables is one unit instead: each unit is linked on its own, and the kernels must
// share one copy of those variables. Each unit is its own code-cache entry. On the host a
// kernel's unit is compiled in two tiers (tier_up.h), for blocks of whole warps; a launch of
// other blocks runs that code where it runs any block, and otherwise has the kernel compiled
// again, for blocks of any width, as a unit of its own.
std::vector<ptx::CompileOptions> compile_units(const ptx::ModuleInfo& info,
                                               const ptx::CompileOptions& base);
// The unit that compiles the same kernel as `whole_warps_unit` (one of compile_units' with
// whole_warp_blocks) for blocks of any width.
ptx::CompileOptions any_width_unit(ptx::CompileOptions whole_warps_unit);

// The front end only (ptx::scan): what loading needs, and every syntax or type error, found at
// load as the application expects. Fails with invalid_ptx whose message has every diagnostic,
// one per line (what JIT error logs show).
Expected<ptx::ModuleInfo> scan_ptx(std::string_view ptx_text, const ptx::CompileOptions& options);

class Module {
 public:
  // `image` is whatever the application passed: a fatbin wrapper, a fatbin, or PTX text
  // (NUL-terminated). `origin` names it in diagnostics.
  static Expected<std::unique_ptr<Module>> load(Context& context, const void* image,
                                                std::string_view origin);
  // A library shares its text with the modules it loads in each context.
  static Expected<std::unique_ptr<Module>> load_ptx(Context& context,
                                                    std::shared_ptr<const std::string> ptx_text,
                                                    std::string_view origin);
  ~Module();

  Context& context() const { return context_; }
  const ptx::ModuleInfo& info() const { return info_; }
  Expected<Function*> function(std::string_view name);
  // A global's address exists only once its unit is linked: this compiles the module if needed.
  Expected<GlobalVariable> global(std::string_view name);
  Expected<LoadedKernel*> loaded_kernel(std::string_view name, uint32_t block_width);
  bool kernel_loaded(std::string_view name);

 private:
  // The optimised code of a unit whose kernels run the first tier's, once the background
  // compile has linked it; shared with that compile, which a module unloaded meanwhile cancels.
  struct TierUp {
    std::mutex mutex;
    bool cancelled = false;
    std::unique_ptr<LoadedModule> optimized;
    // The background compile was stopped before it finished (its thread ended): the kernel's
    // next launch queues it again.
    std::atomic<bool> stopped{false};
  };

  struct Unit {
    ptx::CompileOptions options;  // the optimised tier's
    std::unique_ptr<LoadedModule> loaded;
    // A unit that failed to compile or link fails every later use the same way, without
    // compiling again.
    std::optional<Error> failure;
    std::shared_ptr<TierUp> tier_up;  // set when `loaded` holds the first tier's code
  };

  // The unit that compiles kernel `name` for blocks `block_width` wide. mutex_ held.
  Unit& unit_of(std::string_view name, uint32_t block_width);
  // Whether the unit's code for kernel `name` runs blocks of any width, and will go on doing so
  // (ptx::KernelInfo::whole_warps_only). mutex_ held.
  bool takes_any_width(Unit& unit, std::string_view name);

  Module(Context& context, std::shared_ptr<const std::string> ptx_text, std::string origin,
         std::string key, ptx::ModuleInfo info);
  // Compiles, in parallel, and links whichever of `units` are not linked yet. mutex_ held.
  Status prepare(std::vector<Unit*> units);
  // The unit's first object: the first tier's (`quick`) where tiering applies and the cache lacks
  // the optimised one.
  struct FirstCompile {
    CachedCompile result;
    bool quick = false;
  };
  FirstCompile compile_first(const Unit& unit) const;
  void link(Unit& unit, ptx::CompileResult compiled);
  // Queues the optimised compile of a unit that runs the first tier's code.
  void tier_up(Unit& unit);
  std::string describe(const Unit& unit) const;

  Context& context_;
  std::shared_ptr<const std::string> ptx_;
  std::string origin_;
  std::string key_;  // the whole module's cache key: names its dumps
  ptx::ModuleInfo info_;
  std::vector<Unit> units_;
  // Where units_ are compiled for blocks of whole warps only: the same units for other blocks.
  std::vector<Unit> any_width_units_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Function>, std::less<>> functions_;
  bool globals_registered_ = false;
};

HandleRegistry<Module>& live_modules();
HandleRegistry<Function>& live_functions();

}  // namespace xcuda::runtime
