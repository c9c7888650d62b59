#include "target/host/warp_exchange.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "lower/compiler_loops.h"
#include "target/host/barrier_regions.h"
#include "target/host/thread_context.h"

namespace xcuda::ptx::host {
namespace {

using llvm::Value;

constexpr uint32_t warp_size = 32;

Value* context_field(llvm::IRBuilder<>& builder, Value* context, uint64_t offset, llvm::Type* type) {
  return builder.CreateLoad(type, builder.CreateConstGEP1_64(builder.getInt8Ty(), context, offset));
}

Value* current_round(llvm::IRBuilder<>& builder, Value* context) {
  return context_field(builder, context, round_offset, builder.getInt32Ty());
}

Value* last_round(llvm::IRBuilder<>& builder, Value* context) {
  return builder.CreateSub(current_round(builder, context), builder.getInt32(1));
}

Value* own_index(llvm::IRBuilder<>& builder, Value* context) {
  return context_field(builder, context, linear_index_offset, builder.getInt32Ty());
}

Value* first_of_warp(llvm::IRBuilder<>& builder, Value* context) {
  return builder.CreateAnd(own_index(builder, context), ~(warp_size - 1));
}

// Where the arrays of the exchange area lie (see ThreadContext::exchange).
struct ExchangeArea {
  Value* base;
  Value* whole_warp_threads;  // i64
  Value* offer_span;          // i64: one half-word array of offers with a warp of padding before and after

  ExchangeArea(llvm::IRBuilder<>& builder, Value* base, Value* threads)
      : base(base),
        whole_warp_threads(builder.CreateZExt(builder.CreateAnd(builder.CreateAdd(threads, builder.getInt32(warp_size - 1)), ~(warp_size - 1)),
                                              builder.getInt64Ty())),
        offer_span(builder.CreateAdd(whole_warp_threads, builder.getInt64(2 * warp_size))) {}
  ExchangeArea(llvm::IRBuilder<>& builder, Value* context)
      : ExchangeArea(builder, context_field(builder, context, exchange_offset, builder.getPtrTy()),
                     context_field(builder, context, thread_count_offset, builder.getInt32Ty())) {}

