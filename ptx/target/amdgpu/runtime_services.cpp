// The target-neutral intrinsics on AMDGPU. Special registers come from the work-item intrinsics
// and the HSA dispatch packet (valid in code object v4 and v5 alike), shared memory is LDS, a
// barrier is s_barrier between workgroup fences, and warp exchanges use the wavefront itself:
// the lanes that arrive together are the active lanes of the warp, and a lane reads a peer's
// offer with ds_bpermute.
#include <algorithm>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"
#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

using llvm::Value;

constexpr unsigned lds_address_space = 3;
constexpr uint32_t warp_size = 32;

// hsa_kernel_dispatch_packet_t, from the HSA runtime specification.
constexpr uint64_t workgroup_size_offset = 4;  // u16 x, y, z
constexpr uint64_t grid_size_offset = 12;      // u32 x, y, z, in work-items
constexpr uint64_t group_segment_size_offset = 24;  // u32: static plus dynamic LDS bytes

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

// The lane's index in its wavefront.
Value* wavefront_lane(llvm::IRBuilder<>& builder, const Processor& processor) {
  Value* low = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {}, {builder.getInt32(~0u), builder.getInt32(0)});
  if (processor.wavefront_size == 32) return low;
  return builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {}, {builder.getInt32(~0u), low});
}

// Wavefront lanes follow the linear thread index, so a 32-lane CUDA warp is a wave32 wavefront or
// one half of a wave64 one.
Value* lane_id(llvm::IRBuilder<>& builder, const Processor& processor) {
  return builder.CreateAnd(wavefront_lane(builder, processor), warp_size - 1);
}

Value* special_register(llvm::IRBuilder<>& builder, const Processor& processor, std::string_view name,
                        std::string_view component, uint32_t static_shared_bytes) {
  uint32_t axis = component == "y" ? 1 : component == "z" ? 2 : 0;
  if (name == "tid") return thread_index(builder, axis);
  if (name == "ntid") return block_dimension(builder, axis);
  if (name == "ctaid") return block_index(builder, axis);
  if (name == "nctaid") return grid_dimension(builder, axis);
  Value* total_shared = dispatch_field(builder, group_segment_size_offset, builder.getInt32Ty());
  if (name == "total_smem_size") return total_shared;
  if (name == "dynamic_smem_size") return builder.CreateSub(total_shared, builder.getInt32((static_shared_bytes + 15) / 16 * 16));
  if (name == "clock64") return builder.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {});
  if (name == "clock") return builder.CreateTrunc(builder.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {}), builder.getInt32Ty());
  if (name == "nwarpid") {
    Value* size = builder.CreateMul(builder.CreateMul(block_dimension(builder, 0), block_dimension(builder, 1)), block_dimension(builder, 2));
    return builder.CreateLShr(builder.CreateAdd(size, builder.getInt32(warp_size - 1)), 5);
  }
  if (name == "warpid") return builder.CreateLShr(linear_thread_index(builder), 5);
  Value* lane = lane_id(builder, processor);
  if (name == "laneid") return lane;
  Value* lane_bit = builder.CreateShl(builder.getInt32(1), lane);
  Value* below = builder.CreateSub(lane_bit, builder.getInt32(1));
  Value* up_to = builder.CreateSub(builder.CreateShl(builder.getInt32(2), lane), builder.getInt32(1));
  if (name == "lanemask_eq") return lane_bit;
  if (name == "lanemask_lt") return below;
  if (name == "lanemask_le") return up_to;
  if (name == "lanemask_ge") return builder.CreateNot(below);
  if (name == "lanemask_gt") return builder.CreateNot(up_to);
  return nullptr;  // %smid, %nsmid, %gridid: not provided yet
}

