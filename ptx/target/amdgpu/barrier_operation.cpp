// Counted and named barriers (bar.sync a, b; bar.arrive; bar.red) on AMDGPU. The hardware has one
// barrier per workgroup, s_barrier, which waits for every wavefront of it. (LLVM 19 declares
// named-barrier intrinsics for gfx12, s_barrier_init/join/signal_var, but RDNA4 has only the
// workgroup barrier; LLVM 20 drops them for gfx12.) So each of PTX's 16 barriers is a record in
// LDS, ahead of the module's .shared variables:
//   arrived     threads counted towards the current round
//   generation  rounds completed
//   tally[2]    lanes of the round whose value counts (per round parity, for bar.red)
// A warp arrives at once: its lowest active lane adds the warp's active lanes (and its counted
// values), the lane that completes the count opens the next round, and waiting lanes spin until
// the generation moves. Every kernel of a module that uses these clears the records on entry.
// Approximations: threads that have exited are not counted out of a whole-block barrier (which
// PTX allows for bar.sync only), and `bar.sync 0` with no count (s_barrier) and counted uses of
// barrier 0 are separate barriers.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"
#include "target/amdgpu/work_item.h"

namespace xcuda::ptx::amdgpu {
namespace {

using llvm::Value;
using intrinsics::BarrierOperation;

constexpr uint32_t barrier_count = 16;
constexpr uint32_t record_words = 4;  // arrived, generation, tally[2]

llvm::SyncScope::ID workgroup_scope(llvm::IRBuilder<>& builder) {
  return builder.getContext().getOrInsertSyncScopeID("workgroup");
}

Value* record_word(llvm::IRBuilder<>& builder, Value* record, Value* word) {
  return builder.CreateGEP(builder.getInt32Ty(), record, word);
}

Value* atomic_load(llvm::IRBuilder<>& builder, Value* address, llvm::AtomicOrdering ordering) {
  auto* load = builder.CreateLoad(builder.getInt32Ty(), address);
  load->setAtomic(ordering, workgroup_scope(builder));
  load->setAlignment(llvm::Align(4));
  return load;
}

void atomic_store(llvm::IRBuilder<>& builder, Value* value, Value* address, llvm::AtomicOrdering ordering) {
  auto* store = builder.CreateStore(value, address);
  store->setAtomic(ordering, workgroup_scope(builder));
  store->setAlignment(llvm::Align(4));
}

Value* atomic_add(llvm::IRBuilder<>& builder, Value* address, Value* value, llvm::AtomicOrdering ordering) {
  return builder.CreateAtomicRMW(llvm::AtomicRMWInst::Add, address, value, llvm::MaybeAlign(4), ordering, workgroup_scope(builder));
}

// barrier_operation(context, id, thread_count, operation, value), see lower/intrinsics.h.
void define_operation(llvm::Function& function, const Processor& processor, llvm::GlobalVariable& records) {
  llvm::LLVMContext& context = function.getContext();
  auto block = [&](const char* name) { return llvm::BasicBlock::Create(context, name, &function); };
  llvm::BasicBlock* entry = block("entry");
  llvm::BasicBlock* lead = block("lead");
  llvm::BasicBlock* complete = block("complete");
  llvm::BasicBlock* arrived = block("arrived");
  llvm::BasicBlock* wait = block("wait");
  llvm::BasicBlock* done = block("done");
  llvm::IRBuilder<> builder(entry);
  auto* i32 = builder.getInt32Ty();
  Value* identifier = builder.CreateAnd(function.getArg(1), barrier_count - 1);
  Value* requested = function.getArg(2);
  Value* operation = function.getArg(3);
  Value* record = builder.CreateGEP(i32, &records, builder.CreateMul(identifier, builder.getInt32(record_words)));
  Value* count = builder.CreateSelect(builder.CreateICmpEQ(requested, builder.getInt32(0)), block_thread_count(builder), requested);
  // bar.red.and counts the lanes whose value is false; popc and or count the true ones.
  Value* truth = builder.CreateICmpNE(function.getArg(4), builder.getInt32(0));
  Value* counted = builder.CreateXor(truth, builder.CreateICmpEQ(operation, builder.getInt32(static_cast<uint32_t>(BarrierOperation::all_true))));
  Value* active = warp_ballot(builder, processor, builder.getTrue());
  Value* votes = builder.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, warp_ballot(builder, processor, counted));
  Value* lanes = builder.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, active);
  Value* leader = builder.CreateICmpEQ(builder.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, active, builder.getTrue()),
                                       lane_id(builder, processor));
  // Every lane reads the round before its warp's arrival can complete it.
  builder.CreateFence(llvm::AtomicOrdering::Release, workgroup_scope(builder));
  Value* generation = atomic_load(builder, record_word(builder, record, builder.getInt32(1)), llvm::AtomicOrdering::Monotonic);
  Value* tally = record_word(builder, record, builder.CreateAdd(builder.getInt32(2), builder.CreateAnd(generation, 1)));
  builder.CreateCondBr(leader, lead, arrived);

  builder.SetInsertPoint(lead);
  atomic_add(builder, tally, votes, llvm::AtomicOrdering::Release);
  Value* before = atomic_add(builder, record_word(builder, record, builder.getInt32(0)), lanes, llvm::AtomicOrdering::AcquireRelease);
  builder.CreateCondBr(builder.CreateICmpEQ(builder.CreateAdd(before, lanes), count), complete, arrived);

  // The next round starts from zero; its tally slot was last read in the round before this one,
  // whose threads have all arrived here since.
  builder.SetInsertPoint(complete);
  atomic_store(builder, builder.getInt32(0), record_word(builder, record, builder.getInt32(0)), llvm::AtomicOrdering::Monotonic);
  Value* next_tally = builder.CreateAdd(builder.getInt32(2), builder.CreateAnd(builder.CreateAdd(generation, builder.getInt32(1)), 1));
  atomic_store(builder, builder.getInt32(0), record_word(builder, record, next_tally), llvm::AtomicOrdering::Monotonic);
  atomic_store(builder, builder.CreateAdd(generation, builder.getInt32(1)), record_word(builder, record, builder.getInt32(1)),
               llvm::AtomicOrdering::Release);
  builder.CreateBr(arrived);

  builder.SetInsertPoint(arrived);
  Value* arrives = builder.CreateICmpEQ(operation, builder.getInt32(static_cast<uint32_t>(BarrierOperation::arrive)));
  builder.CreateCondBr(arrives, done, wait);

  builder.SetInsertPoint(wait);
  Value* now = atomic_load(builder, record_word(builder, record, builder.getInt32(1)), llvm::AtomicOrdering::Acquire);
  llvm::BasicBlock* sleep = block("sleep");
  llvm::BasicBlock* released = block("released");
  builder.CreateCondBr(builder.CreateICmpEQ(now, generation), sleep, released);
  builder.SetInsertPoint(sleep);
  builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_sleep, {}, {builder.getInt32(1)});
  builder.CreateBr(wait);

  builder.SetInsertPoint(released);
  Value* total = atomic_load(builder, tally, llvm::AtomicOrdering::Monotonic);
  builder.CreateFence(llvm::AtomicOrdering::Acquire, workgroup_scope(builder));
  auto is = [&](BarrierOperation kind) { return builder.CreateICmpEQ(operation, builder.getInt32(static_cast<uint32_t>(kind))); };
  Value* result = builder.CreateSelect(is(BarrierOperation::count_true), total, builder.getInt32(0));
  result = builder.CreateSelect(is(BarrierOperation::all_true), builder.CreateZExt(builder.CreateICmpEQ(total, builder.getInt32(0)), i32), result);
  result = builder.CreateSelect(is(BarrierOperation::any_true), builder.CreateZExt(builder.CreateICmpNE(total, builder.getInt32(0)), i32), result);
  builder.CreateBr(done);

  builder.SetInsertPoint(done);
  llvm::PHINode* answer = builder.CreatePHI(i32, 2);
  answer->addIncoming(builder.getInt32(0), arrived);
  answer->addIncoming(result, released);
  builder.CreateRet(answer);
}