  // An array's first element, frozen: its address is a sum over the block's shape and the
  // round's parity, which LLVM's scalar evolution would otherwise carry into the address of every
  // offer and stamp in a loop over threads; loop strength reduction then spent a quarter of the
  // code generation of tests/cuda/whole_warps.cu weighing ways to recompute those sums (1.2 s;
  // 0.7 s frozen). Frozen, an address is an unknown base plus the thread's index: still
  // consecutive across threads.
  static Value* array_start(llvm::IRBuilder<>& builder, llvm::Type* element, Value* base, Value* index) {
    return builder.CreateFreeze(builder.CreateGEP(element, base, index));
  }
  static Value* parity(llvm::IRBuilder<>& builder, Value* round) { return builder.CreateZExt(builder.CreateAnd(round, 1), builder.getInt64Ty()); }
  // The low (`high` false) or high 32 bits of the offer of i32 `thread`, which may lie up to a
  // warp before the first thread or after the last, where the padding is. The halves lie in
  // arrays of their own, so that a 32-bit exchange's loops move 32-bit vectors.
  Value* offer(llvm::IRBuilder<>& builder, Value* thread, Value* round, bool high) const {
    Value* array = builder.CreateAdd(builder.CreateShl(parity(builder, round), 1), builder.getInt64(high ? 1 : 0));
    Value* first = array_start(builder, builder.getInt32Ty(), base, builder.CreateAdd(builder.CreateMul(array, offer_span), builder.getInt64(warp_size)));
    return builder.CreateGEP(builder.getInt32Ty(), first, builder.CreateSExt(thread, builder.getInt64Ty()));
  }
  Value* stamps(llvm::IRBuilder<>& builder) const {
    return builder.CreateGEP(builder.getInt32Ty(), base, builder.CreateMul(offer_span, builder.getInt64(4)));
  }
  Value* stamp(llvm::IRBuilder<>& builder, Value* thread, Value* round) const {
    Value* first = array_start(builder, builder.getInt64Ty(), stamps(builder), builder.CreateMul(parity(builder, round), whole_warp_threads));
    return builder.CreateGEP(builder.getInt64Ty(), first, builder.CreateZExt(thread, builder.getInt64Ty()));
  }
  Value* arrival_caches(llvm::IRBuilder<>& builder) const {
    return builder.CreateGEP(builder.getInt64Ty(), stamps(builder), builder.CreateMul(whole_warp_threads, builder.getInt64(2)));
  }
  Value* arrival_cache(llvm::IRBuilder<>& builder, Value* warp) const {
    return builder.CreateGEP(builder.getInt8Ty(), arrival_caches(builder),
                             builder.CreateMul(builder.CreateZExt(warp, builder.getInt64Ty()), builder.getInt64(sizeof(ArrivalCache))));
  }
  // Word `word` (i32) of the offer of i32 `thread` at an exchange of words: after the arrival
  // caches, an array of the threads' words per word and round parity.
  Value* word(llvm::IRBuilder<>& builder, Value* thread, Value* round, Value* word) const {
    Value* words = builder.CreateGEP(builder.getInt8Ty(), arrival_caches(builder),
                                     builder.CreateMul(builder.CreateLShr(whole_warp_threads, 5), builder.getInt64(sizeof(ArrivalCache))));
    Value* array = builder.CreateAdd(builder.CreateShl(builder.CreateZExt(word, builder.getInt64Ty()), 1), parity(builder, round));
    Value* first = array_start(builder, builder.getInt64Ty(), words, builder.CreateMul(array, whole_warp_threads));
    return builder.CreateGEP(builder.getInt64Ty(), first, builder.CreateZExt(thread, builder.getInt64Ty()));
  }
};

Value* field(llvm::IRBuilder<>& builder, Value* pointer, uint64_t offset) { return builder.CreateConstGEP1_64(builder.getInt8Ty(), pointer, offset); }

Value* stamp_of(llvm::IRBuilder<>& builder, Value* round, Value* site) {
  return builder.CreateOr(builder.CreateShl(builder.CreateZExt(round, builder.getInt64Ty()), 32), builder.CreateZExt(site, builder.getInt64Ty()));
}

// The i32 mask of the lanes of a warp for which i1 `arrived(i32 lane)` holds, in a loop over the
// lanes: unrolled, it was 200 instructions per exchange site, a third of the code of a kernel of
// 50 shuffles.
// Adds control flow: the builder ends up in a new block, with what followed its place.
template <class Arrived>
Value* lane_mask(llvm::IRBuilder<>& builder, const Arrived& arrived) {
  llvm::BasicBlock* before = builder.GetInsertBlock();
  llvm::BasicBlock* done = llvm::SplitBlock(before, &*builder.GetInsertPoint());
  auto* loop = llvm::BasicBlock::Create(before->getContext(), "lanes", before->getParent(), done);
  before->getTerminator()->eraseFromParent();
  builder.SetInsertPoint(before);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode* lane = builder.CreatePHI(builder.getInt32Ty(), 2);
  llvm::PHINode* lanes = builder.CreatePHI(builder.getInt32Ty(), 2);
  lane->addIncoming(builder.getInt32(0), before);
  lanes->addIncoming(builder.getInt32(0), before);
  Value* bit = builder.CreateShl(builder.CreateZExt(arrived(lane), builder.getInt32Ty()), lane);
  Value* next_lanes = builder.CreateOr(lanes, bit);
  Value* next = builder.CreateAdd(lane, builder.getInt32(1));
  lane->addIncoming(next, builder.GetInsertBlock());
  lanes->addIncoming(next_lanes, builder.GetInsertBlock());
  keep_rolled(builder.CreateCondBr(builder.CreateICmpULT(next, builder.getInt32(warp_size)), loop, done));
  builder.SetInsertPoint(done, done->getFirstInsertionPt());
  return next_lanes;
}

// The function of the module named `name` of type `type`, defined on first use by `define`, which
// writes its body before the terminator of its only block, the builder placed there, and returns
// what the function returns (nullptr for void).
template <class Define>
llvm::Function* out_of_line(llvm::Module& module, const char* name, llvm::FunctionType* type, const Define& define) {
  if (llvm::Function* function = module.getFunction(name)) return function;
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  function->addFnAttr(llvm::Attribute::NoInline);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  auto* entry = llvm::BasicBlock::Create(module.getContext(), "entry", function);
  auto* placeholder = new llvm::UnreachableInst(module.getContext(), entry);
  llvm::IRBuilder<> builder(placeholder);
  Value* result = define(builder, function);
  if (result) builder.CreateRet(result);
  else builder.CreateRetVoid();
  placeholder->eraseFromParent();
  return function;
}

}  // namespace

// Two offers and two stamps per thread, a share of its warp's arrival cache, and of the
// padding around the offers (counted as if the block had at least a warp), and the words of two
// rounds.
uint64_t exchange_bytes_per_thread(uint32_t words) {
  return 4 * sizeof(uint64_t) + (sizeof(ArrivalCache) + warp_size - 1) / warp_size + 4 * sizeof(uint64_t) + 2 * sizeof(uint64_t) * words;
}

Value* exchange_area_bytes(llvm::IRBuilder<>& builder, Value* threads, uint32_t words) {
  Value* warps = builder.CreateLShr(builder.CreateAdd(threads, builder.getInt64(warp_size - 1)), 5);
  uint64_t per_warp = warp_size * (4 + 2 * words) * sizeof(uint64_t) + sizeof(ArrivalCache);
  return builder.CreateAdd(builder.CreateMul(warps, builder.getInt64(per_warp)), builder.getInt64(4 * warp_size * sizeof(uint64_t)));
}

void emit_offer_words(llvm::IRBuilder<>& builder, Value* context, llvm::ArrayRef<Value*> words) {
  ExchangeArea area(builder, context);
  Value* round = current_round(builder, context);
  Value* thread = own_index(builder, context);
  for (uint32_t word = 0; word < words.size(); ++word)
    builder.CreateStore(words[word], area.word(builder, thread, round, builder.getInt32(word)));
}

void emit_offer(llvm::IRBuilder<>& builder, Value* context, Value* offer, Value* site, Value* together) {
  ExchangeArea area(builder, context);
  Value* round = current_round(builder, context);
  Value* thread = own_index(builder, context);
  builder.CreateStore(builder.CreateTrunc(offer, builder.getInt32Ty()), area.offer(builder, thread, round, false));
  builder.CreateStore(builder.CreateTrunc(builder.CreateLShr(offer, 32), builder.getInt32Ty()), area.offer(builder, thread, round, true));
  // A block that stands together learns its arrivals without stamps (see emit_arrived_lanes);
  // should it fall apart after this round, the block function stamps the offers (emit_stamps).
  llvm::Instruction* stamping = llvm::SplitBlockAndInsertIfThen(builder.CreateNot(together), builder.GetInsertPoint(), false);
  builder.SetInsertPoint(stamping);
  builder.CreateStore(stamp_of(builder, round, site), area.stamp(builder, thread, round));
  builder.SetInsertPoint(stamping->getParent()->getSingleSuccessor()->getFirstNonPHI());
}

Value* emit_arrived_lanes(llvm::IRBuilder<>& builder, Value* context, Value* site, Value* together) {
  ExchangeArea area(builder, context);
  Value* round = last_round(builder, context);
  Value* first = first_of_warp(builder, context);
  Value* cache = area.arrival_cache(builder, builder.CreateLShr(first, 5));
  auto cache_field = [&](uint64_t offset) { return field(builder, cache, offset); };
  Value* kept = builder.CreateOr(
      together,
      builder.CreateAnd(builder.CreateICmpEQ(builder.CreateLoad(builder.getInt32Ty(), cache_field(offsetof(ArrivalCache, round))), round),
                        builder.CreateICmpEQ(builder.CreateLoad(builder.getInt32Ty(), cache_field(offsetof(ArrivalCache, site))), site)));
  // Standing together, every unfinished lane of the warp offered: those in the together range.
  // The asking lane is among them, so the range starts below the warp's end. A range of whole
  // warps, the usual case, takes a branch of its own, on a value that is the same for all the
  // threads of a loop, which LLVM can then run as a loop of its own without the arithmetic.
  Value* begin = context_field(builder, context, together_begin_offset, builder.getInt32Ty());
  Value* end = context_field(builder, context, together_end_offset, builder.getInt32Ty());
  Value* whole_warps = builder.CreateICmpEQ(builder.CreateAnd(builder.CreateOr(begin, end), warp_size - 1), builder.getInt32(0));
  llvm::Instruction* whole_branch = nullptr;
  llvm::Instruction* part_branch = nullptr;
  llvm::SplitBlockAndInsertIfThenElse(whole_warps, builder.GetInsertPoint(), &whole_branch, &part_branch);
  builder.SetInsertPoint(part_branch);
  auto below = [&](Value* lane) {  // lanes [0, lane) for lane <= 32
    return builder.CreateSelect(builder.CreateICmpUGE(lane, builder.getInt32(warp_size)), builder.getInt32(~0u),
                                builder.CreateSub(builder.CreateShl(builder.getInt32(1), lane), builder.getInt32(1)));
  };
  auto range_lane = [&](Value* bound) { return builder.CreateSub(builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, bound, first), first); };
  Value* part_lanes = builder.CreateAnd(below(range_lane(end)), builder.CreateNot(below(range_lane(begin))));
  llvm::BasicBlock* ranges_joined = whole_branch->getSuccessor(0);
  builder.SetInsertPoint(ranges_joined, ranges_joined->getFirstInsertionPt());
  llvm::PHINode* together_lanes = builder.CreatePHI(builder.getInt32Ty(), 2);
  together_lanes->addIncoming(builder.getInt32(~0u), whole_branch->getParent());
  together_lanes->addIncoming(part_lanes, part_branch->getParent());
  Value* kept_lanes =
      builder.CreateSelect(together, together_lanes, builder.CreateLoad(builder.getInt32Ty(), cache_field(offsetof(ArrivalCache, lanes))));
  llvm::BasicBlock* asking = builder.GetInsertBlock();
  llvm::Instruction* after = llvm::SplitBlockAndInsertIfThen(builder.CreateNot(kept), builder.GetInsertPoint(), false);
  builder.SetInsertPoint(after);
  Value* expected = stamp_of(builder, round, site);
  Value* lanes = lane_mask(builder, [&](Value* lane) {
    Value* stamp = area.stamp(builder, builder.CreateAdd(first, lane), round);
    return builder.CreateICmpEQ(builder.CreateLoad(builder.getInt64Ty(), stamp), expected);
  });
  builder.CreateStore(round, cache_field(offsetof(ArrivalCache, round)));
  builder.CreateStore(site, cache_field(offsetof(ArrivalCache, site)));
  builder.CreateStore(lanes, cache_field(offsetof(ArrivalCache, lanes)));
  llvm::BasicBlock* look = after->getParent();
  llvm::BasicBlock* joined = look->getSingleSuccessor();
  builder.SetInsertPoint(joined, joined->getFirstInsertionPt());
  llvm::PHINode* result = builder.CreatePHI(builder.getInt32Ty(), 2);
  result->addIncoming(kept_lanes, asking);
  result->addIncoming(lanes, look);
  return result;
}

