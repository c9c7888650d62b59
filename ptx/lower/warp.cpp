// Warp collectives: shfl, vote, match, redux, activemask and bar.warp.sync. Each becomes one
// exchange among the lanes of the warp (see intrinsics.h) followed by the instruction's rule
// over the offers, so what partial warps, exited lanes and member masks mean is decided here,
// once, and every target gets the same semantics.
#include <algorithm>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "lower/compiler_loops.h"
#include "lower/instruction_lowering.h"
#include "lower/intrinsics.h"
#include "lower/module_lowering.h"
#include "lower/warp_folds.h"
#include "lower/warp_words.h"

namespace xcuda::ptx {
namespace {

using llvm::Value;

constexpr uint32_t warp_size = 32;

}  // namespace

// The lanes that arrived at the exchange together, as a mask; every live lane of `members` is
// among them.
Value* exchange(FunctionLowering& lowering, Value* offer, Value* members) {
  auto& builder = lowering.builder();
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::warp_exchange, builder.getInt32Ty(),
                                                          {builder.getPtrTy(), builder.getInt64Ty(), builder.getInt32Ty()});
  intrinsic->addFnAttr(llvm::Attribute::Convergent);
  return builder.CreateCall(intrinsic, {lowering.thread_context(), builder.CreateZExt(offer, builder.getInt64Ty()), members});
}

Value* peer(FunctionLowering& lowering, Value* lane) {
  auto& builder = lowering.builder();
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::warp_peer, builder.getInt64Ty(),
                                                          {builder.getPtrTy(), builder.getInt32Ty()});
  intrinsic->setOnlyReadsMemory();
  return builder.CreateCall(intrinsic, {lowering.thread_context(), lane});
}

void exchange_words(FunctionLowering& lowering, const std::vector<Value*>& words) {
  auto& builder = lowering.builder();
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {builder.getPtrTy()}, /*isVarArg=*/true);
  auto* intrinsic = llvm::cast<llvm::Function>(lowering.module().target().getOrInsertFunction(intrinsics::warp_exchange_words, type).getCallee());
  intrinsic->addFnAttr(llvm::Attribute::NoUnwind);
  intrinsic->addFnAttr(llvm::Attribute::Convergent);
  std::vector<Value*> arguments{lowering.thread_context()};
  arguments.insert(arguments.end(), words.begin(), words.end());
  builder.CreateCall(intrinsic, arguments);
}

Value* peer_word(FunctionLowering& lowering, Value* lane, uint32_t word) {
  auto& builder = lowering.builder();
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::warp_peer_word, builder.getInt64Ty(),
                                                          {builder.getPtrTy(), builder.getInt32Ty(), builder.getInt32Ty()});
  intrinsic->setOnlyReadsMemory();
  return builder.CreateCall(intrinsic, {lowering.thread_context(), lane, builder.getInt32(word)});
}

Value* lane_id(FunctionLowering& lowering) {
  auto& builder = lowering.builder();
  llvm::Function* intrinsic = lowering.module().intrinsic(intrinsics::special_register("laneid", ""), builder.getInt32Ty(),
                                                          {builder.getPtrTy()});
  return builder.CreateCall(intrinsic, {lowering.thread_context()});
}

