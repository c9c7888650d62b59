#include "target/amdgpu/work_item.h"

#include <llvm/IR/IntrinsicsAMDGPU.h>

namespace xcuda::ptx::amdgpu {

using llvm::Value;

Value* dispatch_field(llvm::IRBuilder<>& builder, uint64_t offset, llvm::Type* type) {
  Value* packet = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_dispatch_ptr, {}, {});
  auto* load = builder.CreateLoad(type, builder.CreateConstGEP1_64(builder.getInt8Ty(), packet, offset));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(builder.getContext(), {}));
  return builder.CreateZExt(load, builder.getInt32Ty());
}

Value* block_dimension(llvm::IRBuilder<>& builder, uint32_t axis) {
  return dispatch_field(builder, workgroup_size_offset + 2 * axis, builder.getInt16Ty());
}

Value* thread_index(llvm::IRBuilder<>& builder, uint32_t axis) {
  static constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::amdgcn_workitem_id_x, llvm::Intrinsic::amdgcn_workitem_id_y,
                                                 llvm::Intrinsic::amdgcn_workitem_id_z};
  return builder.CreateIntrinsic(ids[axis], {}, {});
}

Value* block_index(llvm::IRBuilder<>& builder, uint32_t axis) {
  static constexpr llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::amdgcn_workgroup_id_x, llvm::Intrinsic::amdgcn_workgroup_id_y,
                                                 llvm::Intrinsic::amdgcn_workgroup_id_z};
  return builder.CreateIntrinsic(ids[axis], {}, {});
}

// The dispatch packet counts the grid in work-items; the HIP runtime launches whole blocks.
Value* grid_dimension(llvm::IRBuilder<>& builder, uint32_t axis) {
  Value* items = dispatch_field(builder, grid_size_offset + 4 * axis, builder.getInt32Ty());
  return builder.CreateUDiv(items, block_dimension(builder, axis));
}

Value* linear_thread_index(llvm::IRBuilder<>& builder) {
  Value* plane = builder.CreateAdd(thread_index(builder, 1), builder.CreateMul(block_dimension(builder, 1), thread_index(builder, 2)));
  return builder.CreateAdd(thread_index(builder, 0), builder.CreateMul(block_dimension(builder, 0), plane));
}

Value* block_thread_count(llvm::IRBuilder<>& builder) {
  return builder.CreateMul(builder.CreateMul(block_dimension(builder, 0), block_dimension(builder, 1)), block_dimension(builder, 2));
}

Value* wavefront_lane(llvm::IRBuilder<>& builder, const Processor& processor) {
  Value* low = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {builder.getInt32(~0u), builder.getInt32(0)});
  if (processor.wavefront_size == 32) return low;
  return builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {builder.getInt32(~0u), low});
}

Value* lane_id(llvm::IRBuilder<>& builder, const Processor& processor) {
  return builder.CreateAnd(wavefront_lane(builder, processor), warp_size - 1);
}

Value* warp_ballot(llvm::IRBuilder<>& builder, const Processor& processor, Value* condition) {
  llvm::Type* mask_type = builder.getIntNTy(processor.wavefront_size);
  Value* lanes = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_ballot, {mask_type}, {condition});
  if (processor.wavefront_size == 32) return lanes;
  Value* half = builder.CreateZExt(builder.CreateAnd(wavefront_lane(builder, processor), warp_size), mask_type);
  return builder.CreateTrunc(builder.CreateLShr(lanes, half), builder.getInt32Ty());
}

}  // namespace xcuda::ptx::amdgpu