void call_offer(llvm::IRBuilder<>& builder, Value* context, Value* offer, Value* site, Value* together) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {builder.getPtrTy(), builder.getInt64Ty(), builder.getInt32Ty(), builder.getInt1Ty()}, false);
  llvm::Function* function = out_of_line(module, "xcuda.warp.offer", type, [](llvm::IRBuilder<>& body, llvm::Function* defined) {
    emit_offer(body, defined->getArg(0), defined->getArg(1), defined->getArg(2), defined->getArg(3));
    return nullptr;
  });
  builder.CreateCall(function, {context, offer, site, together});
}

Value* call_arrived_lanes(llvm::IRBuilder<>& builder, Value* context, Value* site, Value* together) {
  llvm::Module& module = *builder.GetInsertBlock()->getModule();
  auto* type = llvm::FunctionType::get(builder.getInt32Ty(), {builder.getPtrTy(), builder.getInt32Ty(), builder.getInt1Ty()}, false);
  llvm::Function* function = out_of_line(module, "xcuda.warp.arrived_lanes", type, [](llvm::IRBuilder<>& body, llvm::Function* defined) {
    return emit_arrived_lanes(body, defined->getArg(0), defined->getArg(1), defined->getArg(2));
  });
  return builder.CreateCall(function, {context, site, together});
}

