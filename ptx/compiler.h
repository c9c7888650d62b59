// The PTX compiler's whole public face. Nothing here mentions LLVM: the runtime and the
// command-line tool see PTX text go in and a relocatable object plus a description come out.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xcuda::ptx {

// One problem found in the input, pointing at the PTX source the way a C compiler would.
struct Diagnostic {
  std::string file;  // the name the caller gave the text (a module name or a path)
  uint32_t line = 0;    // 1-based
  uint32_t column = 0;  // 1-based
  std::string message;

  std::string to_string() const;  // "file:line:column: message"
};

// A kernel parameter as the .param space lays it out: the runtime packs the caller's arguments
// into one buffer at these offsets and hands the buffer to the kernel.
struct ParameterInfo {
  uint32_t offset = 0;
  uint32_t size = 0;
  uint32_t alignment = 1;
};

struct KernelInfo {
  std::string name;                        // the .entry name, also its symbol in the object
  std::vector<ParameterInfo> parameters;   // in declaration order
  uint32_t parameter_buffer_size = 0;      // bytes, including padding
  uint32_t static_shared_bytes = 0;        // the module's .shared variables (see host_abi.h)
  uint32_t local_bytes_per_thread = 0;     // .local storage, an estimate for cuFuncGetAttribute
  uint32_t max_threads_per_block = 0;      // from .maxntid/.reqntid; 0 when the PTX sets none
  uint32_t required_block[3] = {0, 0, 0};  // .reqntid, zeros when absent
  uint32_t min_blocks_per_multiprocessor = 0;  // .minnctapersm; 0 when absent
  // Host target: a kernel with barriers keeps its per-thread state (registers live across a
  // barrier, .local arrays) on the stack of the thread running the block function, this many
  // bytes (plus 4) per thread of the block; 0 for kernels without barriers.
  uint32_t host_stack_bytes_per_thread = 0;
  // The kernel may allocate memory at run time (PTX alloca): each of its threads then needs a
  // stack of the context's CU_LIMIT_STACK_SIZE bytes for it.
  bool uses_dynamic_stack = false;
  // Host, compiled with CompileOptions::whole_warp_blocks: the code runs only blocks whose x
  // extent is whole warps, having left out its code for others.
  bool whole_warps_only = false;
};

// A module-scope .global or .const variable: the object defines a symbol of this name.
struct GlobalInfo {
  std::string name;
  uint64_t size = 0;
  bool is_constant = false;  // .const rather than .global
  bool is_managed = false;   // .global .attribute(.managed): a __managed__ variable
};

struct ModuleInfo {
  std::vector<KernelInfo> kernels;
  std::vector<GlobalInfo> globals;
};

enum class Target { host, amdgpu };

struct CompileOptions {
  Target target = Target::host;
  std::string file_name = "<ptx>";  // used in diagnostics
  // 0..3. On the host, 1 is the quick first tier of the runtime's tiered compilation
  // (runtime/tier_up.h): only the passes that make the lowering's registers into values and fold
  // what it repeats, and fast instruction selection. It compiles about three times faster than 3
  // and its code runs several times slower.
  int optimization_level = 3;
  // Target::amdgpu: the processor (gfx1100, gfx90a, ...; wave32 on gfx10+, wave64 before) and
  // the code object version, 5 or 4 (what ROCm before 5.3 reads). The object is then a linked
  // code object for hipModuleLoadData.
  std::string amdgpu_processor = "gfx90a";
  int code_object_version = 5;
  // The .entry kernels to compile, with the functions they reach; empty compiles them all. Lazy
  // loading compiles one kernel at a time, so a launch never waits for the module's others.
  std::vector<std::string> kernels;
  // Host: the code will run only blocks whose x extent is whole warps (a multiple of 32), as
  // nearly every launch's are. A kernel that keeps its warp path (target/host/warp_lanes.h) then
  // goes without its code for other blocks, which costs more to compile than the rest of the
  // kernel (target/host/unused_fallbacks.h), and so, at -O2 and -O3, does a kernel without
  // barriers, or one cut only at warp exchanges that keeps no warp path, whose vectorised loops
  // over the threads then need no code for a remainder (target/host/block_function.cpp).
  // KernelInfo::whole_warps_only says which did, and the runtime compiles those again, without
  // this, for a launch of other blocks.
  bool whole_warp_blocks = false;
  // Host: at most this many threads, each compiling a share of a large module's kernels; their
  // objects are linked into one, of the same code. Not with an IR dump, which shows one module.
  unsigned threads = 1;
  // When set, the LLVM IR goes to PREFIX.unoptimized.ll and PREFIX.optimized.ll (XCUDA_DUMP_DIR).
  std::string ir_dump_prefix;
  // When given and it turns true, the compile skips its remaining optimisations and stops before
  // the next stage, failing with a diagnostic that says so: a background compile at exit.
  const std::atomic<bool>* cancelled = nullptr;
};

// How long one pass of the pipeline took (`xcuda compile --time-passes`), wall-clock seconds.
struct PassTime {
  std::string pass;
  double seconds = 0;
};

struct CompileResult {
  bool ok() const { return diagnostics.empty(); }
  std::vector<Diagnostic> diagnostics;  // every problem found, not only the first
  std::vector<PassTime> pass_times;     // the passes that ran, in order
  std::vector<uint8_t> object;          // a relocatable object for the target (ELF on host)
  ModuleInfo module;
};

// Thread-safe: the runtime may compile several modules at once.
CompileResult compile(std::string_view ptx_text, const CompileOptions& options);

// The front end only (parse, check, lay out): every kernel's and global's description and every
// problem in the text, but no object. What loading a module needs before anything is launched.
CompileResult scan(std::string_view ptx_text, const CompileOptions& options);

// The front end and the lowering to target-neutral LLVM IR, verified: every problem the text has
// short of what a target lacks, much faster than compile(), and no object. For corpus sweeps.
CompileResult check_and_lower(std::string_view ptx_text, const CompileOptions& options);

}  // namespace xcuda::ptx