namespace {

// The member mask operand; the pre-.sync forms (shfl, vote without .sync) involve every lane.
Value* member_mask(FunctionLowering& lowering, const Instruction& instruction, size_t index) {
  if (index >= instruction.operands.size()) return lowering.builder().getInt32(~0u);
  return lowering.read(instruction.operands[index], ScalarType::b32);
}

// The fold intrinsic over the offers of the lanes in `participants` (see warp_folds.h).
Value* fold(FunctionLowering& lowering, WarpFold kind, Value* participants, Value* value) {
  auto& builder = lowering.builder();
  llvm::Function* intrinsic = lowering.module().intrinsic(warp_fold_name(kind), builder.getInt32Ty(),
                                                          {builder.getPtrTy(), builder.getInt32Ty(), builder.getInt64Ty()});
  intrinsic->setOnlyReadsMemory();
  return builder.CreateCall(intrinsic, {lowering.thread_context(), participants, builder.CreateZExt(value, builder.getInt64Ty())});
}

// shfl[.sync].mode.b32 d[|p], a, b, c[, membermask]: the source lane follows the ISA's
// pseudocode, with c[4:0] the clamp and c[12:8] the segment mask.
void lower_shfl(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  if (operands.size() < 4) {
    lowering.error(instruction.location, "shfl needs d, a, b and c");
    return;
  }
  Value* value = lowering.read(operands[1], ScalarType::b32);
  Value* offset = builder.CreateAnd(lowering.read(operands[2], ScalarType::b32), 31);
  Value* control = lowering.read(operands[3], ScalarType::b32);
  Value* clamp = builder.CreateAnd(control, 31);
  Value* segment = builder.CreateAnd(builder.CreateLShr(control, 8), 31);
  Value* lane = lane_id(lowering);
  Value* outside_segment = builder.CreateXor(segment, 31);
  Value* maximum = builder.CreateOr(builder.CreateAnd(lane, segment), builder.CreateAnd(clamp, outside_segment));
  Value* source = nullptr;
  Value* in_range = nullptr;
  if (has_word(instruction, "up")) {
    source = builder.CreateSub(lane, offset);
    in_range = builder.CreateICmpSGE(source, maximum);
  } else {
    if (has_word(instruction, "down")) source = builder.CreateAdd(lane, offset);
    else if (has_word(instruction, "bfly")) source = builder.CreateXor(lane, offset);
    else if (has_word(instruction, "idx"))
      source = builder.CreateOr(builder.CreateAnd(lane, segment), builder.CreateAnd(offset, outside_segment));
    else {
      lowering.error(instruction.location, "shfl needs a mode: .up, .down, .bfly or .idx");
      return;
    }
    in_range = builder.CreateICmpULE(source, maximum);
  }
  Value* arrived = exchange(lowering, value, member_mask(lowering, instruction, 4));
  // Reading a lane that did not arrive is undefined in the ISA; the lane's own value is the
  // answer that needs no memory of other lanes. The peer is read at the unclamped source (up
  // and down may leave 0..31) and its answer used only in range, so that a target whose lanes
  // sit side by side in memory sees lane + offset.
  Value* source_arrived = builder.CreateTrunc(builder.CreateLShr(arrived, builder.CreateAnd(source, 31)), builder.getInt1Ty());
  Value* offered = builder.CreateTrunc(peer(lowering, source), builder.getInt32Ty());
  Value* result = builder.CreateSelect(builder.CreateAnd(in_range, source_arrived), offered, value);
  const Operand& destination = operands[0];
  if (destination.kind == Operand::Kind::predicate_pair) {
    lowering.write(destination.elements[0], result, ScalarType::b32);
    lowering.write(destination.elements[1], in_range, ScalarType::pred);
  } else {
    lowering.write(destination, result, ScalarType::b32);
  }
}

// vote[.sync].mode d, {!}a[, membermask] over the lanes of membermask that arrived.
void lower_vote(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  Value* predicate = lowering.read(instruction.operands[1], ScalarType::pred);
  Value* members = member_mask(lowering, instruction, 2);
  Value* participants = builder.CreateAnd(exchange(lowering, predicate, members), members);
  Value* voting = fold(lowering, WarpFold::ballot, participants, builder.getInt64(0));
  if (has_word(instruction, "ballot")) {
    lowering.write(instruction.operands[0], voting, ScalarType::b32);
    return;
  }
  Value* all = builder.CreateICmpEQ(voting, participants);
  Value* none = builder.CreateICmpEQ(voting, builder.getInt32(0));
  Value* result = nullptr;
  if (has_word(instruction, "all")) result = all;
  else if (has_word(instruction, "any")) result = builder.CreateNot(none);
  else if (has_word(instruction, "uni")) result = builder.CreateOr(all, none);
  else {
    lowering.error(instruction.location, "vote needs a mode: .all, .any, .uni or .ballot");
    return;
  }
  lowering.write(instruction.operands[0], result, ScalarType::pred);
}

// match.any.sync.type d, a, membermask / match.all.sync.type d[|p], a, membermask.
void lower_match(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  ScalarType type = instruction.qualifiers.types.empty() ? ScalarType::b32 : instruction.qualifiers.types[0];
  if (bit_width(type) != 32 && bit_width(type) != 64) {
    lowering.error(instruction.location, "match needs a .b32 or .b64 type");
    return;
  }
  Value* value = builder.CreateZExt(lowering.read(instruction.operands[1], type), builder.getInt64Ty());
  Value* members = member_mask(lowering, instruction, 2);
  Value* participants = builder.CreateAnd(exchange(lowering, value, members), members);
  Value* equal = fold(lowering, WarpFold::equal, participants, value);
  const Operand& destination = instruction.operands[0];
  if (has_word(instruction, "any")) {
    lowering.write(destination, equal, ScalarType::b32);
    return;
  }
  if (!has_word(instruction, "all")) {
    lowering.error(instruction.location, "match needs a mode: .any or .all");
    return;
  }
  Value* uniform = builder.CreateICmpEQ(equal, participants);
  Value* result = builder.CreateSelect(uniform, members, builder.getInt32(0));
  if (destination.kind == Operand::Kind::predicate_pair) {
    lowering.write(destination.elements[0], result, ScalarType::b32);
    lowering.write(destination.elements[1], uniform, ScalarType::pred);
  } else {
    lowering.write(destination, result, ScalarType::b32);
  }
}

// sm_100's redux.sync.min/.max{.abs}{.NaN}.f32: the signed-integer fold of keys that order as
// the floats do (a negative float's magnitude bits flipped, so -0 < +0), NaN given the key that
// loses, or with .NaN the one that wins; a NaN key left over means the canonical NaN.
void lower_float_redux(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  const bool maximum = qualifiers.operation == Operation::max;
  if (!maximum && qualifiers.operation != Operation::min) {
    lowering.error(instruction.location, "redux.sync over .f32 needs .min or .max");
    return;
  }
  auto* i32 = builder.getInt32Ty();
  Value* bits = lowering.read(instruction.operands[1], ScalarType::b32);
  if (has_word(instruction, "abs")) bits = builder.CreateAnd(bits, 0x7FFFFFFFu);
  Value* nan = builder.CreateICmpUGT(builder.CreateAnd(bits, 0x7FFFFFFFu), builder.getInt32(0x7F800000u));
  // min, max, .NaN.min, .NaN.max: INT_MAX, INT_MIN, INT_MIN, INT_MAX.
  Value* nan_key = builder.getInt32(maximum != has_word(instruction, "NaN") ? 0x80000000u : 0x7FFFFFFFu);
  Value* negative = builder.CreateICmpSLT(bits, builder.getInt32(0));
  Value* key = builder.CreateSelect(nan, nan_key, builder.CreateSelect(negative, builder.CreateXor(bits, 0x7FFFFFFFu), bits));
  Value* members = member_mask(lowering, instruction, 2);
  Value* participants = builder.CreateAnd(exchange(lowering, builder.CreateZExt(key, builder.getInt64Ty()), members), members);
  Value* folded = fold(lowering, maximum ? WarpFold::smax : WarpFold::smin, participants, builder.getInt64(0));
  Value* unkeyed = builder.CreateSelect(builder.CreateICmpSLT(folded, llvm::ConstantInt::get(i32, 0)), builder.CreateXor(folded, 0x7FFFFFFFu), folded);
  lowering.write(instruction.operands[0], builder.CreateSelect(builder.CreateICmpEQ(folded, nan_key), builder.getInt32(0x7FFFFFFFu), unkeyed),
                 ScalarType::b32);
}

// redux.sync.op.type d, a, membermask over 32-bit integers.
void lower_redux(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const Qualifiers& qualifiers = instruction.qualifiers;
  ScalarType type = qualifiers.types.empty() ? ScalarType::b32 : qualifiers.types[0];
  if (type == ScalarType::f32) {
    lower_float_redux(lowering, instruction);
    return;
  }
  if (bit_width(type) != 32 || kind_of(type) == TypeKind::floating) {
    lowering.error(instruction.location, "redux.sync over this type is not supported yet");
    return;
  }
  bool is_signed_type = is_signed(type);
  Value* value = lowering.read(instruction.operands[1], type);
  Value* members = member_mask(lowering, instruction, 2);
  Value* participants = builder.CreateAnd(exchange(lowering, value, members), members);
  WarpFold kind = WarpFold::add;
  switch (qualifiers.operation) {
    case Operation::add: kind = WarpFold::add; break;
    case Operation::and_: kind = WarpFold::and_; break;
    case Operation::or_: kind = WarpFold::or_; break;
    case Operation::xor_: kind = WarpFold::xor_; break;
    case Operation::min: kind = is_signed_type ? WarpFold::smin : WarpFold::umin; break;
    case Operation::max: kind = is_signed_type ? WarpFold::smax : WarpFold::umax; break;
    default:
      lowering.error(instruction.location, "redux.sync needs .add, .min, .max, .and, .or or .xor");
      return;
  }
  Value* result = fold(lowering, kind, participants, builder.getInt64(0));
  lowering.write(instruction.operands[0], result, type);
}

// elect.sync d|p, membermask: the leader is the lowest lane of membermask that is there; d is its
// lane number (or the sink _), p says whether this lane is it.
void lower_elect(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  const auto& operands = instruction.operands;
  if (operands.size() != 2 || operands[0].kind != Operand::Kind::predicate_pair || !has_word(instruction, "sync")) {
    lowering.error(instruction.location, "elect.sync takes d|p, membermask");
    return;
  }
  Value* members = member_mask(lowering, instruction, 1);
  Value* participants = builder.CreateAnd(exchange(lowering, builder.getInt32(0), members), members);
  Value* leader = builder.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, participants, builder.getTrue());
  const Operand& lane_destination = operands[0].elements[0];
  if (lane_destination.kind != Operand::Kind::sink) lowering.write(lane_destination, leader, ScalarType::b32);
  lowering.write(operands[0].elements[1], builder.CreateICmpEQ(lane_id(lowering), leader), ScalarType::pred);
}