void emit_stamps(llvm::IRBuilder<>& builder, Value* area_base, Value* threads, Value* states, Value* round) {
  llvm::Type* i32 = builder.getInt32Ty();
  ExchangeArea area(builder, area_base, threads);
  // Stamps and arrival caches of both parities, with what earlier rounds or blocks left there.
  Value* stamps = area.stamps(builder);
  Value* stamp_and_cache_bytes = builder.CreateAdd(builder.CreateMul(area.whole_warp_threads, builder.getInt64(2 * sizeof(uint64_t))),
                                                   builder.CreateMul(builder.CreateLShr(area.whole_warp_threads, 5), builder.getInt64(sizeof(ArrivalCache))));
  builder.CreateMemSet(stamps, builder.getInt8(0), stamp_and_cache_bytes, llvm::Align(8));
  llvm::Function* function = builder.GetInsertBlock()->getParent();
  llvm::LLVMContext& context = function->getContext();
  llvm::BasicBlock* before = builder.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(context, "stamps", function);
  auto* body = llvm::BasicBlock::Create(context, "stamps.thread", function);
  auto* done = llvm::BasicBlock::Create(context, "stamps.done", function);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode* thread = builder.CreatePHI(i32, 2, "thread");
  thread->addIncoming(builder.getInt32(0), before);
  builder.CreateCondBr(builder.CreateICmpULT(thread, threads), body, done);
  builder.SetInsertPoint(body);
  Value* state = builder.CreateLoad(i32, builder.CreateGEP(i32, states, builder.CreateZExt(thread, builder.getInt64Ty())));
  Value* at_exchange = builder.CreateAnd(builder.CreateICmpNE(state, builder.getInt32(thread_finished)),
                                         builder.CreateICmpNE(builder.CreateAnd(state, warp_resume_flag), builder.getInt32(0)));
  Value* stamp = stamp_of(builder, round, builder.CreateAnd(state, ~warp_resume_flag));
  builder.CreateStore(builder.CreateSelect(at_exchange, stamp, builder.getInt64(0)), area.stamp(builder, thread, round));
  thread->addIncoming(builder.CreateAdd(thread, builder.getInt32(1)), body);
  builder.CreateBr(loop);
  builder.SetInsertPoint(done);
}

