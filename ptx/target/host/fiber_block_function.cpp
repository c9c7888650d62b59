#include "target/host/fiber_block_function.h"

#include <unordered_map>
#include <unordered_set>

#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>

#include "host_abi.h"
#include "lower/intrinsics.h"
#include "lower/warp_folds.h"
#include "target/host/thread_context.h"

namespace xcuda::ptx::host {
namespace {

using llvm::Function;
using llvm::Value;

// The intrinsics through which threads wait for each other.
struct Synchronization {
  explicit Synchronization(llvm::Module& module)
      : barrier(module.getFunction(intrinsics::barrier)),
        barrier_operation(module.getFunction(intrinsics::barrier_operation)),
        exchange(module.getFunction(intrinsics::warp_exchange)),
        peer(module.getFunction(intrinsics::warp_peer)),
        exchange_words(module.getFunction(intrinsics::warp_exchange_words)),
        peer_word(module.getFunction(intrinsics::warp_peer_word)),
        mbarrier(module.getFunction(intrinsics::mbarrier)) {}

  bool contains(const Function* function) const {
    return function != nullptr && (function == barrier || function == barrier_operation ||
                                   function == exchange || function == peer ||
                                   function == exchange_words || function == peer_word ||
                                   function == mbarrier);
  }

  bool any() const { return barrier || barrier_operation || exchange || exchange_words || mbarrier; }

  // Whether the call makes threads wait in a way only fibers express.
  bool needs_fibers(const llvm::CallBase& call) const {
    const Function* callee = call.getCalledFunction();
    if (callee == nullptr) return false;
    // A thread polling an mbarrier must let the others run before it polls again.
    if (callee == barrier_operation || callee == mbarrier) return true;
    if (callee != exchange) return false;
    const auto* members = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(2));
    return members == nullptr || !members->isAllOnesValue();
  }

  Function* barrier;
  Function* barrier_operation;
  Function* exchange;
  Function* peer;
  Function* exchange_words;
  Function* peer_word;
  Function* mbarrier;
};

template <class Visit>
void for_each_call(Function& function, const Visit& visit) {
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction)) visit(*call);
}

struct CallFacts {
  bool synchronizes = false;  // reaches a synchronisation intrinsic
  bool needs_fibers = false;  // reaches a call that only fibers can run
};

// What each defined function reaches through the functions it calls, recursion included.
std::unordered_map<Function*, CallFacts> reachable_facts(llvm::Module& module,
                                                         const Synchronization& synchronization) {
  std::unordered_map<Function*, CallFacts> facts;
  for (Function& function : module) {
    if (function.isDeclaration()) continue;
    CallFacts& own = facts[&function];
    for_each_call(function, [&](llvm::CallBase& call) {
      own.synchronizes = own.synchronizes || synchronization.contains(call.getCalledFunction());
      own.needs_fibers = own.needs_fibers || synchronization.needs_fibers(call);
    });
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [function, own] : facts) {
      for_each_call(*function, [&](llvm::CallBase& call) {
        auto found = facts.find(call.getCalledFunction());
        if (found == facts.end()) return;
        CallFacts merged{own.synchronizes || found->second.synchronizes,
                         own.needs_fibers || found->second.needs_fibers};
        changed = changed || merged.synchronizes != own.synchronizes ||
                  merged.needs_fibers != own.needs_fibers;
        own = merged;
      });
    }
  }
  return facts;
}

// Registers become SSA values, so that a member mask held in a register but known (mov -1)
// counts as the whole warp.
void promote_registers(Function& function) {
  std::vector<llvm::AllocaInst*> promotable;
  for (llvm::Instruction& instruction : function.getEntryBlock())
    if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction);
        alloca && llvm::isAllocaPromotable(alloca))
      promotable.push_back(alloca);
  llvm::DominatorTree dominators(function);
  llvm::PromoteMemToReg(promotable, dominators);
}

