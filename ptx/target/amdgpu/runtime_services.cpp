// The target-neutral intrinsics on AMDGPU. Special registers come from the work-item intrinsics
// and the HSA dispatch packet (valid in code object v4 and v5 alike), shared memory is LDS, a
// barrier is s_barrier between workgroup fences, and warp exchanges use the wavefront itself:
// the lanes that arrive together are the active lanes of the warp, and a lane reads a peer's
// offer with ds_bpermute. %envreg reads the grid-workspace kernarg of amdgpu_abi.h, which the
// kernel passes as the thread-context pointer (kernel_abi.cpp). cudaGraphSetConditional stores
// through its handle, which xcuda makes the address of the condition's 32-bit word. Counted
// barriers, mbarriers, printf, assert, textures and surfaces have files of their own.
#include <charconv>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"
#include "lower/warp_folds.h"
#include "lower/warp_words.h"
#include "target/amdgpu/amdgpu_abi.h"
#include "target/amdgpu/work_item.h"

namespace xcuda::ptx::amdgpu {
namespace {

using llvm::Value;

constexpr unsigned lds_address_space = 3;

// HW_ID (gfx9) and HW_ID1 (gfx10 and later), read with s_getreg_b32: where the wavefront runs.
struct HardwareIdentity {
  uint32_t register_id;
  uint32_t unit_offset;    // CU_ID (gfx9) or WGP_ID, 4 bits
  uint32_t array_offset;   // SH_ID or SA_ID, 1 bit
  uint32_t engine_offset;  // SE_ID, up to 3 bits
};
constexpr HardwareIdentity gfx9_identity{4, 8, 12, 13};
constexpr HardwareIdentity gfx10_identity{23, 10, 16, 18};
constexpr uint32_t xcc_id_register = 20;  // XCC_ID (gfx940 and later): the chiplet, 4 bits

Value* hardware_field(llvm::IRBuilder<>& builder, uint32_t register_id, uint32_t offset, uint32_t bits) {
  uint32_t operand = register_id | offset << 6 | (bits - 1) << 11;  // s_getreg's simm16
  return builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_getreg, {}, {builder.getInt32(operand)});
}

bool has_chiplets(const Processor& processor) { return processor.name.starts_with("gfx94") || processor.name.starts_with("gfx95"); }

// %smid: the compute unit (gfx9) or workgroup processor (gfx10+) of the wavefront, its shader
// array and engine, and on gfx940+ its chiplet, packed as bits; %nsmid is one past the largest
// such number, which PTX allows (SM ids need not be contiguous). Neither is a count of units.
uint32_t processor_unit_bits(const Processor& processor) { return 8 + (has_chiplets(processor) ? 4 : 0); }

Value* processor_unit(llvm::IRBuilder<>& builder, const Processor& processor) {
  const HardwareIdentity& identity = processor.isa_version < 10000 ? gfx9_identity : gfx10_identity;
  Value* unit = hardware_field(builder, identity.register_id, identity.unit_offset, 4);
  unit = builder.CreateOr(unit, builder.CreateShl(hardware_field(builder, identity.register_id, identity.array_offset, 1), 4));
  unit = builder.CreateOr(unit, builder.CreateShl(hardware_field(builder, identity.register_id, identity.engine_offset, 3), 5));
  if (has_chiplets(processor)) unit = builder.CreateOr(unit, builder.CreateShl(hardware_field(builder, xcc_id_register, 0, 4), 8));
  return unit;
}

// `reserved_bytes`: the LDS ahead of the .shared variables that the program does not see.
Value* special_register(llvm::IRBuilder<>& builder, const Processor& processor, std::string_view name,
                        std::string_view component, uint32_t static_shared_bytes, uint32_t reserved_bytes) {
  uint32_t axis = component == "y" ? 1 : component == "z" ? 2 : 0;
  if (name == "tid") return thread_index(builder, axis);
  if (name == "ntid") return block_dimension(builder, axis);
  if (name == "ctaid") return block_index(builder, axis);
  if (name == "nctaid") return grid_dimension(builder, axis);
  if (name == "smid") return processor_unit(builder, processor);
  if (name == "nsmid") return builder.getInt32(1u << processor_unit_bits(processor));
  // The dispatch's number in its queue: unique among the grids of a queue, as %gridid is among
  // the grids of a context.
  if (name == "gridid") return builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_dispatch_id, {}, {});
  Value* total_shared = builder.CreateSub(dispatch_field(builder, group_segment_size_offset, builder.getInt32Ty()),
                                          builder.getInt32(reserved_bytes));
  if (name == "total_smem_size") return total_shared;
  if (name == "dynamic_smem_size") return builder.CreateSub(total_shared, builder.getInt32((static_shared_bytes + 15) / 16 * 16));
  if (name == "globaltimer")
    return builder.CreateMul(builder.CreateIntrinsic(llvm::Intrinsic::readsteadycounter, {}, {}),
                             builder.getInt64(amdgpu_abi::realtime_nanoseconds_per_tick));
  if (name == "clock64") return builder.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {});
  if (name == "clock") return builder.CreateTrunc(builder.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {}), builder.getInt32Ty());
  if (name == "nwarpid") return builder.CreateLShr(builder.CreateAdd(block_thread_count(builder), builder.getInt32(warp_size - 1)), 5);
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
  return nullptr;
}