void define_warp_peer(llvm::Function& function) {
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(function.getContext(), "entry", &function));
  Value* context = function.getArg(0);
  ExchangeArea area(builder, context);
  // Not wrapped into the warp: the lowering reads a lane outside it only to throw the answer
  // away, and an unwrapped lane + offset leaves the offers of shfl.up/down at consecutive
  // addresses across threads, which a loop over them loads as vectors.
  // Written as the own index plus the distance to the lane, which folds to a constant for
  // shfl.up/down once inlined (lane - own lane = offset).
  Value* own = own_index(builder, context);
  Value* thread = builder.CreateAdd(own, builder.CreateSub(function.getArg(1), builder.CreateAnd(own, warp_size - 1)));
  Value* round = last_round(builder, context);
  auto half = [&](bool high) { return builder.CreateZExt(builder.CreateLoad(builder.getInt32Ty(), area.offer(builder, thread, round, high)), builder.getInt64Ty()); };
  builder.CreateRet(builder.CreateOr(half(false), builder.CreateShl(half(true), 32)));
}

void define_warp_peer_word(llvm::Function& function) {
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(function.getContext(), "entry", &function));
  Value* context = function.getArg(0);
  ExchangeArea area(builder, context);
  Value* thread = builder.CreateAdd(first_of_warp(builder, context), function.getArg(1));
  builder.CreateRet(builder.CreateLoad(builder.getInt64Ty(), area.word(builder, thread, last_round(builder, context), function.getArg(2))));
}

}  // namespace xcuda::ptx::host
