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

// Gives the target-neutral intrinsics their AMDGPU meaning (work-item intrinsics, LDS, s_barrier,
// wavefront permutes). Returns the names of external functions called but not provided
// (vprintf, __assertfail, ...), for the caller to report where they are declared.
std::vector<std::string> define_runtime_services(llvm::Module& module, const Processor& processor,
                                                 uint32_t static_shared_bytes);

// Wraps each kernel listed in the kernels metadata in an amdgpu_kernel of the PTX name whose
// kernarg segment holds the PTX parameters at their .param offsets, one by-reference argument
// each, so the code object's metadata describes the layout the runtime packs.
void form_kernels(llvm::Module& module, const ModuleInfo& info);

// Defines the C library functions the lowering calls (tanhf, ...) from ROCm's ocml bitcode.
// Returns the names it cannot provide.
std::vector<std::string> link_device_libraries(llvm::Module& module, const Processor& processor,
                                               int code_object_version);

// Leaves only kernels and variables visible, and records the code object version (5 or 4).
void finish_module(llvm::Module& module, int code_object_version);

// Code generation, then lld's ELF driver in-process: a shared-object code object.
std::vector<uint8_t> emit_code_object(llvm::Module& module, llvm::TargetMachine& machine, DiagnosticSink& diagnostics);

}  // namespace xcuda::ptx::amdgpu
