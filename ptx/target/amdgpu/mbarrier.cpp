// mbarrier objects (cuda::barrier, cuda::pipeline) on AMDGPU: intrinsics::mbarrier as atomics on
// the object's 64-bit word, in LDS or global memory, with the host backend's layout
// (runtime/host/fiber.cpp):
//   bits 0-20   arrivals the current phase still waits for
//   bits 21-41  arrivals each phase expects
//   bits 42-62  transactions the phase still waits for (signed)
//   bit 63      the phase's parity
// An arrival, expect_tx or complete_tx is a compare-and-swap loop that also completes the phase
// once neither arrivals nor transactions are pending; arrive returns the word before it, whose
// parity test_wait compares. A lane whose phase has not completed sleeps briefly before it
// answers, so that lanes polling in a loop leave the memory to those they wait for.
// Approximation: a lane waiting for another lane of its own wavefront that has not arrived yet
// (a producer and a consumer in one warp) waits forever, as the wavefront runs its lanes together.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsAMDGPU.h>
#include <llvm/IR/Module.h>

#include "lower/intrinsics.h"
#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

using llvm::Value;
using Operation = intrinsics::MbarrierOperation;

constexpr uint32_t count_bits = 21;
constexpr uint64_t count_mask = (uint64_t{1} << count_bits) - 1;

Value* code(llvm::IRBuilder<>& builder, Operation operation) { return builder.getInt32(static_cast<uint32_t>(operation)); }

}  // namespace

