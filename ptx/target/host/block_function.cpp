#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "host_abi.h"
#include "lower/compiler_loops.h"
#include "lower/intrinsics.h"
#include "target/host/barrier_regions.h"
#include "target/host/host_target.h"
#include "target/host/thread_context.h"
#include "target/host/thread_order.h"
#include "target/host/thread_slot_accesses.h"
#include "target/host/warp_exchange.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {
namespace {

using llvm::Value;

// How a loop over a block's threads runs along x: over any width; over a width of whole warps
// (see whole_warps_width); or warp by warp, each warp's lanes a loop of their own (see
// warp_lanes.h).
enum class XLoop { any_width, whole_warps, by_lanes };

// Threads of a block run concurrently on a GPU, so in a race-free kernel no thread's memory
// access within a region depends on another's: the thread loop may run its iterations in any
// order and LLVM may vectorise it. The block function tags the accesses (and the calls that
// inline into them) of the work for one thread with an access group; its own bookkeeping that
// carries from one thread to the next (the thread context, reductions) stays untagged, which
// keeps the loop from being taken as parallel unless that bookkeeping becomes registers.
class ThreadLoopAccesses {
 public:
  explicit ThreadLoopAccesses(llvm::LLVMContext& context, bool vectorise = true)
      : group_(llvm::MDNode::getDistinct(context, {})), vectorise_(vectorise) {}

  template <class Instruction>
  Instruction* tag(Instruction* instruction) const {
    instruction->setMetadata(llvm::LLVMContext::MD_access_group, group_);
    return instruction;
  }

  // The loop id for a thread loop's back edge. A loop over the lanes of a warp must become one
  // vector of them (see warp_lanes.h): unrolled, it would not vectorise. A loop over a width of
  // whole warps steps one vector at a time (the vectoriser does not interleave: optimizer.cpp),
  // which divides a warp wherever its vectors are 32 lanes or fewer: LLVM then sees that the
  // vector loop leaves no threads over. Two vectors a step, as once asked for here, made the
  // benchmark suite's kernels no faster (five alternations) and saxpy's code 482 bytes instead
  // of 395. Nor is it unrolled: a few dozen trips gain nothing from it (saxpy's compile 10.9 ->
  // 10.0 ms of CPU, the benchmark suite as fast).
  llvm::MDNode* loop_id(llvm::LLVMContext& context, XLoop shape) const {
    auto* i32 = llvm::Type::getInt32Ty(context);
    std::vector<llvm::Metadata*> options{llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.parallel_accesses"), group_})};
    if (shape == XLoop::whole_warps)
      options.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.unroll.disable")}));
    if (!vectorise_)
      options.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                                                    llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(context))}));
    if (shape == XLoop::by_lanes) {
      options.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                                                    llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(context))}));
      options.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.vectorize.width"),
                                                    llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i32, warp_lanes))}));
      options.push_back(llvm::MDNode::get(context, {llvm::MDString::get(context, "llvm.loop.unroll.disable")}));
    }
    return compiler_loop_id(context, std::move(options));
  }

 private:
  llvm::MDNode* group_;
  bool vectorise_;
};

// Emits `for z < depth, for y < height, for x_begin <= x < width: body(x, y, z)` at the
// builder's position and leaves the builder after the loops. With `accesses`, the x loop is
// parallel over them. With a `rotation`, x runs from x_begin + rotation (at most the width) to
// the width and then from x_begin on. With XLoop::by_lanes, x_begin, the width and the rotation
// are whole warps.
void emit_thread_loops(llvm::IRBuilder<>& builder, const std::array<Value*, 3>& extent, const ThreadLoopAccesses* accesses,
                       const std::function<void(const std::array<Value*, 3>&)>& body, Value* x_begin = nullptr,
                       Value* rotation = nullptr, XLoop shape = XLoop::any_width) {
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = function->getContext();
  struct Loop {
    llvm::PHINode* counter;
    llvm::BasicBlock* header;
    llvm::BasicBlock* exit;
  };
  auto open = [&](const char* name, Value* begin, Value* end) {
    llvm::BasicBlock* before = builder.GetInsertBlock();
    Loop loop{nullptr, llvm::BasicBlock::Create(context, std::string("loop.") + name, function),
              llvm::BasicBlock::Create(context, std::string("done.") + name, function)};
    auto* loop_body = llvm::BasicBlock::Create(context, std::string("body.") + name, function);
    builder.CreateBr(loop.header);
    builder.SetInsertPoint(loop.header);
    loop.counter = builder.CreatePHI(builder.getInt32Ty(), 2, name);
    loop.counter->addIncoming(begin, before);
    builder.CreateCondBr(builder.CreateICmpULT(loop.counter, end), loop_body, loop.exit);
    builder.SetInsertPoint(loop_body);
    return loop;
  };
  // Returns the back edge.
  auto close = [&](const Loop& loop, bool parallel, uint32_t step = 1) {
    loop.counter->addIncoming(builder.CreateAdd(loop.counter, builder.getInt32(step), "", /*HasNUW=*/true), builder.GetInsertBlock());
    llvm::BranchInst* back_edge = builder.CreateBr(loop.header);
    back_edge->setMetadata(llvm::LLVMContext::MD_loop, parallel && accesses != nullptr ? accesses->loop_id(context, shape)
                                                                                     : compiler_loop_id(context));
    builder.SetInsertPoint(loop.exit);
    return back_edge;
  };
  // The loops over warps, over z and over a rotation's two parts stay rolled. LLVM's unrollers
  // weighed the first two to no effect, and unrolled the parts into two copies of the x loop,
  // which was meant to be one. Rolled, the host compile of tests/cuda/whole_warps.cu's module
  // took 5.7% fewer instructions (valgrind), mma_numerics.cu's 1.2%, 16 saxpy kernels' 2.9%; of
  // the objects of those, the benchmark suite's and a 1.8 MB libcusparse module, only the
  // rotating kernels' changed, and the suite's kernels ran as fast (eight alternating runs).
  // The loop over y is left to them, which unroll it only where its trip count is known (no
  // unrolling at run time: optimizer.cpp): kept rolled too, the suite's transpose took 1.57 ms
  // instead of 1.39 (medians of eight).
  Value* zero = builder.getInt32(0);
  Value* begin = x_begin != nullptr ? x_begin : zero;
  Loop z = open("z", zero, extent[2]);
  Loop y = open("y", zero, extent[1]);
  auto x_loop = [&](Value* from, Value* to) {
    if (shape == XLoop::by_lanes) {
      Loop warp = open("warp", from, to);
      // Counting x itself: the kernel's lane arithmetic (lane + 1) then differs from the
      // count's step, which the optimiser would otherwise merge with it and lose the count.
      Loop x = open("x", warp.counter, builder.CreateAdd(warp.counter, builder.getInt32(warp_lanes), "", /*HasNUW=*/true));
      body({x.counter, y.counter, z.counter});
      close(x, true);
      keep_rolled(close(warp, false, warp_lanes));
      return;
    }
    Loop x = open("x", from, to);
    body({x.counter, y.counter, z.counter});
    close(x, true);
  };
  if (rotation == nullptr) {
    x_loop(begin, extent[0]);
  } else {
    // Two parts, [split, width) and then [x_begin, split), around one copy of the body.
    Value* split = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, builder.CreateAdd(begin, rotation), extent[0]);
    Loop part = open("part", zero, builder.getInt32(2));
    Value* first = builder.CreateICmpEQ(part.counter, zero);
    x_loop(builder.CreateSelect(first, split, begin), builder.CreateSelect(first, extent[0], split));
    keep_rolled(close(part, false));
  }
  close(y, false);
  keep_rolled(close(z, false));
}

