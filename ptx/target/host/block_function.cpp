#include <functional>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "host_abi.h"
#include "lower/intrinsics.h"
#include "target/host/barrier_regions.h"
#include "target/host/host_target.h"
#include "target/host/thread_context.h"
#include "target/host/warp_exchange.h"

namespace xcuda::ptx::host {
namespace {

using llvm::Value;

// Emits `for z < depth, for y < height, for x < width: body(x, y, z)` at the builder's position
// and leaves the builder after the loops.
void emit_thread_loops(llvm::IRBuilder<>& builder, const std::array<Value*, 3>& extent,
                       const std::function<void(const std::array<Value*, 3>&)>& body) {
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = function->getContext();
  std::array<Value*, 3> index{};
  std::array<llvm::PHINode*, 3> counters{};
  std::array<llvm::BasicBlock*, 3> headers{};
  std::array<llvm::BasicBlock*, 3> exits{};
  static constexpr const char* names[] = {"x", "y", "z"};
  for (int axis = 2; axis >= 0; --axis) {
    llvm::BasicBlock* before = builder.GetInsertBlock();
    headers[axis] = llvm::BasicBlock::Create(context, std::string("loop.") + names[axis], function);
    auto* loop_body = llvm::BasicBlock::Create(context, std::string("body.") + names[axis], function);
    exits[axis] = llvm::BasicBlock::Create(context, std::string("done.") + names[axis], function);
    builder.CreateBr(headers[axis]);
    builder.SetInsertPoint(headers[axis]);
    counters[axis] = builder.CreatePHI(builder.getInt32Ty(), 2, names[axis]);
    counters[axis]->addIncoming(builder.getInt32(0), before);
    builder.CreateCondBr(builder.CreateICmpULT(counters[axis], extent[axis]), loop_body, exits[axis]);
    builder.SetInsertPoint(loop_body);
    index[axis] = counters[axis];
  }
  body(index);
  for (int axis = 0; axis < 3; ++axis) {
    Value* next = builder.CreateAdd(counters[axis], builder.getInt32(1), "", /*HasNUW=*/true);
    counters[axis]->addIncoming(next, builder.GetInsertBlock());
    builder.CreateBr(headers[axis]);
    builder.SetInsertPoint(exits[axis]);
  }
}

// Runs rounds until every thread has finished: each round takes every unfinished thread from
// where it stopped to its next cut, so no thread passes a barrier before all have reached it.
// A round in which some thread reached a warp exchange holds the threads waiting at a block
// barrier for the next round: that thread has yet to arrive at the barrier.
void run_region_by_region(llvm::IRBuilder<>& builder, const ResumableKernel& kernel, const std::array<Value*, 3>& extent,
                          Value* thread, Value* parameters, const std::function<void(const std::array<Value*, 3>&)>& enter_thread) {
  llvm::Function* block = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = block->getContext();
  llvm::Type* wide = builder.getInt64Ty();
  Value* width = builder.CreateZExt(extent[0], wide);
  Value* height = builder.CreateZExt(extent[1], wide);
  Value* threads = builder.CreateMul(builder.CreateMul(width, height), builder.CreateZExt(extent[2], wide));
  uint64_t slot_bytes = kernel.storage_bytes_per_thread;
  auto* storage = builder.CreateAlloca(builder.getInt8Ty(), builder.CreateMul(threads, builder.getInt64(slot_bytes)), "thread_storage");
  storage->setAlignment(llvm::Align(16));
  auto* states = builder.CreateAlloca(builder.getInt32Ty(), threads, "resume_points");
  builder.CreateMemSet(states, builder.getInt8(0), builder.CreateMul(threads, builder.getInt64(4)), llvm::Align(4));
  Value* whole_warps = builder.CreateAnd(builder.CreateAdd(threads, builder.getInt64(31)), builder.getInt64(~uint64_t{31}));
  Value* exchange_bytes = builder.CreateMul(whole_warps, builder.getInt64(exchange_bytes_per_thread()));
  auto* exchange = builder.CreateAlloca(builder.getInt8Ty(), exchange_bytes, "warp_exchange");
  exchange->setAlignment(llvm::Align(16));
  builder.CreateMemSet(exchange, builder.getInt8(0), exchange_bytes, llvm::Align(16));
  builder.CreateStore(exchange, builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, exchange_offset));
  auto* unfinished = builder.CreateAlloca(builder.getInt1Ty(), nullptr, "unfinished");
  auto* exchanging = builder.CreateAlloca(builder.getInt1Ty(), nullptr, "exchanging");
  builder.CreateStore(builder.getFalse(), exchanging);
  // Round 0 would read as "never written" in the exchange slots.
  auto* round_number = builder.CreateAlloca(builder.getInt32Ty(), nullptr, "round_number");
  builder.CreateStore(builder.getInt32(1), round_number);
  Value* round_field = builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, round_offset);
  auto* round = llvm::BasicBlock::Create(context, "round", block);
  auto* done = llvm::BasicBlock::Create(context, "all_finished", block);
  builder.CreateBr(round);
  builder.SetInsertPoint(round);
  builder.CreateStore(builder.getFalse(), unfinished);
  Value* current_round = builder.CreateLoad(builder.getInt32Ty(), round_number);
  builder.CreateStore(current_round, round_field);
  builder.CreateStore(builder.CreateAdd(current_round, builder.getInt32(1)), round_number);
  Value* hold_barriers = builder.CreateLoad(builder.getInt1Ty(), exchanging);
  builder.CreateStore(builder.getFalse(), exchanging);
  Value* finished = builder.getInt32(thread_finished);
  Value* zero = builder.getInt32(0);
  emit_thread_loops(builder, extent, [&](const std::array<Value*, 3>& index) {
    enter_thread(index);
    Value* plane = builder.CreateAdd(builder.CreateZExt(index[1], wide), builder.CreateMul(height, builder.CreateZExt(index[2], wide)));
    Value* linear = builder.CreateAdd(builder.CreateZExt(index[0], wide), builder.CreateMul(width, plane));
    builder.CreateStore(builder.CreateTrunc(linear, builder.getInt32Ty()),
                        builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, linear_index_offset));
    Value* state_pointer = builder.CreateGEP(builder.getInt32Ty(), states, linear);
    Value* state = builder.CreateLoad(builder.getInt32Ty(), state_pointer);
    Value* at_barrier = builder.CreateAnd(builder.CreateICmpNE(state, zero),
                                          builder.CreateICmpEQ(builder.CreateAnd(state, warp_resume_flag), zero));
    Value* held = builder.CreateAnd(hold_barriers, at_barrier);
    auto* run = llvm::BasicBlock::Create(context, "run_thread", block);
    auto* wait = llvm::BasicBlock::Create(context, "hold_thread", block);
    auto* next = llvm::BasicBlock::Create(context, "next_thread", block);
    auto* not_finished = llvm::BasicBlock::Create(context, "thread_not_finished", block);
    builder.CreateCondBr(builder.CreateICmpEQ(state, finished), next, not_finished);
    builder.SetInsertPoint(not_finished);
    builder.CreateCondBr(held, wait, run);
    builder.SetInsertPoint(wait);
    builder.CreateStore(builder.getTrue(), unfinished);
    builder.CreateBr(next);
    builder.SetInsertPoint(run);
    Value* slot = builder.CreateGEP(builder.getInt8Ty(), storage, builder.CreateMul(linear, builder.getInt64(slot_bytes)));
    Value* reached = builder.CreateCall(kernel.function, {thread, parameters, slot, state});
    builder.CreateStore(reached, state_pointer);
    Value* waiting = builder.CreateOr(builder.CreateLoad(builder.getInt1Ty(), unfinished), builder.CreateICmpNE(reached, finished));
    builder.CreateStore(waiting, unfinished);
    Value* at_exchange = builder.CreateAnd(builder.CreateICmpNE(reached, finished),
                                           builder.CreateICmpNE(builder.CreateAnd(reached, warp_resume_flag), zero));
    builder.CreateStore(builder.CreateOr(builder.CreateLoad(builder.getInt1Ty(), exchanging), at_exchange), exchanging);
    builder.CreateBr(next);
    builder.SetInsertPoint(next);
  });
  builder.CreateCondBr(builder.CreateLoad(builder.getInt1Ty(), unfinished), round, done);
  builder.SetInsertPoint(done);
}