// The lanes executing this activemask together are the active ones: those that meet the
// others of the warp there, or whose other lanes have exited.
void lower_activemask(FunctionLowering& lowering, const Instruction& instruction) {
  auto& builder = lowering.builder();
  lowering.write(instruction.operands[0], exchange(lowering, builder.getInt32(0), builder.getInt32(~0u)), ScalarType::b32);
}

}  // namespace

// bar.warp.sync membermask: the lanes meet and exchange nothing; their memory accesses before
// it happen before those after it.
void lower_warp_barrier(FunctionLowering& lowering, const Instruction& instruction) {
  exchange(lowering, lowering.builder().getInt32(0), member_mask(lowering, instruction, 0));
}

namespace {

// One lane's part in a fold: `offer` (i64) is lane's, `value` (i64) the folding lane's own.
Value* fold_step(llvm::IRBuilder<>& builder, WarpFold kind, Value* accumulated, Value* offer, Value* lane, Value* value) {
  Value* operand = builder.CreateTrunc(offer, builder.getInt32Ty());
  auto lane_if = [&](Value* condition) {
    return builder.CreateOr(accumulated, builder.CreateSelect(condition, builder.CreateShl(builder.getInt32(1), lane), builder.getInt32(0)));
  };
  switch (kind) {
    case WarpFold::ballot: return lane_if(builder.CreateICmpNE(offer, builder.getInt64(0)));
    case WarpFold::equal: return lane_if(builder.CreateICmpEQ(offer, value));
    case WarpFold::add: return builder.CreateAdd(accumulated, operand);
    case WarpFold::and_: return builder.CreateAnd(accumulated, operand);
    case WarpFold::or_: return builder.CreateOr(accumulated, operand);
    case WarpFold::xor_: return builder.CreateXor(accumulated, operand);
    case WarpFold::umin: return builder.CreateBinaryIntrinsic(llvm::Intrinsic::umin, accumulated, operand);
    case WarpFold::umax: return builder.CreateBinaryIntrinsic(llvm::Intrinsic::umax, accumulated, operand);
    case WarpFold::smin: return builder.CreateBinaryIntrinsic(llvm::Intrinsic::smin, accumulated, operand);
    case WarpFold::smax: return builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, accumulated, operand);
  }
  return accumulated;
}

}  // namespace