// Each loop over the threads inlines the whole resumable function to run one region of it:
// work for the optimiser that grows with the square of the regions. Beyond a few dozen the
// loops call it instead, which compiles in linear time but does not vectorise.
constexpr size_t most_regions_inlined = 24;

// Inlines `call`, its callee's only use, by moving the callee's blocks to the call rather than
// copying them, as the inliner would, simplifying each copied instruction: the always-inliner
// took 12% of the optimiser's time on a 1.8 MB libcusparse module of 90 kernels without
// barriers, and moved, the optimiser took 1.41-1.46 s instead of 1.55 (`xcuda compile --target
// host -j 1 --whole-warp-blocks --time-passes`, two alternations); the objects of that module
// and of the 255 modules of the nvcc corpus were the same but one, whose stencil kernel tests a
// condition the other way round.
void move_into_call_site(llvm::CallInst& call, const ThreadLoopAccesses& accesses) {
  llvm::Function& callee = *call.getCalledFunction();
  llvm::Function& caller = *call.getFunction();
  llvm::BasicBlock* before = call.getParent();
  llvm::BasicBlock* after = before->splitBasicBlock(call.getIterator(), "after_call");
  llvm::BasicBlock& callee_entry = callee.getEntryBlock();
  // Static allocations stay static, in the caller's entry block, where SROA looks for them.
  llvm::BasicBlock::iterator entry_position = caller.getEntryBlock().getFirstInsertionPt();
  for (llvm::Instruction& instruction : llvm::make_early_inc_range(callee_entry))
    if (auto* allocation = llvm::dyn_cast<llvm::AllocaInst>(&instruction); allocation != nullptr && allocation->isStaticAlloca())
      allocation->moveBefore(caller.getEntryBlock(), entry_position);
  for (llvm::Argument& argument : callee.args()) argument.replaceAllUsesWith(call.getArgOperand(argument.getArgNo()));
  for (llvm::BasicBlock& block : callee) {
    for (llvm::Instruction& instruction : block)
      if (instruction.mayReadOrWriteMemory()) accesses.tag(&instruction);
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator())) {
      llvm::BranchInst::Create(after, ret);
      ret->eraseFromParent();
    }
  }
  before->getTerminator()->eraseFromParent();
  llvm::BranchInst::Create(&callee_entry, before);
  caller.splice(after->getIterator(), &callee);
  call.eraseFromParent();
  callee.eraseFromParent();
}

// Runs the block region by region. Valid CUDA reaches each block barrier with all threads of the
// block that have not exited, so while all unfinished threads stand at the same resume point (no
// warp has diverged), each such region runs as a loop over them with the region's code inlined
// and a constant resume point, and the threads' next resume points, if all equal, choose the
// next loop. The loop runs over a range of threads, all of them unfinished: the whole block, or
// in a one-dimensional block the threads left when those below or above some index finished
// (`if (threadIdx.x < 32)`, a reduction's last warp). Otherwise (warps at different exchanges,
// threads at different barriers, finished threads among unfinished ones) the block goes on in
// rounds: each round takes
// every unfinished thread from where it stopped to its next cut, so no thread passes a barrier
// before all have reached it. A round in which some thread reached a warp exchange holds the
// threads waiting at a block barrier for the next round: that thread has yet to arrive at the
// barrier.
// A kernel split for warp lanes runs `by_warps`: a block of whole warps whose threads never part
// ways (see split_for_warp_lanes), its regions with lane exchanges warp by warp.
enum class RegionLoops { by_threads, by_warps };

// The code the rounds run, while a block's threads stand apart, in a copy of the resumable
// function of its own, simplified only and generated without optimisation (optimizer.cpp),
// rather than one more copy of every region inlined into the block function and optimised as
// the loops of threads standing together are: threads part at barriers and exchanges in
// divergent code, which the rounds take one thread at a time, and that loop neither vectorises
// nor holds uniform code to hoist. The tensor-core and barrier modules of the nvcc corpus
// compiled in 14-40% less CPU time (`perf stat -r 3 xcuda compile --target host -j 1
// --whole-warp-blocks`: sparse_mma.cu 997 -> 732 ms, half_accumulators.cu 1382 -> 923,
// early_exit_collectives.cu 173 -> 104, guarded_regions.cu 161 -> 126, block_barriers.cu 481
// -> 394). Only kernels whose threads may part have rounds (below).
llvm::Function* copy_for_threads_apart(llvm::Function& resumable) {
  llvm::ValueToValueMapTy values;
  llvm::Function* copy = llvm::CloneFunction(&resumable, values);
  copy->setName(resumable.getName() + ".apart");
  copy->removeFnAttr(llvm::Attribute::AlwaysInline);
  copy->addFnAttr(llvm::Attribute::NoInline);
  copy->addFnAttr(llvm::Attribute::OptimizeNone);
  copy->addFnAttr(threads_apart_attribute);
  return copy;
}