// One LDS variable holds the reserved bytes (barrier records) and then every static .shared
// variable of the module at its layout offset; the dynamic part follows it, where the runtime's
// dynamic LDS begins. Without either the base is the dynamic LDS itself (a zero-sized external
// LDS variable, as HIP's extern __shared__).
llvm::GlobalVariable* shared_memory(llvm::Module& module, uint32_t static_shared_bytes, uint32_t reserved_bytes) {
  llvm::LLVMContext& context = module.getContext();
  uint64_t bytes = reserved_bytes + (uint64_t{static_shared_bytes} + 15) / 16 * 16;
  auto* type = llvm::ArrayType::get(llvm::Type::getInt8Ty(context), bytes);
  auto* variable = new llvm::GlobalVariable(module, type, false,
                                            bytes == 0 ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
                                            bytes == 0 ? nullptr : llvm::UndefValue::get(type), "xcuda.shared", nullptr,
                                            llvm::GlobalValue::NotThreadLocal, lds_address_space);
  variable->setAlignment(llvm::Align(16));
  return variable;
}

// %envreg1 and %envreg2: the halves of the grid-workspace word `context` points at; the others 0.
Value* environment_register(llvm::IRBuilder<>& builder, std::string_view name, Value* context) {
  uint32_t index = 0;  // the checker allows 0-31 only
  std::from_chars(name.data() + 6, name.data() + name.size(), index);
  if (index != 1 && index != 2) return builder.getInt32(0);
  Value* workspace = builder.CreateAlignedLoad(builder.getInt64Ty(), context, llvm::Align(8));
  return builder.CreateTrunc(index == 1 ? builder.CreateLShr(workspace, 32) : workspace, builder.getInt32Ty());
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
  return warp_ballot(builder, processor, builder.getTrue());
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
  expand_word_exchanges(module);
  for (llvm::Function& function : module) expand_warp_folds(function);
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

// cudaGraphSetConditional(ctx, &handle, &value): the handle is the address of the condition
// (runtime/graph.h), which the graph reads on the host once the kernel has ended, so the store
// is a release at system scope. The word must be reachable from the GPU.
void define_set_conditional(llvm::Function& function) {
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(function.getContext(), "entry", &function));
  Value* handle = builder.CreateLoad(builder.getInt64Ty(), function.getArg(1));
  Value* value = builder.CreateLoad(builder.getInt32Ty(), function.getArg(2));
  llvm::StoreInst* store = builder.CreateAlignedStore(value, builder.CreateIntToPtr(handle, builder.getPtrTy()), llvm::Align(4));
  store->setAtomic(llvm::AtomicOrdering::Release);
  builder.CreateRetVoid();
  make_inline_body(function);
}

}  // namespace

std::vector<std::string> define_runtime_services(llvm::Module& module, const Processor& processor,
                                                 uint32_t static_shared_bytes) {
  replace_warp_calls(module, processor);
  std::vector<std::string> missing;
  // Nothing here runs the module initialiser before the first kernel.
  if (llvm::Function* initialiser = module.getFunction(intrinsics::module_initialiser)) {
    initialiser->eraseFromParent();
    missing.emplace_back("initialisers that take a byte of an address, such as 0xFF(symbol)");
  }
  std::vector<llvm::Function*> declarations;
  for (llvm::Function& function : module)
    if (function.isDeclaration() && !function.isIntrinsic() && !function.use_empty()) declarations.push_back(&function);
  llvm::Function* barrier_operation = module.getFunction(intrinsics::barrier_operation);
  uint32_t reserved_bytes = barrier_operation != nullptr && !barrier_operation->use_empty() ? barrier_records_bytes : 0;
  llvm::GlobalVariable* lds = nullptr;
  auto lds_block = [&] {
    if (lds == nullptr) lds = shared_memory(module, static_shared_bytes, reserved_bytes);
    return lds;
  };
  for (llvm::Function* function : declarations) {
    std::string_view name = function->getName();
    if (define_device_printf(*function) || define_texture_function(*function)) continue;
    if (name == "cudaGraphSetConditional" && function->arg_size() == 3) {
      define_set_conditional(*function);
      continue;
    }
    if (function->hasFnAttribute(intrinsics::external_function_attribute)) {
      missing.emplace_back(name);
      continue;
    }
    if (!name.starts_with("xcuda.")) continue;  // a C library function: see link_device_libraries
    if (function == barrier_operation) {
      define_barrier_operation(*function, processor, *lds_block());
      make_inline_body(*function);
      continue;
    }
    if (name == intrinsics::mbarrier) {
      define_mbarrier(*function);
      make_inline_body(*function);
      continue;
    }
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", function));
    if (name == intrinsics::shared_base) {
      Value* base = builder.CreateConstGEP1_32(builder.getInt8Ty(), lds_block(), reserved_bytes);
      builder.CreateRet(builder.CreateAddrSpaceCast(base, builder.getPtrTy()));
    } else if (name == intrinsics::barrier) {
      define_barrier(builder);
    } else if (name == intrinsics::trap || name == intrinsics::illegal_instruction) {
      builder.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
      builder.CreateUnreachable();
    } else if (name == intrinsics::in_shared_window || name == intrinsics::in_local_window) {
      // The hardware's apertures: a flat address in the LDS one, or in the scratch one.
      auto window = name == intrinsics::in_shared_window ? llvm::Intrinsic::amdgcn_is_shared : llvm::Intrinsic::amdgcn_is_private;
      builder.CreateRet(builder.CreateIntrinsic(window, {}, {builder.CreateIntToPtr(function->getArg(1), builder.getPtrTy())}));
    } else if (name.starts_with(intrinsics::special_register_prefix)) {
      auto [register_name, component] = intrinsics::parse_special_register(name);
      Value* value = register_name.starts_with("envreg")
                         ? environment_register(builder, register_name, function->getArg(0))
                         : special_register(builder, processor, register_name, component, static_shared_bytes, reserved_bytes);
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
