// Reads of special registers (%tid.x, %laneid, %clock64 …) become calls of the per-register
// intrinsic, which the target defines.
#include "check/special_registers.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {

llvm::Value* read_special_register(FunctionLowering& lowering, const Operand& operand) {
  auto& builder = lowering.builder();
  std::string_view name = std::string_view(operand.name).substr(1);
  const SpecialRegister* special = find_special_register(name);
  if (special == nullptr || name.starts_with("globaltimer")) {
    lowering.error(operand.location, "'" + operand.name + "' is not supported yet");
    return builder.getInt32(0);
  }
  llvm::Type* type = builder.getIntNTy(special->bits);
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::special_register(name, operand.component), type,
                                                          {builder.getPtrTy()});
  return builder.CreateCall(intrinsic, {lowering.thread_context()});
}

}  // namespace xcuda::ptx