// Where the threads of a block stand after a loop over them, read back from their resume points
// (i32 states[count]) in a loop of its own: the loop over the threads then carries nothing from
// one thread to the next, and LLVM may vectorise it (and this one, as reductions). Returns the
// lowest and the highest resume point reached (thread_finished and 0 when all have finished), the
// range of the unfinished threads' linear indices and how many there are, which tells whether
// they fill the range. One function of the module's, called after every loop whose threads may
// part: written out after each, as a vector loop and its remainder, it cost the optimiser and the
// code generator their time again at every region. Called, a libcusparse module of six kernels of
// 16 regions (prune_csr_core) compiled in 1.29-1.32 s of CPU instead of 1.45-1.47, tests/cuda/
// guarded_regions.cu's in 122-126 ms instead of 144-165 (`perf stat -r 2 xcuda compile --target
// host -j 1 --whole-warp-blocks`, two alternations); the benchmark suite's kernels ran as fast
// (eight alternations), and so did a smoothing kernel behind an early return.
llvm::Function* where_threads_stand(llvm::Module& module) {
  if (llvm::Function* existing = module.getFunction("xcuda.where_threads_stand")) return existing;
  llvm::LLVMContext& context = module.getContext();
  auto* i32 = llvm::Type::getInt32Ty(context);
  auto* result = llvm::StructType::get(context, {i32, i32, i32, i32, i32});
  auto* function = llvm::Function::Create(llvm::FunctionType::get(result, {llvm::PointerType::get(context, 0), i32}, false),
                                          llvm::GlobalValue::InternalLinkage, "xcuda.where_threads_stand", module);
  function->addFnAttr(llvm::Attribute::NoInline);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", function));
  Value* states = function->getArg(0);
  Value* thread_count = function->getArg(1);
  Value* finished = builder.getInt32(thread_finished);
  Value* zero = builder.getInt32(0);
  auto* lowest = builder.CreateAlloca(i32);
  auto* highest = builder.CreateAlloca(i32);
  auto* first_unfinished = builder.CreateAlloca(i32);
  auto* unfinished_end = builder.CreateAlloca(i32);
  auto* unfinished = builder.CreateAlloca(i32);
  builder.CreateStore(finished, lowest);
  builder.CreateStore(zero, highest);
  builder.CreateStore(thread_count, first_unfinished);
  builder.CreateStore(zero, unfinished_end);
  builder.CreateStore(zero, unfinished);
  emit_thread_loops(builder, {thread_count, builder.getInt32(1), builder.getInt32(1)}, nullptr, [&](const std::array<Value*, 3>& index) {
    Value* reached = builder.CreateLoad(i32, builder.CreateGEP(i32, states, index[0]));
    Value* is_finished = builder.CreateICmpEQ(reached, finished);
    auto reduce = [&](llvm::Intrinsic::ID operation, llvm::AllocaInst* into, Value* value, Value* if_finished) {
      Value* operand = builder.CreateSelect(is_finished, if_finished, value);
      builder.CreateStore(builder.CreateBinaryIntrinsic(operation, builder.CreateLoad(i32, into), operand), into);
    };
    reduce(llvm::Intrinsic::umin, lowest, reached, finished);
    reduce(llvm::Intrinsic::umax, highest, reached, zero);
    reduce(llvm::Intrinsic::umin, first_unfinished, index[0], thread_count);
    reduce(llvm::Intrinsic::umax, unfinished_end, builder.CreateAdd(index[0], builder.getInt32(1)), zero);
    builder.CreateStore(builder.CreateAdd(builder.CreateLoad(i32, unfinished), builder.CreateZExt(builder.CreateNot(is_finished), i32)), unfinished);
  });
  Value* packed = llvm::PoisonValue::get(result);
  llvm::AllocaInst* fields[] = {lowest, highest, first_unfinished, unfinished_end, unfinished};
  for (unsigned field = 0; field < std::size(fields); ++field) packed = builder.CreateInsertValue(packed, builder.CreateLoad(i32, fields[field]), field);
  builder.CreateRet(packed);
  return function;
}

