// What a work-item knows about itself and its dispatch on AMDGPU: the work-item intrinsics and
// the HSA dispatch packet (valid in code object v4 and v5 alike), and its place in its CUDA warp.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {

inline constexpr uint32_t warp_size = 32;

// hsa_kernel_dispatch_packet_t, from the HSA runtime specification.
inline constexpr uint64_t workgroup_size_offset = 4;       // u16 x, y, z
inline constexpr uint64_t grid_size_offset = 12;           // u32 x, y, z, in work-items
inline constexpr uint64_t group_segment_size_offset = 24;  // u32: static plus dynamic LDS bytes

// The packet's field at `offset`, zero-extended to i32.
llvm::Value* dispatch_field(llvm::IRBuilder<>& builder, uint64_t offset, llvm::Type* type);

llvm::Value* thread_index(llvm::IRBuilder<>& builder, uint32_t axis);
llvm::Value* block_dimension(llvm::IRBuilder<>& builder, uint32_t axis);
llvm::Value* block_index(llvm::IRBuilder<>& builder, uint32_t axis);
llvm::Value* grid_dimension(llvm::IRBuilder<>& builder, uint32_t axis);
llvm::Value* linear_thread_index(llvm::IRBuilder<>& builder);
llvm::Value* block_thread_count(llvm::IRBuilder<>& builder);

// The lane's index in its wavefront, and in its CUDA warp (a wave32 wavefront or one half of a
// wave64 one: wavefront lanes follow the linear thread index).
llvm::Value* wavefront_lane(llvm::IRBuilder<>& builder, const Processor& processor);
llvm::Value* lane_id(llvm::IRBuilder<>& builder, const Processor& processor);

// The lanes of this lane's warp, as an i32 mask, where `condition` holds (on wave64, the half of
// the wavefront's ballot that holds this lane).
llvm::Value* warp_ballot(llvm::IRBuilder<>& builder, const Processor& processor, llvm::Value* condition);

}  // namespace xcuda::ptx::amdgpu
