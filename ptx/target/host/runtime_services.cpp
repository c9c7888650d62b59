#include <charconv>
#include <ctime>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include "host_abi.h"
#include "lower/intrinsics.h"
#include "lower/warp_folds.h"
#include "target/host/builtin_library.h"
#include "target/host/host_target.h"
#include "target/host/thread_context.h"
#include "target/host/warp_exchange.h"

namespace xcuda::ptx::host {
namespace {

using host_abi::BlockFrame;
using llvm::Value;

// Reads a u32 (or wider) field of the BlockFrame at `offset`.
Value* frame_field(llvm::IRBuilder<>& builder, Value* context, uint64_t offset, llvm::Type* type) {
  Value* frame = builder.CreateLoad(builder.getPtrTy(), builder.CreateConstGEP1_64(builder.getInt8Ty(), context, frame_offset));
  return builder.CreateLoad(type, builder.CreateConstGEP1_64(builder.getInt8Ty(), frame, offset));
}

Value* thread_index(llvm::IRBuilder<>& builder, Value* context, uint32_t axis) {
  return builder.CreateLoad(builder.getInt32Ty(),
                            builder.CreateConstGEP1_64(builder.getInt8Ty(), context, thread_index_offset + 4 * axis));
}

uint64_t axis_offset(uint64_t array_offset, uint32_t axis) { return array_offset + 4 * axis; }

Value* block_dimension(llvm::IRBuilder<>& builder, Value* context, uint32_t axis) {
  return load_block_dimension(builder, builder.CreateLoad(builder.getPtrTy(), builder.CreateConstGEP1_64(builder.getInt8Ty(), context, frame_offset)),
                              axis);
}

Value* linear_thread_index(llvm::IRBuilder<>& builder, Value* context) {
  Value* width = block_dimension(builder, context, 0);
  Value* height = block_dimension(builder, context, 1);
  Value* plane = builder.CreateAdd(thread_index(builder, context, 1), builder.CreateMul(height, thread_index(builder, context, 2)));
  return builder.CreateAdd(thread_index(builder, context, 0), builder.CreateMul(width, plane));
}

Value* block_size(llvm::IRBuilder<>& builder, Value* context) {
  Value* size = builder.getInt32(1);
  for (uint32_t axis = 0; axis < 3; ++axis)
    size = builder.CreateMul(size, block_dimension(builder, context, axis));
  return size;
}

// %globaltimer: nanoseconds of the host's monotonic clock, read through the C library.
Value* global_timer(llvm::IRBuilder<>& builder) {
  llvm::Type* time = builder.getInt64Ty();
  Value* timespec = builder.CreateAlloca(llvm::ArrayType::get(time, 2));
  llvm::FunctionCallee clock_gettime = builder.GetInsertBlock()->getModule()->getOrInsertFunction(
      "clock_gettime", builder.getInt32Ty(), builder.getInt32Ty(), builder.getPtrTy());
  builder.CreateCall(clock_gettime, {builder.getInt32(CLOCK_MONOTONIC), timespec});
  Value* seconds = builder.CreateLoad(time, timespec);
  Value* nanoseconds = builder.CreateLoad(time, builder.CreateConstGEP1_64(time, timespec, 1));
  return builder.CreateAdd(builder.CreateMul(seconds, builder.getInt64(1'000'000'000)), nanoseconds);
}

// The value of special register `name` (with its component, if any) for the context's thread.
Value* special_register(llvm::IRBuilder<>& builder, Value* context, std::string_view name, std::string_view component,
                        uint32_t static_shared_bytes) {
  uint32_t axis = component == "y" ? 1 : component == "z" ? 2 : 0;
  llvm::Type* u32 = builder.getInt32Ty();
  if (name == "tid") return thread_index(builder, context, axis);
  if (name == "ntid") return block_dimension(builder, context, axis);
  if (name == "nctaid") return frame_field(builder, context, axis_offset(offsetof(BlockFrame, grid_dim), axis), u32);
  if (name == "ctaid") return frame_field(builder, context, axis_offset(offsetof(BlockFrame, block_index), axis), u32);
  if (name == "smid") return frame_field(builder, context, offsetof(BlockFrame, sm_index), u32);
  if (name == "nsmid") return frame_field(builder, context, offsetof(BlockFrame, sm_count), u32);
  if (name == "gridid") return frame_field(builder, context, offsetof(BlockFrame, grid_id), builder.getInt64Ty());
  if (name.starts_with("envreg")) {
    Value* environment = frame_field(builder, context, offsetof(BlockFrame, environment), builder.getPtrTy());
    uint32_t index = 0;  // the checker allows 0-31 only
    std::from_chars(name.data() + 6, name.data() + name.size(), index);
    return builder.CreateLoad(u32, builder.CreateConstGEP1_64(u32, environment, index));
  }
  if (name == "globaltimer") return global_timer(builder);
  if (name == "dynamic_smem_size") return frame_field(builder, context, offsetof(BlockFrame, dynamic_shared_bytes), u32);
  if (name == "total_smem_size") {
    Value* dynamic = frame_field(builder, context, offsetof(BlockFrame, dynamic_shared_bytes), u32);
    return builder.CreateAdd(dynamic, builder.getInt32((static_shared_bytes + 15) / 16 * 16));
  }
  if (name == "clock64") return builder.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {});
  if (name == "clock") return builder.CreateTrunc(builder.CreateIntrinsic(llvm::Intrinsic::readcyclecounter, {}, {}), u32);
  if (name == "nwarpid") return builder.CreateLShr(builder.CreateAdd(block_size(builder, context), builder.getInt32(31)), 5);
  Value* linear = linear_thread_index(builder, context);
  if (name == "warpid") return builder.CreateLShr(linear, 5);
  Value* lane = builder.CreateAnd(linear, 31);
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

// Whether `address` lies in the window the isspacep intrinsic `name` asks about: the block's
// shared memory (as %total_smem_size counts it), the launch's parameters, or the thread's local
// memory, which is its stack (the runtime knows where that lies) and its stack of run-time
// allocations.
Value* in_window(llvm::IRBuilder<>& builder, Value* context, Value* address, std::string_view name, uint32_t static_shared_bytes) {
  llvm::Type* u64 = builder.getInt64Ty();
  auto within = [&](Value* start, Value* bytes) {
    return builder.CreateICmpULT(builder.CreateSub(address, builder.CreatePtrToInt(start, u64)), builder.CreateZExt(bytes, u64));
  };
  auto* pointer = builder.getPtrTy();
  if (name == intrinsics::in_shared_window)
    return within(frame_field(builder, context, offsetof(BlockFrame, shared_memory), pointer),
                  special_register(builder, context, "total_smem_size", "", static_shared_bytes));
  if (name == intrinsics::in_parameter_window)
    return within(frame_field(builder, context, offsetof(BlockFrame, parameters), pointer),
                  frame_field(builder, context, offsetof(BlockFrame, parameter_bytes), u64));
  Value* allocations = within(frame_field(builder, context, offsetof(BlockFrame, dynamic_stack), pointer),
                              builder.CreateMul(frame_field(builder, context, offsetof(BlockFrame, dynamic_stack_bytes), u64),
                                                builder.CreateZExt(block_size(builder, context), u64)));
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  llvm::FunctionCallee stack = module.getOrInsertFunction(host_abi::thread_stack_contains_symbol, builder.getInt32Ty(), u64);
  return builder.CreateOr(allocations, builder.CreateICmpNE(builder.CreateCall(stack, {address}), builder.getInt32(0)));
}

// The calling thread's stack of run-time allocations (BlockFrame::dynamic_stack). Its header,
// at `start`, holds the offset of its first free byte.
struct DynamicStack {
  Value* frame;
  Value* start;
  Value* bytes;
};

DynamicStack dynamic_stack(llvm::IRBuilder<>& builder, Value* context) {
  auto* pointer = builder.getPtrTy();
  Value* frame = builder.CreateLoad(pointer, builder.CreateConstGEP1_64(builder.getInt8Ty(), context, frame_offset));
  Value* stacks = builder.CreateLoad(pointer, builder.CreateConstGEP1_64(builder.getInt8Ty(), frame, offsetof(BlockFrame, dynamic_stack)));
  Value* bytes = builder.CreateLoad(builder.getInt64Ty(),
                                    builder.CreateConstGEP1_64(builder.getInt8Ty(), frame, offsetof(BlockFrame, dynamic_stack_bytes)));
  Value* thread = builder.CreateZExt(linear_thread_index(builder, context), builder.getInt64Ty());
  Value* start = builder.CreateGEP(builder.getInt8Ty(), stacks, builder.CreateMul(thread, bytes));
  return {frame, start, bytes};
}

// The body of a stack intrinsic (intrinsics::stack_reset and its kin). The stack grows up.
void define_stack_operation(llvm::Function& function, llvm::IRBuilder<>& builder, std::string_view name) {
  DynamicStack stack = dynamic_stack(builder, function.getArg(0));
  llvm::Type* u64 = builder.getInt64Ty();
  if (name == intrinsics::stack_reset) {
    builder.CreateStore(builder.getInt64(host_abi::dynamic_stack_header_bytes), stack.start);
    builder.CreateRetVoid();
    return;
  }
  if (name == intrinsics::stack_save) {
    builder.CreateRet(builder.CreateGEP(builder.getInt8Ty(), stack.start, builder.CreateLoad(u64, stack.start)));
    return;
  }
  Value* start = builder.CreatePtrToInt(stack.start, u64);
  if (name == intrinsics::stack_restore) {
    builder.CreateStore(builder.CreateSub(builder.CreatePtrToInt(function.getArg(1), u64), start), stack.start);
    builder.CreateRetVoid();
    return;
  }
  // stack_allocate(context, bytes, alignment)
  Value* bytes = function.getArg(1);
  Value* alignment = function.getArg(2);
  Value* free = builder.CreateAdd(start, builder.CreateLoad(u64, stack.start));
  Value* begin = builder.CreateAnd(builder.CreateAdd(free, builder.CreateSub(alignment, builder.getInt64(1))),
                                   builder.CreateNeg(alignment));
  Value* end = builder.CreateAdd(begin, bytes);
  // Unsigned comparisons: a position that wrapped around, or one a stackrestore took off the
  // stack, fails one of them.
  Value* fits = builder.CreateAnd(
      builder.CreateAnd(builder.CreateICmpUGE(begin, builder.CreateAdd(start, builder.getInt64(host_abi::dynamic_stack_header_bytes))),
                        builder.CreateICmpULE(begin, end)),
      builder.CreateICmpULE(end, builder.CreateAdd(start, stack.bytes)));
  auto* overflow = llvm::BasicBlock::Create(builder.getContext(), "overflow", &function);
  auto* allocated = llvm::BasicBlock::Create(builder.getContext(), "allocated", &function);
  builder.CreateCondBr(fits, allocated, overflow);
  builder.SetInsertPoint(overflow);
  llvm::FunctionCallee report = function.getParent()->getOrInsertFunction(host_abi::stack_overflow_symbol, builder.getVoidTy(),
                                                                         builder.getPtrTy(), u64);
  builder.CreateCall(report, {stack.frame, bytes})->setDoesNotReturn();
  builder.CreateUnreachable();
  builder.SetInsertPoint(allocated);
  builder.CreateStore(builder.CreateSub(end, start), stack.start);
  builder.CreateRet(builder.CreateIntToPtr(begin, builder.getPtrTy()));
}

void make_inline_body(llvm::Function& function) {
  function.setLinkage(llvm::GlobalValue::InternalLinkage);
  function.addFnAttr(llvm::Attribute::AlwaysInline);
}

// vprintf(ctx, &result, &format, &arguments) → __xcuda_vprintf(format, arguments).
void define_vprintf(llvm::Function& function) {
  llvm::Module& module = *function.getParent();
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", &function));
  auto* pointer = builder.getPtrTy();
  llvm::FunctionCallee runtime = module.getOrInsertFunction(host_abi::vprintf_symbol, builder.getInt32Ty(), pointer, pointer);
  Value* format = builder.CreateLoad(pointer, function.getArg(2));
  Value* arguments = builder.CreateLoad(pointer, function.getArg(3));
  builder.CreateStore(builder.CreateCall(runtime, {format, arguments}), function.getArg(1));
  builder.CreateRetVoid();
  make_inline_body(function);
}

// __assertfail(ctx, &message, &file, &line, &function, &char_size) → __xcuda_assertfail(…).
void define_assert_fail(llvm::Function& function) {
  llvm::Module& module = *function.getParent();
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", &function));
  auto* pointer = builder.getPtrTy();
  llvm::FunctionCallee runtime = module.getOrInsertFunction(host_abi::assert_fail_symbol, builder.getVoidTy(), pointer, pointer,
                                                            builder.getInt32Ty(), pointer, builder.getInt64Ty());
  builder.CreateCall(runtime, {builder.CreateLoad(pointer, function.getArg(1)), builder.CreateLoad(pointer, function.getArg(2)),
                               builder.CreateLoad(builder.getInt32Ty(), function.getArg(3)),
                               builder.CreateLoad(pointer, function.getArg(4)),
                               builder.CreateLoad(builder.getInt64Ty(), function.getArg(5))});
  builder.CreateRetVoid();
  make_inline_body(function);
}

// cudaGraphSetConditional(ctx, &handle, &value) → __xcuda_set_conditional(handle, value).
void define_set_conditional(llvm::Function& function) {
  llvm::Module& module = *function.getParent();
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", &function));
  llvm::FunctionCallee runtime = module.getOrInsertFunction(host_abi::set_conditional_symbol, builder.getVoidTy(),
                                                            builder.getInt64Ty(), builder.getInt32Ty());
  builder.CreateCall(runtime, {builder.CreateLoad(builder.getInt64Ty(), function.getArg(1)),
                               builder.CreateLoad(builder.getInt32Ty(), function.getArg(2))});
  builder.CreateRetVoid();
  make_inline_body(function);
}

}  // namespace

Value* load_block_dimension(llvm::IRBuilder<>& builder, Value* frame, uint32_t axis) {
  llvm::LoadInst* extent = builder.CreateLoad(builder.getInt32Ty(), builder.CreateConstGEP1_64(builder.getInt8Ty(), frame, axis_offset(offsetof(BlockFrame, block_dim), axis)));
  llvm::MDBuilder metadata(builder.getContext());
  extent->setMetadata(llvm::LLVMContext::MD_range, metadata.createRange(llvm::APInt(32, 1), llvm::APInt(32, axis == 2 ? 65 : 1025)));
  return extent;
}

std::vector<std::string> define_runtime_services(llvm::Module& module, uint32_t static_shared_bytes) {
  // Folds first: their loops read peers, which the rest then defines. A warp path computes its
  // folds whole instead (warp_lanes.h).
  for (llvm::Function& function : module) {
    std::optional<WarpFold> fold = warp_fold_of(function.getName());
    if (!fold || !function.isDeclaration() || function.use_empty()) continue;
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", &function));
    builder.CreateRet(emit_warp_fold(builder, *fold, function.getArg(0), function.getArg(1), function.getArg(2)));
    make_inline_body(function);
  }
  if (llvm::Function* initialiser = module.getFunction(intrinsics::module_initialiser))
    initialiser->setName(host_abi::module_initialiser_symbol);
  std::vector<std::string> missing;
  std::vector<llvm::Function*> declarations;
  for (llvm::Function& function : module) {
    // The runtime links the builtin library's body instead (builtin_library.h).
    if (!function.isDeclaration() && is_builtin(function.getName())) function.deleteBody();
    if (function.isDeclaration() && !function.isIntrinsic()) declarations.push_back(&function);
  }
  for (llvm::Function* function : declarations) {
    std::string_view name = function->getName();
    // Block formation handles barriers and warp exchanges.
    if (name == intrinsics::barrier || name == intrinsics::warp_exchange || name == intrinsics::warp_exchange_words || function->use_empty())
      continue;
    if (name == "vprintf" && function->arg_size() == 4) {
      define_vprintf(*function);
      continue;
    }
    if (name == "__assertfail" && function->arg_size() == 6) {
      define_assert_fail(*function);
      continue;
    }
    if (name == "cudaGraphSetConditional" && function->arg_size() == 3) {
      define_set_conditional(*function);
      continue;
    }
    if (function->hasFnAttribute(intrinsics::external_function_attribute)) {
      missing.emplace_back(name);
      continue;
    }
    if (!name.starts_with("xcuda.") || is_builtin(name)) continue;  // a C library or builtin library function
    if (name == intrinsics::warp_peer || name == intrinsics::warp_peer_word) {
      name == intrinsics::warp_peer ? define_warp_peer(*function) : define_warp_peer_word(*function);
      make_inline_body(*function);
      continue;
    }
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", function));
    Value* context = function->getArg(0);
    if (name == intrinsics::shared_base) {
      builder.CreateRet(frame_field(builder, context, offsetof(BlockFrame, shared_memory), builder.getPtrTy()));
    } else if (name == intrinsics::trap || name == intrinsics::illegal_instruction) {
      auto* pointer = builder.getPtrTy();
      const char* symbol = name == intrinsics::trap ? host_abi::trap_symbol : host_abi::illegal_instruction_symbol;
      llvm::FunctionCallee runtime = module.getOrInsertFunction(symbol, builder.getVoidTy(), pointer);
      Value* frame = builder.CreateLoad(pointer, builder.CreateConstGEP1_64(builder.getInt8Ty(), context, frame_offset));
      builder.CreateCall(runtime, {frame})->setDoesNotReturn();
      builder.CreateUnreachable();
    } else if (name == intrinsics::stack_reset || name == intrinsics::stack_allocate || name == intrinsics::stack_save ||
               name == intrinsics::stack_restore) {
      define_stack_operation(*function, builder, name);
    } else if (name == intrinsics::in_shared_window || name == intrinsics::in_local_window || name == intrinsics::in_parameter_window) {
      builder.CreateRet(in_window(builder, context, function->getArg(1), name, static_shared_bytes));
    } else if (name.starts_with(intrinsics::special_register_prefix)) {
      auto [register_name, component] = intrinsics::parse_special_register(name);
      Value* value = special_register(builder, context, register_name, component, static_shared_bytes);
      if (value == nullptr) {
        function->getEntryBlock().eraseFromParent();
        missing.emplace_back(name);
        continue;
      }
      builder.CreateRet(value);
    } else {
      function->getEntryBlock().eraseFromParent();
      missing.emplace_back(name);
      continue;
    }
    make_inline_body(*function);
  }
  return missing;
}

}  // namespace xcuda::ptx::host