// The loop stays rolled: unrolled, each vote or reduction was 32 reads and steps, most of a
// collective-heavy kernel's code where lanes read each other one by one.
Value* emit_warp_fold(llvm::IRBuilder<>& builder, WarpFold kind, Value* context, Value* participants, Value* value) {
  llvm::BasicBlock* before = builder.GetInsertBlock();
  llvm::Function& function = *before->getParent();
  llvm::Module& module = *function.getParent();
  auto* peer = llvm::cast<llvm::Function>(
      module.getOrInsertFunction(intrinsics::warp_peer, builder.getInt64Ty(), builder.getPtrTy(), builder.getInt32Ty()).getCallee());
  peer->addFnAttr(llvm::Attribute::NoUnwind);
  peer->setOnlyReadsMemory();
  auto* loop = llvm::BasicBlock::Create(module.getContext(), "fold.lane", &function);
  auto* done = llvm::BasicBlock::Create(module.getContext(), "fold.done", &function);
  builder.CreateBr(loop);
  builder.SetInsertPoint(loop);
  llvm::PHINode* lane = builder.CreatePHI(builder.getInt32Ty(), 2, "lane");
  llvm::PHINode* accumulated = builder.CreatePHI(builder.getInt32Ty(), 2, "folded");
  lane->addIncoming(builder.getInt32(0), before);
  accumulated->addIncoming(builder.getInt32(warp_fold_identity(kind)), before);
  Value* offer = builder.CreateCall(peer, {context, lane});
  Value* present = builder.CreateTrunc(builder.CreateLShr(participants, lane), builder.getInt1Ty());
  Value* next = builder.CreateSelect(present, fold_step(builder, kind, accumulated, offer, lane, value), accumulated);
  Value* following = builder.CreateAdd(lane, builder.getInt32(1));
  lane->addIncoming(following, loop);
  accumulated->addIncoming(next, loop);
  keep_rolled(builder.CreateCondBr(builder.CreateICmpULT(following, builder.getInt32(warp_size)), loop, done));
  builder.SetInsertPoint(done);
  return next;
}