// Replaces the synchronisation intrinsics called in `function` with the fiber runtime's calls.
void call_fiber_runtime(Function& function) {
  llvm::Module& module = *function.getParent();
  // Its folds become peers first, which the runtime answers.
  expand_warp_folds(function);
  Synchronization synchronization(module);
  llvm::IRBuilder<> builder(module.getContext());
  auto* i32 = builder.getInt32Ty();
  auto* i64 = builder.getInt64Ty();
  llvm::FunctionCallee barrier =
      module.getOrInsertFunction(host_abi::fiber_barrier_symbol, i32, i32, i32, i32, i32);
  llvm::FunctionCallee exchange =
      module.getOrInsertFunction(host_abi::fiber_warp_exchange_symbol, i32, i64, i32);
  llvm::FunctionCallee peer =
      module.getOrInsertFunction(host_abi::fiber_warp_peer_symbol, i64, i32);
  llvm::FunctionCallee exchange_words = module.getOrInsertFunction(
      host_abi::fiber_warp_exchange_words_symbol, builder.getVoidTy(), builder.getPtrTy(), i32);
  llvm::FunctionCallee peer_word =
      module.getOrInsertFunction(host_abi::fiber_warp_peer_word_symbol, i64, i32, i32);
  llvm::FunctionCallee mbarrier = module.getOrInsertFunction(
      host_abi::fiber_mbarrier_symbol, i64, i32, builder.getPtrTy(), i64, i32);
  std::vector<llvm::CallBase*> calls;
  for_each_call(function, [&](llvm::CallBase& call) {
    if (synchronization.contains(call.getCalledFunction())) calls.push_back(&call);
  });
  for (llvm::CallBase* call : calls) {
    builder.SetInsertPoint(call);
    const Function* callee = call->getCalledFunction();
    Value* replacement = nullptr;
    if (callee == synchronization.barrier) {
      builder.CreateCall(barrier,
                         {call->getArgOperand(1), builder.getInt32(0),
                          builder.getInt32(static_cast<uint32_t>(host_abi::BarrierOperation::sync)),
                          builder.getInt32(0)});
    } else if (callee == synchronization.barrier_operation) {
      replacement = builder.CreateCall(barrier, {call->getArgOperand(1), call->getArgOperand(2),
                                                 call->getArgOperand(3), call->getArgOperand(4)});
    } else if (callee == synchronization.mbarrier) {
      replacement = builder.CreateCall(mbarrier, {call->getArgOperand(1), call->getArgOperand(2),
                                                  call->getArgOperand(3), call->getArgOperand(4)});
    } else if (callee == synchronization.exchange) {
      replacement = builder.CreateCall(exchange, {call->getArgOperand(1), call->getArgOperand(2)});
    } else if (callee == synchronization.exchange_words) {
      // The words go to the runtime in an array on the thread's stack.
      auto count = static_cast<uint32_t>(call->arg_size() - 1);
      llvm::IRBuilder<> entry(&function.getEntryBlock(), function.getEntryBlock().begin());
      llvm::AllocaInst* words = entry.CreateAlloca(llvm::ArrayType::get(i64, count));
      for (uint32_t word = 0; word < count; ++word)
        builder.CreateStore(call->getArgOperand(word + 1), builder.CreateConstGEP2_32(words->getAllocatedType(), words, 0, word));
      builder.CreateCall(exchange_words, {words, builder.getInt32(count)});
    } else if (callee == synchronization.peer_word) {
      replacement = builder.CreateCall(peer_word, {call->getArgOperand(1), call->getArgOperand(2)});
    } else {
      replacement = builder.CreateCall(peer, {call->getArgOperand(1)});
    }
    if (replacement != nullptr) call->replaceAllUsesWith(replacement);
    call->eraseFromParent();
  }
}

// void <kernel>.fiber_thread(parameters, frame, x, y, z): one thread of the block, from its
// start to its end, on the fiber the runtime gave it.
Function* thread_function(Function& kernel) {
  llvm::Module& module = *kernel.getParent();
  llvm::LLVMContext& context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto* pointer = builder.getPtrTy();
  auto* i32 = builder.getInt32Ty();
  auto* type =
      llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer, i32, i32, i32}, false);
  auto* thread = Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                  kernel.getName() + ".fiber_thread", module);
  thread->addFnAttr(llvm::Attribute::NoUnwind);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", thread));
  llvm::AllocaInst* thread_context = allocate_thread_context(builder, "thread");
  builder.CreateStore(thread->getArg(1), builder.CreateConstGEP1_64(builder.getInt8Ty(),
                                                                    thread_context, frame_offset));
  for (uint32_t axis = 0; axis < 3; ++axis)
    builder.CreateStore(thread->getArg(2 + axis),
                        builder.CreateConstGEP1_64(builder.getInt8Ty(), thread_context,
                                                   thread_index_offset + 4 * axis));
  builder.CreateCall(&kernel, {thread_context, thread->getArg(0)});
  builder.CreateRetVoid();
  return thread;
}