void run_region_by_region(llvm::IRBuilder<>& builder, const ResumableKernel& kernel, const std::array<Value*, 3>& extent,
                          Value* thread, Value* parameters,
                          const std::function<void(Value* context, const std::array<Value*, 3>&)>& enter_thread, RegionLoops loops,
                          bool inlining_deferred) {
  const bool by_warps = loops == RegionLoops::by_warps;
  llvm::Function* block = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = block->getContext();
  // Not vectorised where the kernel exchanges words: the regions of its matrix instructions
  // gather a warp's fragments and sum their products in loops, which the vectoriser does not
  // take, and the time the others would save is small beside those sums. Vectorised, the loads
  // of fragments before tests/cuda/mma_numerics.cu's mma.sync became gathers, and its module
  // compiled in 105 ms of CPU instead of 82 (`perf stat -r 10 xcuda compile --target host -j 1
  // --whole-warp-blocks`); a loop of m16n8k16 mma.sync over k and a single one per warp ran as
  // fast either way (43 and 22 ms for 2048 and 4096 warps, two alternations).
  ThreadLoopAccesses accesses(context, /*vectorise=*/kernel.exchanged_words == 0);
  kernel.function->addFnAttr(kernel.regions.size() <= most_regions_inlined ? llvm::Attribute::AlwaysInline
                                                                                     : llvm::Attribute::NoInline);
  llvm::Type* wide = builder.getInt64Ty();
  llvm::Type* i32 = builder.getInt32Ty();
  Value* width = builder.CreateZExt(extent[0], wide);
  Value* height = builder.CreateZExt(extent[1], wide);
  Value* threads = builder.CreateMul(builder.CreateMul(width, height), builder.CreateZExt(extent[2], wide));
  builder.CreateStore(builder.CreateTrunc(threads, i32), builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, thread_count_offset));
  Value* columns = kernel.storage.column_threads != 0 ? builder.getInt64(kernel.storage.column_threads) : threads;
  // Of a type of its own size where that is known, which instruction combining would make it
  // otherwise, dropping its mark.
  auto* storage = kernel.storage.column_threads != 0
                      ? builder.CreateAlloca(llvm::ArrayType::get(builder.getInt8Ty(), uint64_t{kernel.storage.column_threads} * kernel.storage.bytes_per_thread),
                                             nullptr, "thread_storage")
                      : builder.CreateAlloca(builder.getInt8Ty(), builder.CreateMul(columns, builder.getInt64(kernel.storage.bytes_per_thread)), "thread_storage");
  storage->setAlignment(llvm::Align(16));
  mark_thread_storage(*storage);
  // Apart from the storage, which the rounds' copy of the regions is passed, and so may be
  // written through any pointer the kernel stores to: in the storage, a uniform value read in
  // the loop of threads standing together (a tree reduction's stride) was read again in every
  // iteration, and `s[threadIdx.x + stride]` became a gather. Apart, the entry copies stay
  // registers. A shared-memory tree reduction behind `if (i >= n) return;` (4096 blocks of 256,
  // one host thread) ran in 1.5-2.1 ms instead of 4.8-7.4; without the return, 0.9-2.2.
  auto* uniform_area = builder.CreateAlloca(llvm::ArrayType::get(builder.getInt8Ty(), kernel.storage.uniform_bytes), nullptr, "uniform_area");
  uniform_area->setAlignment(llvm::Align(16));
  auto* states = builder.CreateAlloca(i32, threads, "resume_points");
  // By warps there are no rounds: a resume point is read only after the loop that wrote it, and
  // exchanges need no area.
  llvm::AllocaInst* exchange = nullptr;
  if (!by_warps) {
    builder.CreateMemSet(states, builder.getInt8(0), builder.CreateMul(threads, builder.getInt64(4)), llvm::Align(4));
    exchange = builder.CreateAlloca(builder.getInt8Ty(), exchange_area_bytes(builder, threads, kernel.exchanged_words), "warp_exchange");
    exchange->setAlignment(llvm::Align(16));
    builder.CreateStore(exchange, builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, exchange_offset));
  }
  auto* exchanging = builder.CreateAlloca(builder.getInt1Ty(), nullptr, "exchanging");
  // Threads part only after a region whose way out each thread takes for itself: where no region
  // has one, every region leads all threads to one next region (the switches below reach `mixed`
  // for no resume point that a thread can hold), and there are no rounds to run. Kept, the rounds
  // (their copy of the regions, which the block's storage is passed to) kept LLVM from optimising
  // the loops of threads standing together: the benchmark suite's sgemm took 38 ms instead of 6,
  // barrier_loop 5.5 instead of 2.0 (medians of five alternating runs of build/bench/bench_cuda);
  // left out, the benchmark suite's module compiled in 10% fewer instructions, tests/cuda/
  // block_barriers.cu's 12%, cooperative_grid_sync.cu's 43%, half_accumulators.cu's 20%.
  const bool rounds = !by_warps && std::any_of(kernel.regions.begin(), kernel.regions.end(),
                                               [](const Region& region) { return region.exit == RegionExit::per_thread; });
  // The rounds call a copy of the regions (copy_for_threads_apart), but where the kernel stays a
  // call anyway, and where a fallback whose inlining waits (defer_inlining) may never run.
  const bool apart_copy = rounds && kernel.function->hasFnAttribute(llvm::Attribute::AlwaysInline) && !inlining_deferred;
  // The copy reads a context of its own, filled from the block's for each thread it runs (the
  // kernel's code only reads a context): passed the block's, the context would escape, and LLVM
  // kept its fields in memory, reread after every store of the kernel's, in the loops of threads
  // standing together too, which then did not vectorise. A 1D smoothing kernel with 20 barrier
  // pairs behind `if (i >= n) return;` ran in 30-31 ms instead of 7.6-8 (1M threads, blocks of 256).
  llvm::AllocaInst* apart_context = apart_copy ? allocate_thread_context(builder, "thread_apart") : nullptr;
  // Where the unfinished threads stand: the lowest and highest resume point reached
  // (thread_finished when all have finished), the range of their linear indices and how many
  // there are, which tells whether they fill the range.
  auto* lowest = builder.CreateAlloca(i32, nullptr, "lowest_reached");
  auto* highest = builder.CreateAlloca(i32, nullptr, "highest_reached");
  auto* first_unfinished = builder.CreateAlloca(i32, nullptr, "first_unfinished");
  auto* unfinished_end = builder.CreateAlloca(i32, nullptr, "unfinished_end");
  auto* unfinished = builder.CreateAlloca(i32, nullptr, "unfinished");
  // The x range of the next loop over the threads that stand together.
  auto* x_begin = builder.CreateAlloca(i32, nullptr, "x_begin");
  auto* x_end = builder.CreateAlloca(i32, nullptr, "x_end");
  // Past most_regions_inlined one loop over the threads serves every region (see SharedLoop
  // below), and the block's state between regions stays in memory: promoted, the round number
  // and the x range each became a phi of every place a region may start from at every region,
  // over which the register coalescer took 4 s in a kernel of 264 regions.
  const bool one_loop = !by_warps && kernel.function->hasFnAttribute(llvm::Attribute::NoInline);
  auto load_state = [&](llvm::AllocaInst* field) { return builder.CreateLoad(i32, field, /*isVolatile=*/one_loop); };
  auto store_state = [&](Value* value, llvm::AllocaInst* field) { builder.CreateStore(value, field, /*isVolatile=*/one_loop); };
  Value* one_dimensional = builder.CreateICmpEQ(builder.CreateMul(extent[1], extent[2]), builder.getInt32(1));
  // Round 0 would read as "never written" in the exchange slots.
  auto* round_number = builder.CreateAlloca(i32, nullptr, "round_number");
  store_state(builder.getInt32(1), round_number);
  Value* round_field = builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, round_offset);
  Value* finished = builder.getInt32(thread_finished);
  auto start_round = [&] {
    Value* current_round = load_state(round_number);
    builder.CreateStore(current_round, round_field);
    store_state(builder.CreateAdd(current_round, builder.getInt32(1)), round_number);
    return current_round;
  };
  // Where the threads stand after a loop over them (where_threads_stand).
  Value* thread_count = builder.CreateTrunc(threads, i32);
  Value* zero = builder.getInt32(0);
  auto note_all_reached = [&] {
    Value* where = builder.CreateCall(where_threads_stand(*block->getParent()), {states, thread_count});
    llvm::AllocaInst* fields[] = {lowest, highest, first_unfinished, unfinished_end, unfinished};
    for (unsigned field = 0; field < std::size(fields); ++field) builder.CreateStore(builder.CreateExtractValue(where, field), fields[field]);
  };
  Value* together_begin_field = builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, together_begin_offset);
  Value* together_end_field = builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, together_end_offset);
  auto stand_together = [&](Value* begin, Value* end) {
    builder.CreateStore(begin, together_begin_field);
    builder.CreateStore(end, together_end_field);
    store_state(begin, x_begin);
    store_state(builder.CreateSelect(one_dimensional, end, extent[0]), x_end);
  };
  auto enter_linear = [&](const std::array<Value*, 3>& index) {
    enter_thread(thread, index);
    // In 32 bits without wrapping (a block has at most 1024 threads), so that the slots the
    // kernel addresses by it are seen to lie at consecutive addresses across x.
    Value* plane = builder.CreateAdd(index[1], builder.CreateMul(extent[1], index[2], "", true), "", true);
    Value* linear = builder.CreateAdd(index[0], builder.CreateMul(extent[0], plane, "", true), "", true);
    builder.CreateStore(linear, builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, linear_index_offset));
    return builder.CreateZExt(linear, wide);
  };
  // A thread's run of a region while the threads stand together; where it stopped is recorded
  // in its resume point where `recorded`.
  auto run_together = [&](const std::array<Value*, 3>& index, Value* resume_point, bool recorded) {
    Value* linear = enter_linear(index);
    Value* reached = accesses.tag(builder.CreateCall(kernel.function, {thread, parameters, storage, resume_point, builder.getTrue(), uniform_area}));
    if (recorded) accesses.tag(builder.CreateStore(reached, builder.CreateGEP(i32, states, linear)));
  };
  auto* round = llvm::BasicBlock::Create(context, "round", block);
  auto* mixed = llvm::BasicBlock::Create(context, "threads_apart", block);
  auto* done = llvm::BasicBlock::Create(context, "all_finished", block);

  std::unordered_map<uint32_t, llvm::BasicBlock*> regions;
  for (const Region& region : kernel.regions)
    regions[region.resume_point] = llvm::BasicBlock::Create(context, "region." + std::to_string(region.resume_point), block);
  // On to the region where all unfinished threads stand at i32 `next`, or `apart`. Past
  // most_regions_inlined, where `next` is known only at run time, one switch over the regions
  // serves each `apart`: a switch of its own at each such place made a libcublas trsm kernel of
  // 288 regions 37 switches of 288 cases (optimise 0.58 -> 0.53 s, emit 1.36 -> 1.29 s, text 291
  // -> 249 KB). With fewer regions each keeps its own: shared, sgemm, nbody and barrier_loop of
  // the benchmark suite ran 6-10% slower.
  std::unordered_map<llvm::BasicBlock*, llvm::PHINode*> switches;
  auto go_to_region = [&](Value* next, llvm::BasicBlock* apart) {
    if (one_loop && !llvm::isa<llvm::ConstantInt>(next)) {
      llvm::BasicBlock* from = builder.GetInsertBlock();
      llvm::PHINode*& shared_next = switches[apart];
      if (shared_next != nullptr) {
        shared_next->addIncoming(next, from);
        builder.CreateBr(shared_next->getParent());
        return;
      }
      auto* choosing = llvm::BasicBlock::Create(context, "choose_region", block);
      builder.CreateBr(choosing);
      builder.SetInsertPoint(choosing);
      shared_next = builder.CreatePHI(i32, 2, "next_region");
      shared_next->addIncoming(next, from);
      next = shared_next;
    }
    auto* unfinished_left = llvm::BasicBlock::Create(context, "threads_unfinished", block);
    builder.CreateCondBr(builder.CreateICmpEQ(next, finished), done, unfinished_left);
    builder.SetInsertPoint(unfinished_left);
    auto* choose = builder.CreateSwitch(next, apart, static_cast<unsigned>(regions.size()));
    for (const Region& following : kernel.regions)
      if (following.resume_point != 0) choose->addCase(builder.getInt32(following.resume_point), regions[following.resume_point]);
  };
  // After a loop over the threads: on to the region where all unfinished threads stand, or
  // `apart`.
  auto choose_next = [&](llvm::BasicBlock* apart) {
    Value* next = builder.CreateLoad(i32, lowest);
    Value* begin = builder.CreateLoad(i32, first_unfinished);
    Value* end = builder.CreateLoad(i32, unfinished_end);
    Value* whole_block = builder.CreateAnd(builder.CreateICmpEQ(begin, zero), builder.CreateICmpEQ(end, thread_count));
    Value* range_filled = builder.CreateICmpEQ(builder.CreateLoad(i32, unfinished), builder.CreateSub(end, begin));
    Value* at_one_point = builder.CreateICmpEQ(next, builder.CreateLoad(i32, highest));
    // All finished reads as together: lowest and highest are then thread_finished and 0.
    Value* together = builder.CreateOr(builder.CreateICmpEQ(next, finished),
                                       builder.CreateAnd(builder.CreateAnd(at_one_point, range_filled), builder.CreateOr(whole_block, one_dimensional)));
    auto* standing_together = llvm::BasicBlock::Create(context, "threads_together", block);
    builder.CreateCondBr(together, standing_together, apart);
    builder.SetInsertPoint(standing_together);
    stand_together(begin, end);
    go_to_region(next, apart);
  };
  // After a loop whose threads may part, the reading of where they stand and the choice of the
  // next region are the same whichever region the loop ran: past most_regions_inlined one of them
  // serves every region. With fewer regions each keeps its own, as it keeps its own switch
  // (go_to_region).
  llvm::BasicBlock* reading = nullptr;
  auto read_where_threads_stand = [&] {
    if (one_loop && reading != nullptr) {
      builder.CreateBr(reading);
      return;
    }
    if (one_loop) {
      reading = llvm::BasicBlock::Create(context, "where_threads_stand", block);
      builder.CreateBr(reading);
      builder.SetInsertPoint(reading);
    }
    note_all_reached();
    choose_next(mixed);
  };
  // Past most_regions_inlined the loops call the resumable function, and a loop of each region's
  // own would differ from the others in its resume point and range alone: one loop serves all
  // of them, from which a switch leads to what follows each region. Each loop of its own made a
  // libcublas trsm kernel of 264 shuffles (regions) a block function of 3,300 blocks, over whose
  // loops the optimiser took 10 of its 15 s to compile. Each region leaves its resume point and
  // range for the loop in memory, as it does the block's state.
  struct SharedLoop {
    llvm::BasicBlock* entry = nullptr;
    llvm::AllocaInst *resume_point = nullptr, *from = nullptr, *to = nullptr, *rotation = nullptr;
    llvm::SwitchInst* after = nullptr;
  };
  std::optional<SharedLoop> shared;
  if (one_loop) {
    const bool rotates = std::any_of(kernel.regions.begin(), kernel.regions.end(), [](const Region& region) { return region.rotates; });
    shared.emplace();
    shared->resume_point = builder.CreateAlloca(i32, nullptr, "loop_resume_point");
    shared->from = builder.CreateAlloca(i32, nullptr, "loop_from");
    shared->to = builder.CreateAlloca(i32, nullptr, "loop_to");
    shared->rotation = rotates ? builder.CreateAlloca(i32, nullptr, "loop_rotation") : nullptr;
    llvm::IRBuilderBase::InsertPointGuard keep(builder);
    shared->entry = llvm::BasicBlock::Create(context, "region_threads", block);
    builder.SetInsertPoint(shared->entry);
    Value* resume_point = load_state(shared->resume_point);
    Value* to = load_state(shared->to);
    Value* from = load_state(shared->from);
    Value* rotation = rotates ? load_state(shared->rotation) : nullptr;
    emit_thread_loops(
        builder, {to, extent[1], extent[2]}, &accesses,
        [&](const std::array<Value*, 3>& index) { run_together(index, resume_point, /*recorded=*/true); }, from, rotation);
    auto* nowhere = llvm::BasicBlock::Create(context, "no_region", block);
    shared->after = builder.CreateSwitch(resume_point, nowhere, static_cast<unsigned>(kernel.regions.size()));
    builder.SetInsertPoint(nowhere);
    builder.CreateUnreachable();
  }
  stand_together(zero, thread_count);
  builder.CreateBr(regions[0]);
  for (const Region& region : kernel.regions) {
    builder.SetInsertPoint(regions[region.resume_point]);
    start_round();
    if (region.resume_point != 0) {
      // Every thread of the loop holds the same uniform values; the first one's become the
      // entry copies (see StorageLayout).
      Value* first = builder.CreateZExt(builder.CreateLoad(i32, together_begin_field), wide);
      for (const UniformSlot& slot : kernel.storage.uniform_slots) {
        if (!std::binary_search(slot.read_after.begin(), slot.read_after.end(), region.resume_point)) continue;
        Value* column = builder.CreateMul(columns, builder.getInt64(slot.column));
        Value* held = builder.CreateGEP(builder.getInt8Ty(), storage, builder.CreateAdd(column, builder.CreateMul(first, builder.getInt64(slot.bytes))));
        builder.CreateMemCpy(builder.CreateConstGEP1_64(builder.getInt8Ty(), uniform_area, slot.entry), llvm::Align(1), held, llvm::Align(1), slot.bytes);
      }
    }
    // The range of threads narrows only after some finished; elsewhere a loop from 0 to the
    // block's width leaves the optimiser more to work with (sgemm runs twice as fast).
    Value* from = region.after_partings ? load_state(x_begin) : nullptr;
    Value* to = region.after_partings ? load_state(x_end) : extent[0];
    const bool lanes = by_warps && region.warp_lanes;
    // A warp runs whole; its lanes outside the working range skip the work themselves.
    const uint32_t working_from = lanes ? region.working_from / warp_lanes * warp_lanes : region.working_from;
    const uint32_t working_to =
        lanes && region.working_to != UINT32_MAX ? (region.working_to + warp_lanes - 1) / warp_lanes * warp_lanes : region.working_to;
    if (working_from != 0)
      from = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, from != nullptr ? from : zero, builder.getInt32(working_from));
    if (working_to != UINT32_MAX) to = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, to, builder.getInt32(working_to));
    // Where the threads the loop leaves out stand, for the reading of where all stand after it.
    if (region.exit != RegionExit::single && (region.working_from != 0 || region.working_to != UINT32_MAX))
      emit_thread_loops(builder, {thread_count, builder.getInt32(1), builder.getInt32(1)}, nullptr, [&](const std::array<Value*, 3>& index) {
        builder.CreateStore(builder.getInt32(region.skipped_exit), builder.CreateGEP(i32, states, index[0]));
      });
    std::array<Value*, 3> range{to, extent[1], extent[2]};
    XLoop shape = XLoop::any_width;
    if (lanes)
      shape = XLoop::by_lanes;
    else if (by_warps && to == extent[0] && from == nullptr)
      shape = XLoop::whole_warps;
    Value* start_offset = nullptr;
    if (region.rotates)
      start_offset = rotation(builder, builder.CreateLoad(builder.getPtrTy(), builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, frame_offset)),
                              extent[0]);
    if (shared) {
      store_state(builder.getInt32(region.resume_point), shared->resume_point);
      store_state(from != nullptr ? from : zero, shared->from);
      store_state(to, shared->to);
      if (shared->rotation != nullptr) store_state(start_offset != nullptr ? start_offset : zero, shared->rotation);
      builder.CreateBr(shared->entry);
      auto* after = llvm::BasicBlock::Create(context, "after_region." + std::to_string(region.resume_point), block);
      shared->after->addCase(builder.getInt32(region.resume_point), after);
      builder.SetInsertPoint(after);
    } else {
      auto run_loop = [&](Value* loop_from) {
        emit_thread_loops(
            builder, range, &accesses,
            [&](const std::array<Value*, 3>& index) {
              // A region with one way out needs no record of where each thread went: the rounds,
              // which read the records, start only after a region whose threads may part.
              run_together(index, builder.getInt32(region.resume_point), /*recorded=*/region.exit != RegionExit::single);
            },
            loop_from, start_offset, shape);
      };
      // After a parting the loop starts at the first unfinished thread, known only at run time,
      // which is most often the block's first. LLVM cannot then peel off the thread of a
      // `threadIdx.x == 0` test: a masked gather or scatter stayed in every vector step, and a
      // `tid < stride` step could not see its accesses in range. A copy of the loop from the first
      // thread serves that case. A 1D smoothing kernel behind `if (i >= n) return;` (20 barrier
      // pairs, 1M threads, one host thread) ran in 9.9-10.3 ms instead of 14.1-14.2, as fast as
      // without the return; a float tree reduction behind one, 1.12-1.16 instead of 2.35. The
      // copies cost tests/cuda/guarded_regions.cu's module 5.4% more instructions to compile, the
      // benchmark suite's 3.7%; the other barrier modules of the corpus have no such regions.
      if (region.after_partings && region.compares_thread_index && start_offset == nullptr && !lanes) {
        Value* first = working_from != 0 ? builder.getInt32(working_from) : nullptr;
        auto* from_first = llvm::BasicBlock::Create(context, "threads_from_first", block);
        auto* from_later = llvm::BasicBlock::Create(context, "threads_from_later", block);
        auto* ran = llvm::BasicBlock::Create(context, "threads_ran", block);
        builder.CreateCondBr(builder.CreateICmpEQ(from, first != nullptr ? first : zero), from_first, from_later);
        builder.SetInsertPoint(from_first);
        run_loop(first);
        builder.CreateBr(ran);
        builder.SetInsertPoint(from_later);
        run_loop(from);
        builder.CreateBr(ran);
        builder.SetInsertPoint(ran);
      } else {
        run_loop(from);
      }
    }
    switch (region.exit) {
      case RegionExit::single:
        go_to_region(builder.getInt32(region.next), mixed);
        break;
      case RegionExit::uniform:
        go_to_region(builder.CreateLoad(i32, builder.CreateGEP(i32, states, builder.CreateLoad(i32, together_begin_field))), mixed);
        break;
      case RegionExit::per_thread:
        read_where_threads_stand();
        break;
    }
  }

  builder.SetInsertPoint(mixed);
  if (!rounds) {
    builder.CreateUnreachable();
    round->eraseFromParent();
    builder.SetInsertPoint(done);
    return;
  }
  llvm::Function* apart_code = apart_copy ? copy_for_threads_apart(*kernel.function) : kernel.function;
  Value* apart_thread = apart_copy ? apart_context : thread;
  // Threads may stand at a warp exchange while others wait at a barrier.
  emit_stamps(builder, exchange, thread_count, states, builder.CreateSub(load_state(round_number), builder.getInt32(1)));
  builder.CreateStore(builder.getTrue(), exchanging);
  builder.CreateBr(round);

  builder.SetInsertPoint(round);
  start_round();
  Value* hold_barriers = builder.CreateLoad(builder.getInt1Ty(), exchanging);
  builder.CreateStore(builder.getFalse(), exchanging);
  emit_thread_loops(builder, extent, nullptr, [&](const std::array<Value*, 3>& index) {
    Value* linear = enter_linear(index);
    Value* state_pointer = builder.CreateGEP(i32, states, linear);
    Value* state = builder.CreateLoad(i32, state_pointer);
    Value* at_barrier = builder.CreateAnd(builder.CreateICmpNE(state, zero),
                                          builder.CreateICmpEQ(builder.CreateAnd(state, warp_resume_flag), zero));
    Value* held = builder.CreateAnd(hold_barriers, at_barrier);
    auto* run = llvm::BasicBlock::Create(context, "run_thread", block);
    auto* next = llvm::BasicBlock::Create(context, "next_thread", block);
    auto* not_finished = llvm::BasicBlock::Create(context, "thread_not_finished", block);
    builder.CreateCondBr(builder.CreateICmpEQ(state, finished), next, not_finished);
    builder.SetInsertPoint(not_finished);
    builder.CreateCondBr(held, next, run);
    builder.SetInsertPoint(run);
    if (apart_copy)
      builder.CreateMemCpy(apart_thread, llvm::Align(alignof(ThreadContext)), thread, llvm::Align(alignof(ThreadContext)), sizeof(ThreadContext));
    // Apart, the regions read no entry copies.
    Value* reached = builder.CreateCall(apart_code, {apart_thread, parameters, storage, state, builder.getFalse(),
                                                     llvm::ConstantPointerNull::get(builder.getPtrTy())});
    builder.CreateStore(reached, state_pointer);
    Value* at_exchange = builder.CreateAnd(builder.CreateICmpNE(reached, finished),
                                           builder.CreateICmpNE(builder.CreateAnd(reached, warp_resume_flag), zero));
    builder.CreateStore(builder.CreateOr(builder.CreateLoad(builder.getInt1Ty(), exchanging), at_exchange), exchanging);
    builder.CreateBr(next);
    builder.SetInsertPoint(next);
  });
  note_all_reached();
  choose_next(round);
  builder.SetInsertPoint(done);
}

