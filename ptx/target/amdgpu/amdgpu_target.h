// The AMDGPU target (amdgcn-amd-amdhsa): takes the target-neutral module from lower/ and makes
// it a code object that hipModuleLoadData loads. Each function is one pass of the compiler's
// pipeline (see compiler.cpp). RDNA processors (gfx10+) run wave32, where a CUDA warp is a
// wavefront; CDNA (gfx9) runs wave64, where a CUDA warp is half a wavefront.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler.h"
#include "diagnostics.h"

namespace llvm {
class Function;
class GlobalVariable;
class Module;
class TargetMachine;
}  // namespace llvm

namespace xcuda::ptx::amdgpu {

// What the passes need to know about the processor.
struct Processor {
  std::string name;            // gfx90a
  uint32_t wavefront_size = 64;
  uint32_t isa_version = 0;    // major * 1000 + minor * 100 + stepping, as the device libraries count
};

// The processor LLVM knows by `name`, or nullopt.
std::optional<Processor> find_processor(const std::string& name);

// nullptr and a diagnostic for a processor LLVM does not know.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const std::string& processor, int optimization_level,
                                                           DiagnosticSink& diagnostics);

// Gives the lowering's helpers (intrinsics::rounded_helper_prefix) for integer-to-float
// conversions, divisions and square roots under .rz/.rm/.rp code the AMDGPU back end can make
// (see directed_rounding.cpp). Returns the helpers it cannot.
std::vector<std::string> expand_directed_rounding(llvm::Module& module);

// LDS bytes ahead of the module's .shared variables holding the state of PTX's 16 barriers, in
// modules that use counted or named barriers, and the function (void ()) that clears it, which
// every kernel of such a module calls first.
inline constexpr uint32_t barrier_records_bytes = 256;
inline constexpr const char* reset_barriers_function = "xcuda.amdgpu.reset_barriers";

// Defines intrinsics::barrier_operation with the records at the start of `records` (in LDS), and
// reset_barriers_function.
void define_barrier_operation(llvm::Function& function, const Processor& processor, llvm::GlobalVariable& records);

// Defines `function` if it is vprintf or __assertfail (through ROCm's ockl, as HIP does);
// returns false for any other.
bool define_device_printf(llvm::Function& function);

// Defines `function` if it is one of host_abi.h's texture and surface functions, reading the
// object as amdgpu_abi::TextureObject (see texture_sampling.cpp); returns false for any other.
bool define_texture_function(llvm::Function& function);

// Defines intrinsics::mbarrier: the object's word updated with atomics (see mbarrier.cpp).
void define_mbarrier(llvm::Function& function);

// Gives the target-neutral intrinsics their AMDGPU meaning (work-item intrinsics, LDS, s_barrier,
// wavefront permutes, counted barriers, mbarriers, printf and assert, textures and surfaces).
// Returns the names of external functions called but not provided (malloc, ...), for the caller
// to report where they are declared.
std::vector<std::string> define_runtime_services(llvm::Module& module, const Processor& processor,
                                                 uint32_t static_shared_bytes);

// Wraps each kernel listed in the kernels metadata in an amdgpu_kernel of the PTX name whose
// kernarg segment holds the PTX parameters at their .param offsets, one by-reference argument
// each, so the code object's metadata describes the layout the runtime packs; with the block
// size and occupancy (.minnctapersm) attributes their directives ask for.
void form_kernels(llvm::Module& module, const ModuleInfo& info, const Processor& processor);

// Defines the C library functions the lowering calls (tanhf, ...) from ROCm's ocml bitcode, and
// the __ockl_ functions printf and assert call from its ockl bitcode. Returns the names it
// cannot provide.
std::vector<std::string> link_device_libraries(llvm::Module& module, const Processor& processor,
                                               int code_object_version);

// Leaves only kernels and variables visible, and records the code object version (5 or 4).
void finish_module(llvm::Module& module, int code_object_version);

// Code generation, then lld's ELF driver in-process: a shared-object code object.
std::vector<uint8_t> emit_code_object(llvm::Module& module, llvm::TargetMachine& machine, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx::amdgpu