// One LDS variable holds every static .shared variable of the module at its layout offset; the
// dynamic part follows it, where the runtime's dynamic LDS begins. Without static variables the
// base is the dynamic LDS itself (a zero-sized external LDS variable, as HIP's extern __shared__).
llvm::GlobalVariable* shared_memory(llvm::Module& module, uint32_t static_shared_bytes) {
  llvm::LLVMContext& context = module.getContext();
  uint64_t bytes = (uint64_t{static_shared_bytes} + 15) / 16 * 16;
  auto* type = llvm::ArrayType::get(llvm::Type::getInt8Ty(context), bytes);
  auto* variable = new llvm::GlobalVariable(module, type, false,
                                            bytes == 0 ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
                                            bytes == 0 ? nullptr : llvm::UndefValue::get(type), "xcuda.shared", nullptr,
                                            llvm::GlobalValue::NotThreadLocal, lds_address_space);
  variable->setAlignment(llvm::Align(16));
  return variable;
}

void define_barrier(llvm::IRBuilder<>& builder) {
  builder.CreateFence(llvm::AtomicOrdering::Release, builder.getContext().getOrInsertSyncScopeID("workgroup"));
  builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
  builder.CreateFence(llvm::AtomicOrdering::Acquire, builder.getContext().getOrInsertSyncScopeID("workgroup"));
  builder.CreateRetVoid();
}

void make_inline_body(llvm::Function& function) {
  function.setLinkage(llvm::GlobalValue::InternalLinkage);
  function.addFnAttr(llvm::Attribute::AlwaysInline);
}

// The slot where each function keeps its lanes' offers at their last exchange.
llvm::AllocaInst* offer_slot(llvm::Function& function, std::unordered_map<llvm::Function*, llvm::AllocaInst*>& slots) {
  auto [found, inserted] = slots.try_emplace(&function, nullptr);
  if (inserted) {
    llvm::IRBuilder<> builder(&*function.getEntryBlock().getFirstInsertionPt());
    found->second = builder.CreateAlloca(builder.getInt64Ty(), nullptr, "warp_offer");
  }
  return found->second;
}

// exchange(context, offer): keeps the offer and answers the warp's active lanes (the half of a
// wave64 ballot that holds this lane). The wavefront fence orders the lanes' memory accesses
// around the exchange, which bar.warp.sync promises.
Value* exchange(llvm::IRBuilder<>& builder, const Processor& processor, llvm::AllocaInst* slot, Value* offer) {
  builder.CreateStore(offer, slot);
  builder.CreateFence(llvm::AtomicOrdering::AcquireRelease, builder.getContext().getOrInsertSyncScopeID("wavefront"));
  llvm::Type* mask_type = builder.getIntNTy(processor.wavefront_size);
  Value* active = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_ballot, {mask_type}, {builder.getTrue()});
  if (processor.wavefront_size == 32) return active;
  Value* half = builder.CreateZExt(builder.CreateAnd(wavefront_lane(builder, processor), warp_size), mask_type);
  return builder.CreateTrunc(builder.CreateLShr(active, half), builder.getInt32Ty());
}

// peer(context, lane): the offer `lane` of this warp kept, read from its register by ds_bpermute
// (whose byte address picks the wavefront lane).
Value* peer(llvm::IRBuilder<>& builder, const Processor& processor, llvm::AllocaInst* slot, Value* lane) {
  Value* source = builder.CreateAnd(lane, warp_size - 1);
  if (processor.wavefront_size == 64)
    source = builder.CreateOr(source, builder.CreateAnd(wavefront_lane(builder, processor), warp_size));
  Value* address = builder.CreateShl(source, 2);
  Value* offer = builder.CreateLoad(builder.getInt64Ty(), slot);
  Value* low = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {}, {address, builder.CreateTrunc(offer, builder.getInt32Ty())});
  Value* high = builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_ds_bpermute, {},
                                        {address, builder.CreateTrunc(builder.CreateLShr(offer, 32), builder.getInt32Ty())});
  return builder.CreateOr(builder.CreateZExt(low, builder.getInt64Ty()),
                          builder.CreateShl(builder.CreateZExt(high, builder.getInt64Ty()), 32));
}