// The bytes of the parameter buffer that the kernel's loads at constant offsets reach. The
// runtime passes every declared parameter, so they are all there whether or not a thread reads
// them, which lets LLVM hoist the loads out of the thread loop's conditional code.
uint64_t parameter_bytes_read(llvm::Function& kernel) {
  const llvm::DataLayout& layout = kernel.getParent()->getDataLayout();
  uint64_t end = 0;
  std::vector<std::pair<const llvm::Value*, uint64_t>> pending{{kernel.getArg(1), 0}};
  while (!pending.empty()) {
    auto [pointer, offset] = pending.back();
    pending.pop_back();
    for (const llvm::User* user : pointer->users()) {
      llvm::APInt step(64, 0);
      if (const auto* element = llvm::dyn_cast<llvm::GEPOperator>(user); element && element->accumulateConstantOffset(layout, step))
        pending.emplace_back(element, offset + step.getZExtValue());
      else if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(user))
        end = std::max(end, offset + layout.getTypeStoreSize(load->getType()).getFixedValue());
    }
  }
  return end;
}

// A block's width of whole warps, as the product of 32 and at least one: LLVM then sees that
// loops over it run whole vectors (and at least one), which the width itself does not tell it.
Value* whole_warps_width(llvm::IRBuilder<>& builder, Value* width) {
  Value* warps = builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, builder.CreateLShr(width, 5), builder.getInt32(1));
  return builder.CreateShl(warps, 5, "", /*HasNUW=*/true, /*HasNSW=*/true);
}