void expand_warp_folds(llvm::Function& function) {
  std::vector<llvm::CallInst*> calls;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
          call != nullptr && call->getCalledFunction() != nullptr && warp_fold_of(call->getCalledFunction()->getName()))
        calls.push_back(call);
  for (llvm::CallInst* call : calls) {
    llvm::BasicBlock* before = call->getParent();
    llvm::BasicBlock* after = before->splitBasicBlock(call, "fold.after");
    before->getTerminator()->eraseFromParent();
    llvm::IRBuilder<> builder(before);
    Value* folded = emit_warp_fold(builder, *warp_fold_of(call->getCalledFunction()->getName()), call->getArgOperand(0),
                                   call->getArgOperand(1), call->getArgOperand(2));
    builder.CreateBr(after);
    call->replaceAllUsesWith(folded);
    call->eraseFromParent();
  }
}

namespace {

void expand_word_exchanges(llvm::Function& function) {
  std::vector<llvm::CallInst*> exchanges, peers;
  uint32_t most_words = 0;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction); call != nullptr && call->getCalledFunction() != nullptr) {
        llvm::StringRef name = call->getCalledFunction()->getName();
        if (name == intrinsics::warp_exchange_words) {
          exchanges.push_back(call);
          most_words = std::max(most_words, call->arg_size() - 1);
        } else if (name == intrinsics::warp_peer_word) {
          peers.push_back(call);
        }
      }
  if (exchanges.empty() && peers.empty()) return;
  llvm::Module& module = *function.getParent();
  llvm::IRBuilder<> builder(&function.getEntryBlock(), function.getEntryBlock().begin());
  // One table serves all the function's exchanges of words: a peer_word reads the last.
  llvm::AllocaInst* table = builder.CreateAlloca(llvm::ArrayType::get(builder.getInt64Ty(), std::max(most_words, 1u) * warp_size));
  auto* exchange = llvm::cast<llvm::Function>(
      module.getOrInsertFunction(intrinsics::warp_exchange, builder.getInt32Ty(), builder.getPtrTy(), builder.getInt64Ty(), builder.getInt32Ty())
          .getCallee());
  exchange->addFnAttr(llvm::Attribute::NoUnwind);
  exchange->addFnAttr(llvm::Attribute::Convergent);
  auto* peer = llvm::cast<llvm::Function>(
      module.getOrInsertFunction(intrinsics::warp_peer, builder.getInt64Ty(), builder.getPtrTy(), builder.getInt32Ty()).getCallee());
  peer->addFnAttr(llvm::Attribute::NoUnwind);
  peer->setOnlyReadsMemory();
  auto slot = [&](Value* word, Value* lane) {
    return builder.CreateGEP(table->getAllocatedType(), table,
                             {builder.getInt32(0), builder.CreateAdd(builder.CreateMul(word, builder.getInt32(warp_size)), lane)});
  };
  for (llvm::CallInst* call : exchanges) {
    Value* context = call->getArgOperand(0);
    llvm::BasicBlock* after = call->getParent()->splitBasicBlock(call, "words.after");
    llvm::BasicBlock* before = after->getSinglePredecessor();
    before->getTerminator()->eraseFromParent();
    builder.SetInsertPoint(before);
    for (uint32_t word = 0; word + 1 < call->arg_size(); ++word) {
      builder.CreateCall(exchange, {context, call->getArgOperand(word + 1), builder.getInt32(~0u)});
      counted_loop(builder, builder.getInt32(warp_size), [&](Value* lane) {
        builder.CreateStore(builder.CreateCall(peer, {context, lane}), slot(builder.getInt32(word), lane));
      });
    }
    builder.CreateBr(after);
    call->eraseFromParent();
  }
  for (llvm::CallInst* call : peers) {
    builder.SetInsertPoint(call);
    call->replaceAllUsesWith(builder.CreateLoad(builder.getInt64Ty(), slot(call->getArgOperand(2), call->getArgOperand(1))));
    call->eraseFromParent();
  }
}

}  // namespace

void expand_word_exchanges(llvm::Module& module) {
  llvm::Function* peer_word = module.getFunction(intrinsics::warp_peer_word);
  std::vector<llvm::CallBase*> readers;
  if (peer_word != nullptr)
    for (llvm::User* user : peer_word->users())
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(user))
        for (llvm::User* reader_user : call->getFunction()->users())
          if (auto* reader_call = llvm::dyn_cast<llvm::CallBase>(reader_user); reader_call && reader_call->getCalledFunction() == call->getFunction())
            readers.push_back(reader_call);
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  for (llvm::CallBase* call : readers) {
    llvm::InlineFunctionInfo info;
    llvm::InlineFunction(*call, info);
  }
  for (llvm::Function& function : module) expand_word_exchanges(function);
}

void add_warp_lowerings(LoweringTable& table) {
  table["shfl"] = lower_shfl;
  table["vote"] = lower_vote;
  table["match"] = lower_match;
  table["redux"] = lower_redux;
  table["activemask"] = lower_activemask;
  table["elect"] = lower_elect;
}

}  // namespace xcuda::ptx
