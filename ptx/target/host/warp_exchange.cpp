#include "target/host/warp_exchange.h"

#include <llvm/Transforms/Utils/BasicBlockUtils.h>

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

// The slot `thread` (linear index in the block) writes in rounds of `round`'s parity.
Value* slot(llvm::IRBuilder<>& builder, Value* context, Value* thread, Value* round) {
  Value* area = context_field(builder, context, exchange_offset, builder.getPtrTy());
  Value* index = builder.CreateOr(builder.CreateShl(builder.CreateZExt(thread, builder.getInt64Ty()), 1),
                                  builder.CreateZExt(builder.CreateAnd(round, 1), builder.getInt64Ty()));
  return builder.CreateGEP(builder.getInt8Ty(), area, builder.CreateMul(index, builder.getInt64(sizeof(ExchangeSlot))));
}

Value* field(llvm::IRBuilder<>& builder, Value* slot_pointer, uint64_t offset) {
  return builder.CreateConstGEP1_64(builder.getInt8Ty(), slot_pointer, offset);
}

Value* own_index(llvm::IRBuilder<>& builder, Value* context) {
  return context_field(builder, context, linear_index_offset, builder.getInt32Ty());
}

Value* first_of_warp(llvm::IRBuilder<>& builder, Value* context) {
  return builder.CreateAnd(own_index(builder, context), ~(warp_size - 1));
}

}  // namespace

uint64_t exchange_bytes_per_thread() { return 2 * sizeof(ExchangeSlot) + (sizeof(ArrivalCache) + warp_size - 1) / warp_size; }

Value* exchange_area_bytes(llvm::IRBuilder<>& builder, Value* threads) {
  Value* warps = builder.CreateLShr(builder.CreateAdd(threads, builder.getInt64(warp_size - 1)), 5);
  return builder.CreateMul(warps, builder.getInt64(warp_size * 2 * sizeof(ExchangeSlot) + sizeof(ArrivalCache)));
}

void emit_offer(llvm::IRBuilder<>& builder, Value* context, Value* offer, uint32_t site) {
  Value* round = current_round(builder, context);
  Value* pointer = slot(builder, context, own_index(builder, context), round);
  builder.CreateStore(offer, field(builder, pointer, offsetof(ExchangeSlot, offer)));
  builder.CreateStore(round, field(builder, pointer, offsetof(ExchangeSlot, round)));
  builder.CreateStore(builder.getInt32(site), field(builder, pointer, offsetof(ExchangeSlot, site)));
}

Value* emit_arrived_lanes(llvm::IRBuilder<>& builder, Value* context, uint32_t site) {
  Value* round = last_round(builder, context);
  Value* first = first_of_warp(builder, context);
  Value* threads = context_field(builder, context, thread_count_offset, builder.getInt32Ty());
  Value* whole_warps = builder.CreateAnd(builder.CreateAdd(threads, builder.getInt32(warp_size - 1)), ~(warp_size - 1));
  Value* caches = builder.CreateGEP(builder.getInt8Ty(), context_field(builder, context, exchange_offset, builder.getPtrTy()),
                                    builder.CreateMul(builder.CreateZExt(whole_warps, builder.getInt64Ty()), builder.getInt64(2 * sizeof(ExchangeSlot))));
  Value* cache = builder.CreateGEP(builder.getInt8Ty(), caches,
                                   builder.CreateMul(builder.CreateZExt(builder.CreateLShr(first, 5), builder.getInt64Ty()),
                                                     builder.getInt64(sizeof(ArrivalCache))));
  auto cache_field = [&](uint64_t offset) { return field(builder, cache, offset); };
  Value* kept = builder.CreateAnd(
      builder.CreateICmpEQ(builder.CreateLoad(builder.getInt32Ty(), cache_field(offsetof(ArrivalCache, round))), round),
      builder.CreateICmpEQ(builder.CreateLoad(builder.getInt32Ty(), cache_field(offsetof(ArrivalCache, site))), builder.getInt32(site)));
  Value* kept_lanes = builder.CreateLoad(builder.getInt32Ty(), cache_field(offsetof(ArrivalCache, lanes)));
  llvm::BasicBlock* asking = builder.GetInsertBlock();
  llvm::Instruction* after = llvm::SplitBlockAndInsertIfThen(builder.CreateNot(kept), builder.GetInsertPoint(), false);
  llvm::BasicBlock* look = after->getParent();
  builder.SetInsertPoint(after);
  Value* lanes = builder.getInt32(0);
  for (uint32_t lane = 0; lane < warp_size; ++lane) {
    Value* pointer = slot(builder, context, builder.CreateAdd(first, builder.getInt32(lane)), round);
    Value* written = builder.CreateLoad(builder.getInt32Ty(), field(builder, pointer, offsetof(ExchangeSlot, round)));
    Value* written_site = builder.CreateLoad(builder.getInt32Ty(), field(builder, pointer, offsetof(ExchangeSlot, site)));
    Value* arrived = builder.CreateAnd(builder.CreateICmpEQ(written, round), builder.CreateICmpEQ(written_site, builder.getInt32(site)));
    lanes = builder.CreateOr(lanes, builder.CreateSelect(arrived, builder.getInt32(1u << lane), builder.getInt32(0)));
  }
  builder.CreateStore(round, cache_field(offsetof(ArrivalCache, round)));
  builder.CreateStore(builder.getInt32(site), cache_field(offsetof(ArrivalCache, site)));
  builder.CreateStore(lanes, cache_field(offsetof(ArrivalCache, lanes)));
  llvm::BasicBlock* joined = look->getSingleSuccessor();
  builder.SetInsertPoint(joined, joined->getFirstInsertionPt());
  llvm::PHINode* result = builder.CreatePHI(builder.getInt32Ty(), 2);
  result->addIncoming(kept_lanes, asking);
  result->addIncoming(lanes, look);
  return result;
}

void define_warp_peer(llvm::Function& function) {
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(function.getContext(), "entry", &function));
  Value* context = function.getArg(0);
  Value* lane = builder.CreateAnd(function.getArg(1), warp_size - 1);
  Value* pointer = slot(builder, context, builder.CreateAdd(first_of_warp(builder, context), lane), last_round(builder, context));
  builder.CreateRet(builder.CreateLoad(builder.getInt64Ty(), field(builder, pointer, offsetof(ExchangeSlot, offer))));
}

}  // namespace xcuda::ptx::host
