// Reads of special registers (%tid.x, %laneid, %clock64 …) become calls of the per-register
// intrinsic, which the target defines; %globaltimer reads the host's clock directly.
#include <ctime>

#include "check/special_registers.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

// %globaltimer: nanoseconds of the host's monotonic clock, read through the C library, which
// every target that runs on the host can call.
llvm::Value* global_timer(FunctionLowering& lowering) {
  auto& builder = lowering.builder();
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&function->getEntryBlock(), function->getEntryBlock().begin());
  llvm::Type* time = builder.getInt64Ty();
  llvm::Value* timespec = entry.CreateAlloca(llvm::ArrayType::get(time, 2));
  llvm::FunctionCallee clock_gettime = lowering.module().target().getOrInsertFunction(
      "clock_gettime", builder.getInt32Ty(), builder.getInt32Ty(), builder.getPtrTy());
  builder.CreateCall(clock_gettime, {builder.getInt32(CLOCK_MONOTONIC), timespec});
  llvm::Value* seconds = builder.CreateLoad(time, timespec);
  llvm::Value* nanoseconds = builder.CreateLoad(time, builder.CreateConstGEP1_64(time, timespec, 1));
  return builder.CreateAdd(builder.CreateMul(seconds, builder.getInt64(1'000'000'000)), nanoseconds);
}

}  // namespace

llvm::Value* read_special_register(FunctionLowering& lowering, const Operand& operand) {
  auto& builder = lowering.builder();
  std::string_view name = std::string_view(operand.name).substr(1);
  const SpecialRegister* special = find_special_register(name);
  if (special == nullptr) {
    lowering.error(operand.location, "'" + operand.name + "' is not supported yet");
    return builder.getInt32(0);
  }
  // The shared memory NVIDIA's driver reserves for itself at the start of a block's window:
  // xcuda reserves none (CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK is 0), so the region is empty.
  if (name.starts_with("reserved_smem_offset_")) return builder.getInt32(0);
  if (name.starts_with("globaltimer")) {
    llvm::Value* timer = global_timer(lowering);
    if (name == "globaltimer_lo") return builder.CreateTrunc(timer, builder.getInt32Ty());
    if (name == "globaltimer_hi") return builder.CreateTrunc(builder.CreateLShr(timer, 32), builder.getInt32Ty());
    return timer;
  }
  llvm::Type* type = builder.getIntNTy(special->bits);
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::special_register(name, operand.component), type,
                                                          {builder.getPtrTy()});
  return builder.CreateCall(intrinsic, {lowering.thread_context()});
}

}  // namespace xcuda::ptx