// Whether `function` itself calls `intrinsic`.
bool calls(const llvm::Function& function, const char* intrinsic) {
  const llvm::Function* callee = function.getParent()->getFunction(intrinsic);
  return callee != nullptr && llvm::any_of(callee->users(), [&](const llvm::User* user) {
    const auto* call = llvm::dyn_cast<llvm::CallBase>(user);
    return call != nullptr && call->getFunction() == &function;
  });
}

// Returns the per-thread stack bytes of a kernel with barriers, 0 otherwise.
uint64_t form_block_function(llvm::Function& kernel, const std::string& kernel_name, uint32_t thread_limit, bool vectorised,
                             bool whole_warp_blocks, DiagnosticSink& diagnostics) {
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
  // The runtime's parameter buffer comes from operator new (16-aligned); the kernels' own
  // 8-byte parameter loads already count on 8.
  if (uint64_t bytes = parameter_bytes_read(kernel)) {
    block->addDereferenceableParamAttr(0, bytes);
    block->addParamAttr(0, llvm::Attribute::getWithAlignment(context, llvm::Align(8)));
  }
  block->addDereferenceableParamAttr(1, sizeof(host_abi::BlockFrame));
  block->addParamAttr(1, llvm::Attribute::getWithAlignment(context, llvm::Align(alignof(host_abi::BlockFrame))));

  std::vector<const llvm::BasicBlock*> kernel_blocks;
  for (const llvm::BasicBlock& kernel_block : kernel) kernel_blocks.push_back(&kernel_block);
  const bool rotates = may_rotate(kernel_blocks);
  const bool exchanges_only = (calls(kernel, intrinsics::warp_exchange) || calls(kernel, intrinsics::warp_exchange_words)) &&
                              !calls(kernel, intrinsics::barrier) && !calls(kernel, intrinsics::barrier_operation);
  // A kernel with warp exchanges is split twice: for warps as vectors, which blocks of whole
  // warps take while its switch is on, and region by region for every block.
  std::optional<ResumableKernel> by_warps = vectorised ? split_for_warp_lanes(kernel, thread_limit) : std::nullopt;
  if (by_warps && by_warps->regions.size() > most_regions_inlined) {
    by_warps->function->eraseFromParent();
    by_warps.reset();
  }
  std::optional<ResumableKernel> resumable = split_at_barriers(kernel, kernel_name, thread_limit, /*first_tier=*/!vectorised, diagnostics);

  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", block));
  auto new_thread_context = [&] {
    llvm::AllocaInst* thread = allocate_thread_context(builder, "thread");
    builder.CreateStore(frame, builder.CreateConstGEP1_64(builder.getInt8Ty(), thread, frame_offset));
    return thread;
  };
  auto block_extent = [&] {
    std::array<Value*, 3> extent{};
    for (uint32_t axis = 0; axis < 3; ++axis)
      extent[axis] = load_block_dimension(builder, frame, axis);
    return extent;
  };
  auto enter_thread = [&](Value* context, const std::array<Value*, 3>& index) {
    for (uint32_t axis = 0; axis < 3; ++axis)
      builder.CreateStore(index[axis], builder.CreateConstGEP1_64(builder.getInt8Ty(), context, thread_index_offset + 4 * axis));
  };
  if (by_warps) {
    Value* warp_thread = new_thread_context();
    std::array<Value*, 3> extent = block_extent();
    auto* warps = llvm::BasicBlock::Create(context, "by_warps", block);
    auto* threads = llvm::BasicBlock::Create(context, "by_threads", block);
    Value* whole_warps = builder.CreateICmpEQ(builder.CreateAnd(extent[0], warp_lanes - 1), builder.getInt32(0));
    builder.CreateCondBr(builder.CreateAnd(whole_warps, load_warp_lanes_switch(builder, name)), warps, threads);
    builder.SetInsertPoint(warps);
    // The same width, which LLVM then knows to be whole warps: a lane is then x modulo 32, and
    // the loops of regions without exchanges leave no threads over. Written as `width & -32`,
    // InstCombine dropped the mask under the branch above, and each such loop kept its epilogue
    // and remainder loops: tests/cuda/whole_warps.cu's rotations kernel compiled in 52 ms of CPU
    // instead of 47 (`perf stat -r 5 xcuda compile --target host -j 1 --whole-warp-blocks --kernel`).
    std::array<Value*, 3> warp_extent{whole_warps_width(builder, extent[0]), extent[1], extent[2]};
    run_region_by_region(builder, *by_warps, warp_extent, warp_thread, parameters, enter_thread, RegionLoops::by_warps, /*inlining_deferred=*/false);
    builder.CreateRetVoid();
    // The other blocks run the region-by-region code, a function of its own (see warp_lanes.h).
    auto* fallback = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name + ".fallback", module);
    fallback->setAttributes(block->getAttributes());
    fallback->addFnAttr(llvm::Attribute::NoInline);
    fallback->addFnAttr(warp_lanes_fallback_attribute);
    block->addFnAttr(warp_path_attribute);
    builder.SetInsertPoint(threads);
    builder.CreateCall(fallback, {parameters, frame});
    builder.CreateRetVoid();
    builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", fallback));
    parameters = fallback->getArg(0);
    frame = fallback->getArg(1);
  }
  Value* thread = new_thread_context();
  std::array<Value*, 3> extent = block_extent();
  // For blocks of whole warps only, where the vectoriser runs, a width LLVM knows to be whole
  // warps leaves no threads over, and the loops for them go; blocks of other widths take the code
  // compiled without whole_warp_blocks. So for kernels without barriers (tests/cli/saxpy.ptx's
  // object 1032 -> 564 bytes, its compile 12.0 -> 10.6 ms of CPU, `perf stat -r 10 xcuda compile
  // --target host -j 1 --whole-warp-blocks`), and for those that meet their warp at exchanges but
  // never at a block barrier and have no warp path (tensor-core kernels: split_for_warp_lanes
  // takes no loops): tests/cuda/mma_numerics.cu's module took 6% fewer instructions to compile
  // (valgrind, 883.6 M -> 830.2 M) and an m16n8k16 and an m16n8k4 mma.sync loop ran as fast (four
  // alternations); of the 46 sm_90 modules of the nvcc corpus only that one's object changed.
  // Kernels with block barriers compiled slower so: knowing the width, LLVM vectorised more of
  // them (the benchmark suite's module: 299-302 ms of CPU instead of 276-279). A warp path's
  // fallback serves the other widths.
  const bool whole_warps_only = whole_warp_blocks && vectorised && !by_warps && (!resumable || exchanges_only);
  if (whole_warps_only) {
    extent[0] = whole_warps_width(builder, extent[0]);
    block->addFnAttr(whole_warps_only_attribute);
  }
  if (!resumable) {
    ThreadLoopAccesses accesses(context);
    llvm::CallInst* call = nullptr;
    emit_thread_loops(builder, extent, &accesses, [&](const std::array<Value*, 3>& index) {
      enter_thread(thread, index);
      call = accesses.tag(builder.CreateCall(&kernel, {thread, parameters}));
    }, nullptr, rotates ? rotation(builder, frame, extent[0]) : nullptr, whole_warps_only ? XLoop::whole_warps : XLoop::any_width);
    // A kernel whose address the module takes (device-side launches) stays, inlined.
    if (kernel.hasOneUse()) move_into_call_site(*call, accesses);
    else kernel.addFnAttr(llvm::Attribute::AlwaysInline);
  } else {
    const bool inlining_deferred = by_warps && whole_warp_blocks;
    run_region_by_region(builder, *resumable, extent, thread, parameters, enter_thread, RegionLoops::by_threads, inlining_deferred);
    // Not inlined yet where the fallback may never run (unused_fallbacks.h), neither the regions
    // nor what they call: LaneExchanges inlines them if it switches the warp path off. The
    // regions alone took tests/cuda/whole_warps.cu's module from 0.182 to 0.170 s of CPU (`xcuda
    // compile --target host -j 1 --whole-warp-blocks`), the same object; what they call, see
    // optimizer.cpp.
    if (inlining_deferred) {
      defer_inlining(*builder.GetInsertBlock()->getParent());  // the fallback
      defer_inlining(*resumable->function);
    }
    // Not inlined, the regions are as rarely run as the fallback that calls them.
    if (by_warps && (whole_warp_blocks || resumable->function->hasFnAttribute(llvm::Attribute::NoInline)))
      resumable->function->addFnAttr(warp_lanes_fallback_attribute);
    kernel.eraseFromParent();
  }
  builder.CreateRetVoid();
  // The block-wide copies of uniform values are counted as if every thread had them: a bound.
  auto stack_bytes = [](const std::optional<ResumableKernel>& split) {
    return split ? split->storage.uniform_bytes + split->storage.bytes_per_thread + exchange_bytes_per_thread(split->exchanged_words) : 0;
  };
  return std::max(stack_bytes(resumable), stack_bytes(by_warps));
}

}  // namespace