// mbarrier(context, operation, object, value, count), see lower/intrinsics.h.
void define_mbarrier(llvm::Function& function) {
  llvm::LLVMContext& context = function.getContext();
  auto block = [&](const char* name) { return llvm::BasicBlock::Create(context, name, &function); };
  llvm::IRBuilder<> builder(block("entry"));
  auto* i64 = builder.getInt64Ty();
  llvm::SyncScope::ID workgroup = context.getOrInsertSyncScopeID("workgroup");
  Value* operation = builder.CreateAnd(function.getArg(1), ptx::host_abi::mbarrier_operation_mask);
  Value* drop = builder.CreateICmpNE(builder.CreateAnd(function.getArg(1), ptx::host_abi::mbarrier_drop), builder.getInt32(0));
  Value* object = function.getArg(2);
  Value* value = function.getArg(3);
  Value* count = builder.CreateZExt(function.getArg(4), i64);
  auto store = [&](Value* word) {
    auto* instruction = builder.CreateAlignedStore(word, object, llvm::Align(8));
    instruction->setAtomic(llvm::AtomicOrdering::Release, workgroup);
    builder.CreateRet(builder.getInt64(0));
  };
  llvm::BasicBlock* initialize = block("init");
  llvm::BasicBlock* invalidate = block("invalidate");
  llvm::BasicBlock* test = block("test");
  llvm::BasicBlock* pending = block("pending_count");
  llvm::BasicBlock* update = block("update");
  auto* choice = builder.CreateSwitch(operation, update, 5);
  choice->addCase(builder.getInt32(static_cast<uint32_t>(Operation::init)), initialize);
  choice->addCase(builder.getInt32(static_cast<uint32_t>(Operation::invalidate)), invalidate);
  choice->addCase(builder.getInt32(static_cast<uint32_t>(Operation::test_wait)), test);
  choice->addCase(builder.getInt32(static_cast<uint32_t>(Operation::test_parity)), test);
  choice->addCase(builder.getInt32(static_cast<uint32_t>(Operation::pending_count)), pending);

  builder.SetInsertPoint(initialize);
  store(builder.CreateOr(count, builder.CreateShl(count, count_bits)));
  builder.SetInsertPoint(invalidate);
  store(builder.getInt64(0));
  builder.SetInsertPoint(pending);
  builder.CreateRet(builder.CreateAnd(value, count_mask));

  // test_wait compares with the parity of a state arrive returned, test_parity with a parity.
  builder.SetInsertPoint(test);
  Value* waited = builder.CreateSelect(builder.CreateICmpEQ(operation, code(builder, Operation::test_wait)),
                                       builder.CreateLShr(value, 63), builder.CreateAnd(value, 1));
  auto* word = builder.CreateAlignedLoad(i64, object, llvm::Align(8));
  word->setAtomic(llvm::AtomicOrdering::Acquire, workgroup);
  Value* completed = builder.CreateICmpNE(builder.CreateLShr(word, 63), waited);
  llvm::BasicBlock* sleep = block("sleep");
  llvm::BasicBlock* answer = block("answer");
  builder.CreateCondBr(completed, answer, sleep);
  builder.SetInsertPoint(sleep);
  builder.CreateIntrinsic(llvm::Intrinsic::amdgcn_s_sleep, {}, {builder.getInt32(1)});
  builder.CreateBr(answer);
  builder.SetInsertPoint(answer);
  builder.CreateRet(builder.CreateZExt(completed, i64));

  // arrive, expect_tx and complete_tx: one compare-and-swap of the whole word.
  builder.SetInsertPoint(update);
  auto* first = builder.CreateAlignedLoad(i64, object, llvm::Align(8));
  first->setAtomic(llvm::AtomicOrdering::Monotonic, workgroup);
  llvm::BasicBlock* retry = block("retry");
  llvm::BasicBlock* done = block("done");
  builder.CreateBr(retry);
  builder.SetInsertPoint(retry);
  llvm::PHINode* old = builder.CreatePHI(i64, 2);
  old->addIncoming(first, update);
  Value* is_arrive = builder.CreateICmpEQ(operation, code(builder, Operation::arrive));
  Value* arrivals = builder.CreateAnd(old, count_mask);
  Value* expected = builder.CreateAnd(builder.CreateLShr(old, count_bits), count_mask);
  // Transactions as a signed 64-bit number: shifted up to the top, then back.
  Value* transactions = builder.CreateAShr(builder.CreateShl(old, 64 - 3 * count_bits), 64 - count_bits);
  Value* delta = builder.CreateSExt(builder.CreateTrunc(value, builder.getInt32Ty()), i64);
  Value* completes_transactions = builder.CreateICmpEQ(operation, code(builder, Operation::complete_tx));
  transactions = builder.CreateAdd(transactions, builder.CreateSelect(completes_transactions, builder.CreateNeg(delta), delta));
  arrivals = builder.CreateSub(arrivals, builder.CreateSelect(is_arrive, count, builder.getInt64(0)));
  Value* dropped = builder.CreateSub(expected, builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, expected, count));
  expected = builder.CreateSelect(builder.CreateAnd(is_arrive, drop), dropped, expected);
  Value* parity = builder.CreateAnd(old, uint64_t{1} << 63);
  // The phase ends once every arrival and every transaction came; the next expects as many.
  Value* ends = builder.CreateAnd(builder.CreateICmpEQ(builder.CreateAnd(arrivals, count_mask), builder.getInt64(0)),
                                  builder.CreateICmpEQ(transactions, builder.getInt64(0)));
  parity = builder.CreateSelect(ends, builder.CreateXor(parity, uint64_t{1} << 63), parity);
  arrivals = builder.CreateSelect(ends, expected, arrivals);
  Value* updated = builder.CreateOr(parity, builder.CreateAnd(arrivals, count_mask));
  updated = builder.CreateOr(updated, builder.CreateShl(expected, count_bits));
  updated = builder.CreateOr(updated, builder.CreateShl(builder.CreateAnd(transactions, count_mask), 2 * count_bits));
  Value* exchange = builder.CreateAtomicCmpXchg(object, old, updated, llvm::MaybeAlign(8), llvm::AtomicOrdering::AcquireRelease,
                                                llvm::AtomicOrdering::Monotonic, workgroup);
  old->addIncoming(builder.CreateExtractValue(exchange, 0), retry);
  builder.CreateCondBr(builder.CreateExtractValue(exchange, 1), done, retry);
  builder.SetInsertPoint(done);
  // PTX: the state captures the object as it was before the arrival.
  builder.CreateRet(builder.CreateSelect(is_arrive, old, builder.getInt64(0)));
}

}  // namespace xcuda::ptx::amdgpu