// Clears the records before any thread of the block can use them.
void define_reset(llvm::Module& module, llvm::GlobalVariable& records) {
  llvm::LLVMContext& context = module.getContext();
  auto* function = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                                          llvm::GlobalValue::InternalLinkage, reset_barriers_function, module);
  function->addFnAttr(llvm::Attribute::AlwaysInline);
  function->addFnAttr(llvm::Attribute::Convergent);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", function);
  llvm::BasicBlock* clear = llvm::BasicBlock::Create(context, "clear", function);
  llvm::BasicBlock* cleared = llvm::BasicBlock::Create(context, "cleared", function);
  llvm::IRBuilder<> builder(entry);
  builder.CreateCondBr(builder.CreateICmpEQ(linear_thread_index(builder), builder.getInt32(0)), clear, cleared);
  builder.SetInsertPoint(clear);
  builder.CreateMemSet(&records, builder.getInt8(0), barrier_records_bytes, llvm::MaybeAlign(16));
  builder.CreateBr(cleared);
  builder.SetInsertPoint(cleared);
  builder.CreateFence(llvm::AtomicOrdering::Release, workgroup_scope(builder));
  builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_barrier, {}, {});
  builder.CreateFence(llvm::AtomicOrdering::Acquire, workgroup_scope(builder));
  builder.CreateRetVoid();
}

}  // namespace

void define_barrier_operation(llvm::Function& function, const Processor& processor, llvm::GlobalVariable& records) {
  static_assert(barrier_records_bytes == barrier_count * record_words * 4);
  define_operation(function, processor, records);
  define_reset(*function.getParent(), records);
}

}  // namespace xcuda::ptx::amdgpu