std::unordered_map<std::string, uint64_t> form_block_functions(llvm::Module& module, const std::unordered_map<std::string, uint32_t>& thread_limits,
                                                               bool vectorised, bool whole_warp_blocks, DiagnosticSink& diagnostics) {
  std::unordered_map<std::string, uint64_t> stack_bytes;
  llvm::NamedMDNode* kernels = module.getNamedMetadata(intrinsics::kernels_metadata);
  if (kernels == nullptr) return stack_bytes;
  std::vector<std::pair<llvm::Function*, std::string>> entries;
  for (llvm::MDNode* node : kernels->operands())
    entries.emplace_back(llvm::cast<llvm::Function>(llvm::cast<llvm::ValueAsMetadata>(node->getOperand(0))->getValue()),
                         llvm::cast<llvm::MDString>(node->getOperand(1))->getString().str());
  kernels->eraseFromParent();
  for (const auto& [kernel, name] : entries) {
    auto limit = thread_limits.find(name);
    const uint32_t thread_limit = limit != thread_limits.end() ? limit->second : host_abi::max_block_threads;
    if (uint64_t bytes = form_block_function(*kernel, name, thread_limit, vectorised, whole_warp_blocks, diagnostics))
      stack_bytes[name] = bytes;
  }
  // Loops over a block's threads are long and regular; on CPUs with 512-bit vectors, LLVM's
  // default of 256 bits halves their width (sgemm and block_scan ran about 15% faster at 512).
  // Every function alike: LLVM builds its description of the CPU once per set of such
  // attributes, about half a millisecond each.
  for (llvm::Function& function : module) function.addFnAttr("prefer-vector-width", "512");
  return stack_bytes;
}

}  // namespace xcuda::ptx::host
