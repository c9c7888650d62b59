// The kernel ABI: an amdgpu_kernel per .entry whose explicit kernarg segment is the PTX parameter
// buffer. Each parameter is a by-reference argument of its size and alignment, so LLVM places it
// at its .param offset and the code object's metadata lists it there, which is what the HIP
// runtime packs hipModuleLaunchKernel's arguments by. In modules that read %envreg, one more
// argument follows: the grid-workspace word of amdgpu_abi.h.
#include <algorithm>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"
#include "target/amdgpu/amdgpu_abi.h"
#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

constexpr unsigned constant_address_space = 4;  // where the kernarg segment lives

void set_block_size_attributes(llvm::Function& kernel, const KernelInfo& info) {
  if (info.max_threads_per_block == 0) return;
  // The flat work-group size bounds the registers each thread may use, as .maxntid does on NVIDIA.
  std::string bounds = std::to_string(info.max_threads_per_block);
  bool required = info.required_block[0] != 0;
  kernel.addFnAttr("amdgpu-flat-work-group-size", (required ? bounds : std::string("1")) + "," + bounds);
  if (!required) return;
  llvm::LLVMContext& context = kernel.getContext();
  llvm::Metadata* sizes[3];
  for (uint32_t axis = 0; axis < 3; ++axis)
    sizes[axis] = llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(context), info.required_block[axis]));
  kernel.setMetadata("reqd_work_group_size", llvm::MDNode::get(context, sizes));
}

// .minnctapersm asks for that many blocks per SM at once, which bounds the registers per thread.
// An SM's counterpart is a compute unit (gfx9) or a workgroup processor (gfx10+), both of four
// SIMDs, so the request is that many blocks' wavefronts spread over four SIMDs. LLVM ignores a
// request beyond what the processor can hold (8 wavefronts per SIMD on gfx9, 16 or 20 on gfx10+).
void set_occupancy_attribute(llvm::Function& kernel, const KernelInfo& info, const Processor& processor) {
  if (info.min_blocks_per_multiprocessor == 0 || info.max_threads_per_block == 0) return;
  constexpr uint64_t simds_per_unit = 4;
  uint64_t wavefronts_per_block = (info.max_threads_per_block + processor.wavefront_size - 1) / processor.wavefront_size;
  uint64_t wavefronts = (info.min_blocks_per_multiprocessor * wavefronts_per_block + simds_per_unit - 1) / simds_per_unit;
  kernel.addFnAttr("amdgpu-waves-per-eu", std::to_string(wavefronts));
}

bool reads_environment(const llvm::Module& module) {
  std::string prefix = intrinsics::special_register("envreg", "");
  return std::any_of(module.begin(), module.end(),
                     [&](const llvm::Function& function) { return function.getName().starts_with(prefix); });
}

void form_kernel(llvm::Function& body, const KernelInfo& info, const Processor& processor, bool environment) {
  llvm::Module& module = *body.getParent();
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto* kernarg_pointer = builder.getPtrTy(constant_address_space);
  std::vector<llvm::Type*> arguments(info.parameters.size() + (environment ? 1 : 0), kernarg_pointer);
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), arguments, false);
  auto* kernel = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, info.name, module);
  kernel->setCallingConv(llvm::CallingConv::AMDGPU_KERNEL);
  kernel->setVisibility(llvm::GlobalValue::ProtectedVisibility);
  kernel->addFnAttr(llvm::Attribute::NoUnwind);
  for (size_t index = 0; index < info.parameters.size(); ++index) {
    const ParameterInfo& parameter = info.parameters[index];
    kernel->addParamAttr(static_cast<unsigned>(index),
                         llvm::Attribute::getWithByRefType(context, llvm::ArrayType::get(builder.getInt8Ty(), parameter.size)));
    kernel->addParamAttr(static_cast<unsigned>(index),
                         llvm::Attribute::getWithAlignment(context, llvm::Align(std::max<uint32_t>(parameter.alignment, 1))));
  }
  // Aligned as the widest parameter (and at least 8), the word lands where the parameter
  // buffer, whose size that alignment rounds, ends: at grid_workspace_offset().
  uint32_t workspace_alignment = 8;
  for (const ParameterInfo& parameter : info.parameters) workspace_alignment = std::max(workspace_alignment, parameter.alignment);
  if (environment) {
    auto index = static_cast<unsigned>(info.parameters.size());
    kernel->addParamAttr(index, llvm::Attribute::getWithByRefType(
                                    context, llvm::ArrayType::get(builder.getInt8Ty(), amdgpu_abi::grid_workspace_bytes)));
    kernel->addParamAttr(index, llvm::Attribute::getWithAlignment(context, llvm::Align(workspace_alignment)));
  }
  set_block_size_attributes(*kernel, info);
  set_occupancy_attribute(*kernel, info, processor);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", kernel));
  if (llvm::Function* reset = module.getFunction(reset_barriers_function)) builder.CreateCall(reset);
  // The body reads parameters at their .param offsets from one pointer: the segment's start.
  llvm::Value* segment = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_kernarg_segment_ptr, {}, {});
  llvm::Value* parameters = builder.CreateAddrSpaceCast(segment, builder.getPtrTy());
  // Only %envreg reads the thread context, the workspace word; every other value it would hold
  // comes from the hardware.
  llvm::Value* thread_context = environment ? builder.CreateAddrSpaceCast(kernel->getArg(kernel->arg_size() - 1), builder.getPtrTy())
                                            : llvm::ConstantPointerNull::get(builder.getPtrTy());
  builder.CreateCall(&body, {thread_context, parameters});
  builder.CreateRetVoid();
  body.setLinkage(llvm::GlobalValue::InternalLinkage);
  body.addFnAttr(llvm::Attribute::AlwaysInline);
}

}  // namespace

void form_kernels(llvm::Module& module, const ModuleInfo& info, const Processor& processor) {
  llvm::NamedMDNode* kernels = module.getNamedMetadata(intrinsics::kernels_metadata);
  if (kernels == nullptr) return;
  std::vector<std::pair<llvm::Function*, std::string>> entries;
  for (llvm::MDNode* node : kernels->operands())
    entries.emplace_back(llvm::cast<llvm::Function>(llvm::cast<llvm::ValueAsMetadata>(node->getOperand(0))->getValue()),
                         llvm::cast<llvm::MDString>(node->getOperand(1))->getString().str());
  kernels->eraseFromParent();
  bool environment = reads_environment(module);
  for (const auto& [body, name] : entries)
    for (const KernelInfo& kernel : info.kernels)
      if (kernel.name == name) form_kernel(*body, kernel, processor, environment);
}

}  // namespace xcuda::ptx::amdgpu