void form_block_function(Function& kernel, const std::string& name) {
  llvm::Module& module = *kernel.getParent();
  llvm::IRBuilder<> builder(module.getContext());
  auto* pointer = builder.getPtrTy();
  auto* type = llvm::FunctionType::get(builder.getVoidTy(), {pointer, pointer}, false);
  auto* block = Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                 host_abi::block_symbol_prefix + name, module);
  block->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::FunctionCallee run = module.getOrInsertFunction(
      host_abi::fiber_run_block_symbol, builder.getVoidTy(), pointer, pointer, pointer);
  builder.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", block));
  builder.CreateCall(run, {block->getArg(0), block->getArg(1), thread_function(kernel)});
  builder.CreateRetVoid();
}

}  // namespace

void form_fiber_block_functions(llvm::Module& module) {
  llvm::NamedMDNode* kernels = module.getNamedMetadata(intrinsics::kernels_metadata);
  if (kernels == nullptr) return;
  Synchronization synchronization(module);
  if (!synchronization.any()) return;
  for (Function& function : module)
    if (!function.isDeclaration()) promote_registers(function);
  auto facts = reachable_facts(module, synchronization);

  std::vector<std::pair<Function*, std::string>> fiber_kernels;
  std::vector<llvm::MDNode*> region_kernels;
  for (llvm::MDNode* node : kernels->operands()) {
    auto* kernel =
        llvm::cast<Function>(llvm::cast<llvm::ValueAsMetadata>(node->getOperand(0))->getValue());
    if (facts[kernel].needs_fibers)
      fiber_kernels.emplace_back(
          kernel, llvm::cast<llvm::MDString>(node->getOperand(1))->getString().str());
    else
      region_kernels.push_back(node);
  }
  // Functions the region kernels reach keep their intrinsics for block formation; fibers get
  // copies of those they reach too. Everything else that synchronises is the fibers' alone.
  std::unordered_set<Function*> region_side;
  std::vector<Function*> pending;
  for (llvm::MDNode* node : region_kernels)
    pending.push_back(
        llvm::cast<Function>(llvm::cast<llvm::ValueAsMetadata>(node->getOperand(0))->getValue()));
  while (!pending.empty()) {
    Function* function = pending.back();
    pending.pop_back();
    if (!region_side.insert(function).second) continue;
    for_each_call(*function, [&](llvm::CallBase& call) {
      if (Function* callee = call.getCalledFunction(); callee && facts[callee].synchronizes)
        pending.push_back(callee);
    });
  }
  std::unordered_map<Function*, Function*> copies;
  std::unordered_set<Function*> fiber_side;
  for (const auto& [kernel, name] : fiber_kernels) pending.push_back(kernel);
  while (!pending.empty()) {
    Function* function = pending.back();
    pending.pop_back();
    if (!fiber_side.insert(function).second) continue;
    for_each_call(*function, [&](llvm::CallBase& call) {
      Function* callee = call.getCalledFunction();
      if (callee == nullptr || !facts[callee].synchronizes) return;
      if (region_side.contains(callee)) {
        Function*& copy = copies[callee];
        if (copy == nullptr) {
          llvm::ValueToValueMapTy mapping;
          copy = llvm::CloneFunction(callee, mapping);
          copy->setLinkage(llvm::GlobalValue::InternalLinkage);
          copy->setName(callee->getName() + ".fiber");
          CallFacts copied = facts[callee];
          facts[copy] = copied;
        }
        call.setCalledFunction(copy);
        callee = copy;
      }
      pending.push_back(callee);
    });
  }
  for (Function& function : module)
    if (!function.isDeclaration() && !region_side.contains(&function) &&
        facts[&function].synchronizes)
      call_fiber_runtime(function);

  for (const auto& [kernel, name] : fiber_kernels) form_block_function(*kernel, name);
  kernels->clearOperands();
  for (llvm::MDNode* node : region_kernels) kernels->addOperand(node);
}

}  // namespace xcuda::ptx::host
