// Reads of special registers (%tid.x, %laneid, %clock64 …) become calls of the per-register
// intrinsic, which the target defines; %globaltimer_lo and _hi are halves of %globaltimer's, and
// %clock_hi the high half of %clock64's.
// Thread-block clusters hold one block on xcuda (a launch asking for more is refused), so the
// cluster registers follow from the block's: cluster i is block i, and block 0 of its cluster.
#include "check/special_registers.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {

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
  // The block's shared memory and what is reserved of it: all of it, then.
  if (name == "aggr_smem_size") name = "total_smem_size";
  // The device graph the kernel runs in, 0 outside one: xcuda instantiates no graph for launch
  // from the device (src/graph.cpp refuses CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH).
  if (name == "current_graph_exec") return builder.getInt64(0);
  // Performance monitor counters, whose behaviour the ISA leaves undefined: xcuda counts nothing.
  if (name.starts_with("pm")) return builder.getIntN(special->bits, 0);
  if (name == "is_explicit_cluster") return builder.getFalse();
  if (name == "cluster_ctaid" || name == "cluster_ctarank") return builder.getInt32(0);
  if (name == "cluster_nctaid" || name == "cluster_nctarank") return builder.getInt32(1);
  if (name == "clusterid" || name == "nclusterid") name = name == "clusterid" ? "ctaid" : "nctaid";
  if (name.starts_with("globaltimer") || name == "clock_hi") {
    std::string_view whole = name == "clock_hi" ? "clock64" : "globaltimer";
    llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::special_register(whole, ""),
                                                            builder.getInt64Ty(), {builder.getPtrTy()});
    llvm::Value* timer = builder.CreateCall(intrinsic, {lowering.thread_context()});
    if (name == "globaltimer_lo") return builder.CreateTrunc(timer, builder.getInt32Ty());
    if (name == "globaltimer_hi" || name == "clock_hi") return builder.CreateTrunc(builder.CreateLShr(timer, 32), builder.getInt32Ty());
    return timer;
  }
  llvm::Type* type = builder.getIntNTy(special->bits);
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::special_register(name, operand.component), type,
                                                          {builder.getPtrTy()});
  return builder.CreateCall(intrinsic, {lowering.thread_context()});
}

}  // namespace xcuda::ptx