// Exchanges and peers are replaced where they are called, since each reads the calling
// function's offer slot.
void replace_warp_calls(llvm::Module& module, const Processor& processor) {
  llvm::Function* exchange_function = module.getFunction(intrinsics::warp_exchange);
  llvm::Function* peer_function = module.getFunction(intrinsics::warp_peer);
  std::unordered_map<llvm::Function*, llvm::AllocaInst*> slots;
  for (llvm::Function* intrinsic : {exchange_function, peer_function}) {
    if (intrinsic == nullptr) continue;
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* user : intrinsic->users())
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(user)) calls.push_back(call);
    for (llvm::CallInst* call : calls) {
      llvm::IRBuilder<> builder(call);
      llvm::AllocaInst* slot = offer_slot(*call->getFunction(), slots);
      Value* result = intrinsic == exchange_function ? exchange(builder, processor, slot, call->getArgOperand(1))
                                                     : peer(builder, processor, slot, call->getArgOperand(1));
      call->replaceAllUsesWith(result);
      call->eraseFromParent();
    }
    intrinsic->eraseFromParent();
  }
}

// Operations under a directed rounding mode (the lowering's strict helpers) that LLVM 19 expands
// on AMDGPU into library calls, which a code object cannot make: LLVM would abort the process.
bool needs_library_calls(const llvm::Function& function) {
  static constexpr llvm::Intrinsic::ID expanded[] = {llvm::Intrinsic::experimental_constrained_sitofp,
                                                     llvm::Intrinsic::experimental_constrained_uitofp,
                                                     llvm::Intrinsic::experimental_constrained_fdiv,
                                                     llvm::Intrinsic::experimental_constrained_sqrt};
  for (const llvm::BasicBlock& block : function)
    for (const llvm::Instruction& instruction : block)
      if (const auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&instruction))
        if (std::find(std::begin(expanded), std::end(expanded), call->getIntrinsicID()) != std::end(expanded)) return true;
  return false;
}

}  // namespace

std::vector<std::string> define_runtime_services(llvm::Module& module, const Processor& processor,
                                                 uint32_t static_shared_bytes) {
  replace_warp_calls(module, processor);
  std::vector<std::string> missing;
  std::vector<llvm::Function*> declarations;
  for (llvm::Function& function : module)
    if (needs_library_calls(function)) missing.emplace_back(function.getName());
  for (llvm::Function& function : module)
    if (function.isDeclaration() && !function.isIntrinsic() && !function.use_empty()) declarations.push_back(&function);
  for (llvm::Function* function : declarations) {
    std::string_view name = function->getName();
    if (function->hasFnAttribute(intrinsics::external_function_attribute)) {
      missing.emplace_back(name);
      continue;
    }
    if (!name.starts_with("xcuda.")) continue;  // a C library function: see link_device_libraries
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", function));
    if (name == intrinsics::shared_base) {
      builder.CreateRet(builder.CreateAddrSpaceCast(shared_memory(module, static_shared_bytes), builder.getPtrTy()));
    } else if (name == intrinsics::barrier) {
      define_barrier(builder);
    } else if (name == intrinsics::trap) {
      builder.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
      builder.CreateUnreachable();
    } else if (name.starts_with(intrinsics::special_register_prefix)) {
      auto [register_name, component] = intrinsics::parse_special_register(name);
      Value* value = special_register(builder, processor, register_name, component, static_shared_bytes);
      if (value == nullptr) {
        function->getEntryBlock().eraseFromParent();
        missing.emplace_back(name);
        continue;
      }
      builder.CreateRet(builder.CreateZExtOrTrunc(value, function->getReturnType()));
    } else {
      function->getEntryBlock().eraseFromParent();
      missing.emplace_back(name);
      continue;
    }
    make_inline_body(*function);
  }
  return missing;
}

}  // namespace xcuda::ptx::amdgpu