// Returns the per-thread stack bytes of a kernel with barriers, 0 otherwise.
uint64_t form_block_function(llvm::Function& kernel, const std::string& kernel_name, DiagnosticSink& diagnostics) {
  llvm::Module& module = *kernel.getParent();
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto* pointer = builder.getPtrTy();
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer}, false);
  std::string name = std::string(host_abi::block_symbol_prefix) + kernel_name;
  auto* block = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, name, module);
  block->addFnAttr(llvm::Attribute::NoUnwind);
  Value* parameters = block->getArg(0);
  Value* frame = block->getArg(1);
  parameters->setName("parameters");
  frame->setName("frame");
  // Kernels only read their parameters and the frame, and nothing else writes them during the
  // block: telling LLVM lets it keep them in registers across stores to global memory.
  for (llvm::Argument* argument : {block->getArg(0), block->getArg(1)}) {
    argument->addAttr(llvm::Attribute::NoAlias);
    argument->addAttr(llvm::Attribute::ReadOnly);
  }

  std::optional<ResumableKernel> resumable = split_at_barriers(kernel, kernel_name, diagnostics);

  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", block));
  auto* thread = builder.CreateAlloca(llvm::ArrayType::get(builder.getInt8Ty(), sizeof(ThreadContext)), nullptr, "thread");
  thread->setAlignment(llvm::Align(alignof(ThreadContext)));
  builder.CreateStore(frame, builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, frame_offset));
  std::array<Value*, 3> extent{};
  for (uint32_t axis = 0; axis < 3; ++axis)
    extent[axis] = builder.CreateLoad(builder.getInt32Ty(),
                                      builder.CreateConstGEP1_64(builder.getInt8Ty(), frame, offsetof(host_abi::BlockFrame, block_dim) + 4 * axis));
  auto enter_thread = [&](const std::array<Value*, 3>& index) {
    for (uint32_t axis = 0; axis < 3; ++axis)
      builder.CreateStore(index[axis], builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, thread_index_offset + 4 * axis));
  };
  if (!resumable) {
    emit_thread_loops(builder, extent, [&](const std::array<Value*, 3>& index) {
      enter_thread(index);
      builder.CreateCall(&kernel, {thread, parameters});
    });
  } else {
    run_region_by_region(builder, *resumable, extent, thread, parameters, enter_thread);
    kernel.eraseFromParent();
  }
  builder.CreateRetVoid();
  return resumable ? resumable->storage_bytes_per_thread + exchange_bytes_per_thread() : 0;
}

}  // namespace

std::unordered_map<std::string, uint64_t> form_block_functions(llvm::Module& module, DiagnosticSink& diagnostics) {
  std::unordered_map<std::string, uint64_t> stack_bytes;
  llvm::NamedMDNode* kernels = module.getNamedMetadata(intrinsics::kernels_metadata);
  if (kernels == nullptr) return stack_bytes;
  std::vector<std::pair<llvm::Function*, std::string>> entries;
  for (llvm::MDNode* node : kernels->operands())
    entries.emplace_back(llvm::cast<llvm::Function>(llvm::cast<llvm::ValueAsMetadata>(node->getOperand(0))->getValue()),
                         llvm::cast<llvm::MDString>(node->getOperand(1))->getString().str());
  kernels->eraseFromParent();
  for (const auto& [kernel, name] : entries)
    if (uint64_t bytes = form_block_function(*kernel, name, diagnostics)) stack_bytes[name] = bytes;
  return stack_bytes;
}

}  // namespace xcuda::ptx::host
