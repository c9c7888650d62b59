#include "target/host/barrier_regions.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>

#include "host_abi.h"
#include "lower/intrinsics.h"
#include "target/host/slot_sharing.h"
#include "target/host/thread_context.h"
#include "target/host/thread_order.h"
#include "target/host/thread_uniformity.h"
#include "target/host/warp_exchange.h"
#include "target/host/warp_lanes.h"

namespace xcuda::ptx::host {
namespace {

// The intrinsics where a kernel is cut: block barriers and warp exchanges, of one word or several.
struct CutPoints {
  const llvm::Function* barrier;
  const llvm::Function* exchange;
  const llvm::Function* exchange_words = nullptr;
  bool contains(const llvm::Function* function) const {
    return function != nullptr && (function == barrier || function == exchange || function == exchange_words);
  }
};

// Whether `function` can reach a cut point, directly or through the functions it calls.
class BarrierReach {
 public:
  explicit BarrierReach(CutPoints cuts) : cuts_(cuts) {}

  bool reaches(const llvm::Function& function) {
    if (auto found = known_.find(&function); found != known_.end()) return found->second;
    known_[&function] = false;  // a cycle adds nothing new
    bool result = false;
    for (const llvm::BasicBlock& block : function)
      for (const llvm::Instruction& instruction : block)
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction))
          if (const llvm::Function* callee = call->getCalledFunction())
            result = result || cuts_.contains(callee) || (!callee->isDeclaration() && reaches(*callee));
    known_[&function] = result;
    return result;
  }

 private:
  CutPoints cuts_;
  std::unordered_map<const llvm::Function*, bool> known_;
};

// Inlines every call that can reach a barrier, so the kernel holds all its barriers itself.
bool inline_barrier_paths(llvm::Function& kernel, BarrierReach& reach) {
  // Each round inlines one level; a barrier behind recursion never runs out of levels.
  for (int round = 0; round < 64; ++round) {
    std::vector<llvm::CallBase*> calls;
    for (llvm::BasicBlock& block : kernel)
      for (llvm::Instruction& instruction : block)
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction))
          if (llvm::Function* callee = call->getCalledFunction(); callee && !callee->isDeclaration() && reach.reaches(*callee))
            calls.push_back(call);
    if (calls.empty()) return true;
    for (llvm::CallBase* call : calls) {
      llvm::InlineFunctionInfo info;
      if (!llvm::InlineFunction(*call, info).isSuccess()) return false;
    }
  }
  return false;
}

void promote_registers(llvm::Function& function) {
  std::vector<llvm::AllocaInst*> promotable;
  for (llvm::Instruction& instruction : function.getEntryBlock())
    if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction); alloca && llvm::isAllocaPromotable(alloca))
      promotable.push_back(alloca);
  llvm::DominatorTree dominators(function);
  llvm::PromoteMemToReg(promotable, dominators);
}

// Moves the kernel's body into a function of the resumable signature.
llvm::Function* make_resumable(llvm::Function& kernel) {
  llvm::LLVMContext& context = kernel.getContext();
  auto* pointer = llvm::PointerType::get(context, 0);
  auto* i32 = llvm::Type::getInt32Ty(context);
  auto* type = llvm::FunctionType::get(i32, {pointer, pointer, pointer, i32, llvm::Type::getInt1Ty(context), pointer}, false);
  auto* resumable = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, kernel.getName() + ".resumable", kernel.getParent());
  resumable->copyAttributesFrom(&kernel);
  resumable->splice(resumable->begin(), &kernel);
  kernel.getArg(0)->replaceAllUsesWith(resumable->getArg(0));
  kernel.getArg(1)->replaceAllUsesWith(resumable->getArg(1));
  for (llvm::BasicBlock& block : *resumable) {
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator())) {
      llvm::ReturnInst::Create(context, llvm::ConstantInt::get(i32, thread_finished), ret->getIterator());
      ret->eraseFromParent();
    }
  }
  return resumable;
}

// Ends a region at each cut point; returns the blocks where the regions resume, with their
// numbers. A warp exchange offers its value before the cut and learns who arrived after it; an
// exchange of words offers its words, the most of which `exchanged_words` ends up holding.
// `first_tier`: as split_at_barriers.
std::vector<std::pair<uint32_t, llvm::BasicBlock*>> split_regions(llvm::Function& function, CutPoints cuts, bool first_tier,
                                                                  uint32_t& exchanged_words) {
  std::vector<llvm::CallBase*> calls;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction); call && cuts.contains(call->getCalledFunction()))
        calls.push_back(call);
  std::vector<std::pair<uint32_t, llvm::BasicBlock*>> resume_points;
  auto* i32 = llvm::Type::getInt32Ty(function.getContext());
  llvm::Value* context = function.getArg(0);
  for (llvm::CallBase* call : calls) {
    uint32_t site = static_cast<uint32_t>(resume_points.size() + 1);
    bool is_exchange = call->getCalledFunction() == cuts.exchange;
    bool is_words = call->getCalledFunction() == cuts.exchange_words;
    uint32_t number = is_exchange || is_words ? site | warp_resume_flag : site;
    llvm::BasicBlock* block = call->getParent();
    llvm::BasicBlock* rest = block->splitBasicBlock(call->getNextNode(), "resume." + std::to_string(site));
    llvm::Value* offer = is_exchange ? call->getArgOperand(1) : nullptr;
    std::vector<llvm::Value*> words;
    if (is_words) words.assign(call->arg_begin() + 1, call->arg_end());
    exchanged_words = std::max(exchanged_words, static_cast<uint32_t>(words.size()));
    if (is_exchange) {
      llvm::IRBuilder<> after(&*rest->getFirstInsertionPt());
      llvm::Value* site_number = after.getInt32(site);
      call->replaceAllUsesWith(first_tier ? call_arrived_lanes(after, context, site_number, function.getArg(4))
                                          : emit_arrived_lanes(after, context, site_number, function.getArg(4)));
    }
    block->getTerminator()->eraseFromParent();
    call->eraseFromParent();
    auto* cut = llvm::ReturnInst::Create(function.getContext(), llvm::ConstantInt::get(i32, number), block);
    llvm::IRBuilder<> before(cut);
    if (is_exchange)
      (first_tier ? call_offer : emit_offer)(before, context, offer, before.getInt32(site), function.getArg(4));
    if (is_words) emit_offer_words(before, context, words);
    resume_points.emplace_back(number, rest);
  }
  return resume_points;
}

// The entry block (allocations only) now chooses where the thread continues.
void add_dispatch(llvm::Function& function, const std::vector<std::pair<uint32_t, llvm::BasicBlock*>>& resume_points) {
  llvm::BasicBlock& entry = function.getEntryBlock();
  llvm::BasicBlock* start = entry.splitBasicBlock(entry.getTerminator(), "start");
  entry.getTerminator()->eraseFromParent();
  llvm::IRBuilder<> builder(&entry);
  auto* dispatch = builder.CreateSwitch(function.getArg(3), start, static_cast<unsigned>(resume_points.size()));
  for (const auto& [number, block] : resume_points) dispatch->addCase(builder.getInt32(number), block);
}

// What a block of the resumable function can reach: no way out (a trap), one resume point (or
// thread_finished), or several.
struct ReachableExits {
  enum class Kind { none, single, several } kind = Kind::none;
  uint32_t exit = 0;

  // Adds `other`; returns whether that changed anything.
  bool merge(const ReachableExits& other) {
    if (other.kind == Kind::none || kind == Kind::several) return false;
    if (kind == Kind::none) {
      *this = other;
      return true;
    }
    if (other.kind == Kind::single && other.exit == exit) return false;
    kind = Kind::several;
    return true;
  }
};

// Finds, for each region, whether all threads that start it together also end it together,
// and where, so the block function need not ask each thread.
std::vector<Region> classify_regions(llvm::Function& function, const std::vector<std::pair<uint32_t, llvm::BasicBlock*>>& resume_points,
                                     const ThreadUniformity& uniformity) {
  std::unordered_map<const llvm::BasicBlock*, ReachableExits> exits;
  std::vector<const llvm::BasicBlock*> pending;
  for (llvm::BasicBlock& block : function) {
    if (const auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block.getTerminator())) {
      exits[&block] = {ReachableExits::Kind::single, static_cast<uint32_t>(llvm::cast<llvm::ConstantInt>(ret->getReturnValue())->getZExtValue())};
      pending.push_back(&block);
    }
  }
  while (!pending.empty()) {
    const llvm::BasicBlock* block = pending.back();
    pending.pop_back();
    const ReachableExits reached = exits[block];
    for (const llvm::BasicBlock* predecessor : llvm::predecessors(block))
      if (exits[predecessor].merge(reached)) pending.push_back(predecessor);
  }
  auto* dispatch = llvm::cast<llvm::SwitchInst>(function.getEntryBlock().getTerminator());
  std::vector<std::pair<uint32_t, llvm::BasicBlock*>> starts{{0, dispatch->getDefaultDest()}};
  starts.insert(starts.end(), resume_points.begin(), resume_points.end());
  std::vector<Region> regions;
  std::unordered_map<uint32_t, size_t> region_at;
  std::vector<std::vector<uint32_t>> following(starts.size());
  for (const auto& [number, start] : starts) {
    size_t index = regions.size();
    region_at[number] = index;
    // A region's threads part ways only at a terminator that may diverge; if every such one
    // leads to a single exit, they meet there again.
    bool parts = false;
    for (const llvm::BasicBlock* block : region_blocks(start)) {
      if (exits[block].kind == ReachableExits::Kind::single && llvm::isa<llvm::ReturnInst>(block->getTerminator()))
        following[index].push_back(exits[block].exit);
      parts = parts || (uniformity.may_diverge(*block->getTerminator()) && exits[block].kind == ReachableExits::Kind::several);
    }
    const ReachableExits& reached = exits[start];
    if (reached.kind == ReachableExits::Kind::single) regions.push_back({number, RegionExit::single, reached.exit});
    else regions.push_back({number, parts ? RegionExit::per_thread : RegionExit::uniform, 0});
  }
  // Threads finish apart only after a region they may leave apart, some of them finished.
  std::vector<size_t> parted;
  for (size_t index = 0; index < regions.size(); ++index)
    if (regions[index].exit == RegionExit::per_thread && std::count(following[index].begin(), following[index].end(), thread_finished) != 0)
      parted.push_back(index);
  while (!parted.empty()) {
    size_t index = parted.back();
    parted.pop_back();
    for (uint32_t next : following[index]) {
      if (next == thread_finished) continue;
      Region& reached = regions[region_at.at(next)];
      if (!reached.after_partings) {
        reached.after_partings = true;
        parted.push_back(region_at.at(next));
      }
    }
  }
  return regions;
}

// Whether running `instruction` or not makes no difference but its value: the region code a
// thread may skip.
bool without_effect(const llvm::Instruction& instruction) {
  if (const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction))
    if (const llvm::Function* callee = call->getCalledFunction();
        callee != nullptr && (callee->getName().starts_with(intrinsics::special_register_prefix) || callee->getName() == intrinsics::shared_base))
      return true;
  return !instruction.mayHaveSideEffects() && !llvm::isa<llvm::PHINode>(instruction);
}

// Whether `value` is the thread's %tid.x.
bool is_thread_index(const llvm::Value* value) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(value);
  return call != nullptr && call->getCalledFunction() != nullptr &&
         call->getCalledFunction()->getName() == intrinsics::special_register("tid", "x");
}

// Where a region starting at `start` does any work: the %tid.x range where its first branch, on
// %tid.x against a constant, does not go straight, with no effect, to a way out, and the resume
// point (or thread_finished) the other threads reach there. Runs on the finished resumable
// function, where a value kept across the cut is a store.
struct WorkingThreads {
  uint32_t from, to;
  uint32_t skipped_exit;
};

std::optional<WorkingThreads> working_threads(const llvm::BasicBlock& start) {
  if (!std::all_of(start.begin(), std::prev(start.end()), without_effect)) return std::nullopt;
  const auto* branch = llvm::dyn_cast<llvm::BranchInst>(start.getTerminator());
  if (branch == nullptr || !branch->isConditional()) return std::nullopt;
  const auto* compare = llvm::dyn_cast<llvm::ICmpInst>(branch->getCondition());
  if (compare == nullptr) return std::nullopt;
  llvm::CmpInst::Predicate predicate = compare->getPredicate();
  const llvm::Value* thread = compare->getOperand(0);
  const auto* bound = llvm::dyn_cast<llvm::ConstantInt>(compare->getOperand(1));
  if (bound == nullptr) {
    thread = compare->getOperand(1);
    bound = llvm::dyn_cast<llvm::ConstantInt>(compare->getOperand(0));
    predicate = llvm::CmpInst::getSwappedPredicate(predicate);
  }
  if (bound == nullptr || !is_thread_index(thread) || bound->getValue().getActiveBits() > 31) return std::nullopt;
  // A thread that skips goes through blocks that do nothing to a return, which says where.
  auto skips = [](const llvm::BasicBlock* block) -> std::optional<uint32_t> {
    for (int steps = 0; steps < 4; ++steps) {
      if (!std::all_of(block->begin(), std::prev(block->end()), without_effect)) return std::nullopt;
      if (const auto* ret = llvm::dyn_cast<llvm::ReturnInst>(block->getTerminator()))
        return static_cast<uint32_t>(llvm::cast<llvm::ConstantInt>(ret->getReturnValue())->getZExtValue());
      block = block->getSingleSuccessor();
      if (block == nullptr) return std::nullopt;
    }
    return std::nullopt;
  };
  // %tid.x is below 1024: the comparison holds on [below, above) of 0..2^31.
  const auto constant = static_cast<uint32_t>(bound->getZExtValue());
  uint32_t below = 0, above = 0;
  switch (predicate) {
    case llvm::CmpInst::ICMP_ULT: case llvm::CmpInst::ICMP_SLT: above = constant; break;
    case llvm::CmpInst::ICMP_ULE: case llvm::CmpInst::ICMP_SLE: above = constant + 1; break;
    case llvm::CmpInst::ICMP_UGT: case llvm::CmpInst::ICMP_SGT: below = constant + 1; above = UINT32_MAX; break;
    case llvm::CmpInst::ICMP_UGE: case llvm::CmpInst::ICMP_SGE: below = constant; above = UINT32_MAX; break;
    // `if (threadIdx.x == 0)`, as nvcc writes it: tid != 0 goes to the way out. Without these, the
    // last steps of a tree reduction (`if (tid < 1)`) and its final store ran a masked gather and
    // scatter for every 16 threads of the block: the benchmark suite's reduce_shared took 1.65 ms
    // instead of 0.96, reduce_shared_guarded 6.75 instead of 2.03.
    case llvm::CmpInst::ICMP_EQ: below = constant; above = constant + 1; break;
    case llvm::CmpInst::ICMP_NE:
      if (constant != 0) return std::nullopt;
      below = 1;
      above = UINT32_MAX;
      break;
    default: return std::nullopt;
  }
  if (auto exit = skips(branch->getSuccessor(1))) return WorkingThreads{below, above, *exit};  // works where the comparison holds
  auto exit = skips(branch->getSuccessor(0));
  if (!exit) return std::nullopt;
  // Works where it fails: a range only where the comparison's is open at one end.
  if (below == 0) return WorkingThreads{above, UINT32_MAX, *exit};
  if (above == UINT32_MAX) return WorkingThreads{0, below, *exit};
  return std::nullopt;
}

bool compares_thread_index(std::span<const llvm::BasicBlock* const> blocks) {
  for (const llvm::BasicBlock* block : blocks)
    for (const llvm::Instruction& instruction : *block)
      if (const auto* compare = llvm::dyn_cast<llvm::ICmpInst>(&instruction))
        if ((is_thread_index(compare->getOperand(0)) && llvm::isa<llvm::ConstantInt>(compare->getOperand(1))) ||
            (is_thread_index(compare->getOperand(1)) && llvm::isa<llvm::ConstantInt>(compare->getOperand(0))))
          return true;
  return false;
}

// Special registers (but the clocks, %globaltimer among them), the shared window and kernel
// parameters read the same anywhere in a thread, and so does arithmetic on them: a region other
// than the one computing such a value computes it again rather than keeping a copy per thread.
// That is cheaper, and keeps what the vectoriser can see through visible: a block-uniform
// value stays uniform, and an address made from %tid.x stays consecutive across threads.
// `depth` bounds how much is computed again.
bool rereadable(const llvm::Value* value, const llvm::Function& function, int depth = 8) {
  if (llvm::isa<llvm::Constant>(value) || llvm::isa<llvm::Argument>(value)) return true;
  if (depth == 0) return false;
  auto operands_rereadable = [&](const llvm::User* user) {
    return std::all_of(user->op_begin(), user->op_end(), [&](const llvm::Use& operand) { return rereadable(operand.get(), function, depth - 1); });
  };
  if (const auto* call = llvm::dyn_cast<llvm::CallInst>(value)) {
    const llvm::Function* callee = call->getCalledFunction();
    if (callee == nullptr) return false;
    bool pure = callee->isIntrinsic() && call->doesNotAccessMemory();
    if (!pure && callee->getName() != intrinsics::shared_base) {
      if (!callee->getName().starts_with(intrinsics::special_register_prefix)) return false;
      std::string_view name = intrinsics::parse_special_register(callee->getName()).name;
      if (name.starts_with("clock") || name == "globaltimer") return false;
    }
    return std::all_of(call->arg_begin(), call->arg_end(), [&](const llvm::Use& argument) { return rereadable(argument.get(), function, depth - 1); });
  }
  if (llvm::isa<llvm::BinaryOperator, llvm::CastInst, llvm::GetElementPtrInst, llvm::CmpInst, llvm::SelectInst>(value) &&
      operands_rereadable(llvm::cast<llvm::User>(value)))
    return true;
  const auto* load = llvm::dyn_cast<llvm::LoadInst>(value);
  if (load == nullptr || !load->isSimple()) return false;
  const llvm::Value* pointer = load->getPointerOperand();
  while (const auto* element = llvm::dyn_cast<llvm::GetElementPtrInst>(pointer)) {
    if (!element->hasAllConstantIndices()) return false;
    pointer = element->getPointerOperand();
  }
  return pointer == function.getArg(1);
}

llvm::Value* reread(llvm::Value* value, llvm::Instruction* before) {
  auto* instruction = llvm::dyn_cast<llvm::Instruction>(value);
  if (instruction == nullptr) return value;
  llvm::Instruction* copy = instruction->clone();
  for (llvm::Use& operand : copy->operands()) operand.set(reread(operand.get(), before));
  copy->insertBefore(before);
  return copy;
}

// Values used in a region other than the one defining them go through memory, which the next
// step makes per-thread. Returns the allocations that hold values uniform across the block.
std::unordered_set<llvm::AllocaInst*> spill_values_crossing_regions(llvm::Function& function, const ThreadUniformity& uniformity) {
  std::unordered_set<llvm::AllocaInst*> uniform;
  // A load of a uniform value's slot is as uniform as the value.
  auto is_uniform = [&](const llvm::Instruction& instruction) {
    if (uniformity.is_uniform(instruction)) return true;
    const auto* load = llvm::dyn_cast<llvm::LoadInst>(&instruction);
    const auto* slot = load == nullptr ? nullptr : llvm::dyn_cast<llvm::AllocaInst>(load->getPointerOperand());
    return slot != nullptr && uniform.contains(const_cast<llvm::AllocaInst*>(slot));
  };
  // Demoting a phi leaves a load in its place that may cross regions in turn, hence the loop.
  // Demotion never changes the control flow, so the dominator tree stays valid.
  llvm::DominatorTree dominators(function);
  while (true) {
    std::vector<llvm::Instruction*> crossing;
    for (llvm::BasicBlock& block : function) {
      for (llvm::Instruction& instruction : block) {
        if (llvm::isa<llvm::AllocaInst>(instruction)) continue;
        for (const llvm::Use& use : instruction.uses()) {
          if (!dominators.dominates(&instruction, use)) {
            crossing.push_back(&instruction);
            break;
          }
        }
      }
    }
    if (crossing.empty()) return uniform;
    std::erase_if(crossing, [&](llvm::Instruction* instruction) {
      if (!rereadable(instruction, function)) return false;
      std::vector<llvm::Use*> far;
      for (llvm::Use& use : instruction->uses())
        if (!dominators.dominates(instruction, use)) far.push_back(&use);
      for (llvm::Use* use : far) {
        auto* user = llvm::cast<llvm::Instruction>(use->getUser());
        if (auto* phi = llvm::dyn_cast<llvm::PHINode>(user)) user = phi->getIncomingBlock(*use)->getTerminator();
        use->set(reread(instruction, user));
      }
      return true;
    });
    for (llvm::Instruction* instruction : crossing) {
      bool uniform_value = is_uniform(*instruction);
      auto* phi = llvm::dyn_cast<llvm::PHINode>(instruction);
      llvm::AllocaInst* slot = phi != nullptr ? llvm::DemotePHIToStack(phi) : llvm::DemoteRegToStack(*instruction);
      if (slot != nullptr && uniform_value) uniform.insert(slot);
    }
  }
}

// Which loads of `slot` run before any store to it in the same call of the resumable function,
// on every path: they read what the region was entered with.
class EntryReads {
 public:
  explicit EntryReads(const llvm::AllocaInst& slot) {
    std::vector<const llvm::BasicBlock*> pending;
    for (const llvm::User* user : slot.users()) {
      if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(user)) {
        stores_.push_back(store);
        for (const llvm::BasicBlock* successor : llvm::successors(store->getParent())) pending.push_back(successor);
      }
    }
    while (!pending.empty()) {
      const llvm::BasicBlock* block = pending.back();
      pending.pop_back();
      if (!after_store_.insert(block).second) continue;
      for (const llvm::BasicBlock* successor : llvm::successors(block)) pending.push_back(successor);
    }
  }

  bool reads_entry_value(const llvm::LoadInst& load) const {
    if (after_store_.contains(load.getParent())) return false;
    return std::none_of(stores_.begin(), stores_.end(), [&](const llvm::StoreInst* store) {
      return store->getParent() == load.getParent() && store->comesBefore(&load);
    });
  }

 private:
  std::vector<const llvm::StoreInst*> stores_;
  std::unordered_set<const llvm::BasicBlock*> after_store_;
};

// A predicate's slot holds a byte: the vectoriser widens no access to a type whose bits do not
// fill its bytes, so a loop over the threads of a region read an i1 slot thread by thread, sixteen
// loads and insertions for each vector of threads. A kernel that keeps two predicates across each
// of 10 barriers (1M threads, blocks of 256, one host thread) ran in 9.3 ms instead of 73 and
// compiled in 66 ms of CPU instead of 106; a libcusparse module of six prune_csr_core kernels
// compiled in 1.21-1.28 s instead of 1.31-1.32, and its object took 155 KB instead of 188 (`perf
// stat -r 3 xcuda compile --target host -j 1 --whole-warp-blocks`). Of 141 modules (the nvcc
// corpus's 51 sm_90 ones and 90 of the toolkit's libcublas and libcusparse under 60 KB), 25 objects
// changed, most smaller; two libcublas sphpr2 modules grew by a fifth, their loops now vectorised.
void hold_predicate_in_byte(llvm::AllocaInst& alloca) {
  if (!alloca.getAllocatedType()->isIntegerTy(1) || !only_loaded_and_stored(alloca)) return;
  auto* byte = llvm::Type::getInt8Ty(alloca.getContext());
  alloca.setAllocatedType(byte);
  std::vector<llvm::User*> users(alloca.user_begin(), alloca.user_end());
  for (llvm::User* user : users) {
    auto* access = llvm::cast<llvm::Instruction>(user);
    llvm::IRBuilder<> builder(access);
    if (auto* load = llvm::dyn_cast<llvm::LoadInst>(access)) {
      llvm::LoadInst* wide = builder.CreateAlignedLoad(byte, &alloca, load->getAlign(), load->isVolatile());
      load->replaceAllUsesWith(builder.CreateTrunc(wide, load->getType()));
    } else {
      auto* store = llvm::cast<llvm::StoreInst>(access);
      builder.CreateAlignedStore(builder.CreateZExt(store->getValueOperand(), byte), &alloca, store->getAlign(), store->isVolatile());
    }
    access->eraseFromParent();
  }
}

// Every alloca becomes a slot in the block's storage, which survives between regions. The slots
// of one alloca for all threads lie side by side (thread t's at t * size), so a loop over the
// threads of a region reads and writes them at consecutive addresses, which it can vectorise.
// A uniform value also has a block-wide entry copy at the start of the storage, which the block
// function fills from the first thread's slot before each region that all threads run
// together and that reads it; there a load that reads what the region was entered with reads
// the entry copy, the same address for every thread, so that what is computed from it is seen
// to be uniform.
// `thread_limit`: the most threads a block of the kernel may have; `other_bytes_per_thread`:
// what the block keeps for each thread besides this storage. `entry_reads` receives, for each
// uniform slot, the blocks that read its entry copy.
StorageLayout move_allocas_to_thread_storage(llvm::Function& function, const std::unordered_set<llvm::AllocaInst*>& uniform,
                                             uint32_t thread_limit, uint64_t other_bytes_per_thread,
                                             std::vector<std::unordered_set<const llvm::BasicBlock*>>& entry_reads) {
  const llvm::DataLayout& layout = function.getParent()->getDataLayout();
  std::vector<llvm::AllocaInst*> allocas;
  for (llvm::BasicBlock& block : function)
    for (llvm::Instruction& instruction : block)
      if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction)) allocas.push_back(alloca);
  for (llvm::AllocaInst* alloca : allocas) hold_predicate_in_byte(*alloca);
  auto bytes_of = [&](llvm::AllocaInst* alloca) {
    uint64_t alignment = alloca->getAlign().value();
    uint64_t bytes = alloca->getAllocationSize(layout).value_or(llvm::TypeSize::getFixed(0)).getFixedValue();
    return (bytes + alignment - 1) / alignment * alignment;
  };
  StorageLayout result;
  std::unordered_map<llvm::AllocaInst*, uint64_t> uniform_offsets;
  for (llvm::AllocaInst* alloca : allocas) {
    if (!uniform.contains(alloca) || !only_loaded_and_stored(*alloca)) continue;
    result.uniform_bytes = (result.uniform_bytes + 15) / 16 * 16;
    uniform_offsets[alloca] = result.uniform_bytes;
    result.uniform_bytes += bytes_of(alloca);
  }
  result.uniform_bytes = (result.uniform_bytes + 15) / 16 * 16;
  // Each alloca's place in a thread's part, counted in columns.
  std::vector<uint64_t> columns_before;
  uint64_t size = 0;
  for (llvm::AllocaInst* alloca : allocas) {
    uint64_t alignment = alloca->getAlign().value();
    size = (size + alignment - 1) / alignment * alignment;
    columns_before.push_back(size);
    size += bytes_of(alloca);
  }
  result.bytes_per_thread = (size + 15) / 16 * 16;
  // Columns as long as the kernel's thread limit put each of a thread's slots at a constant
  // distance from its first, where columns as long as the block need a multiplication per slot,
  // whose products the resumable function computes at its start and keeps alive throughout: a
  // libcusolver getrf kernel of 700 slots emitted in 1.13 s instead of 1.75, and the benchmark
  // suite's sgemm and nbody ran 8% faster. Only where a block of the limit, which takes this much
  // storage whatever its size, fits the budget (with the resume point, 4 bytes per thread, as
  // the runtime counts). The columns are 16 threads longer than the limit: a power of two long,
  // a thread's slots lay a multiple of 4 KB apart, in the same few sets of the L1 cache, and a
  // kernel of 48 barriers with 24 floats per thread across them ran in 39.5 ms instead of 18.8
  // (64 blocks of 256 threads; the benchmark suite's kernels ran as fast either way).
  const uint32_t column_threads = thread_limit + 16;
  if (uint64_t{column_threads} * (result.uniform_bytes + result.bytes_per_thread + other_bytes_per_thread + 4) <= host_abi::block_stack_budget)
    result.column_threads = column_threads;

  llvm::IRBuilder<> builder(&*function.getEntryBlock().getFirstInsertionPt());
  llvm::Value* context = function.getArg(0);
  auto context_field = [&](uint64_t offset) {
    return builder.CreateZExt(builder.CreateLoad(builder.getInt32Ty(), builder.CreateConstGEP1_64(builder.getInt8Ty(), context, offset)),
                              builder.getInt64Ty());
  };
  llvm::Value* columns = result.column_threads != 0 ? builder.getInt64(result.column_threads) : context_field(thread_count_offset);
  llvm::Value* thread = context_field(linear_index_offset);
  llvm::Value* storage = function.getArg(2);
  llvm::Value* together = function.getArg(4);
  llvm::Value* uniform_area = function.getArg(5);
  for (size_t index = 0; index < allocas.size(); ++index) {
    llvm::AllocaInst* alloca = allocas[index];
    const uint64_t bytes = bytes_of(alloca), column = columns_before[index];
    llvm::Value* offset = builder.CreateAdd(builder.CreateMul(columns, builder.getInt64(column)), builder.CreateMul(thread, builder.getInt64(bytes)));
    llvm::Value* slot = builder.CreateGEP(builder.getInt8Ty(), storage, offset, alloca->getName());
    if (auto found = uniform_offsets.find(alloca); found != uniform_offsets.end()) {
      result.uniform_slots.push_back({found->second, column, bytes, {}});
      llvm::Value* entry = builder.CreateConstGEP1_64(builder.getInt8Ty(), uniform_area, found->second, alloca->getName() + ".entry");
      const EntryReads reads(*alloca);
      std::unordered_set<const llvm::BasicBlock*>& reading = entry_reads.emplace_back();
      std::vector<llvm::User*> users(alloca->user_begin(), alloca->user_end());
      for (llvm::User* user : users) {
        if (auto* load = llvm::dyn_cast<llvm::LoadInst>(user); load != nullptr && reads.reads_entry_value(*load)) {
          llvm::IRBuilder<> at(load);
          load->setOperand(0, at.CreateSelect(together, entry, slot));
          reading.insert(load->getParent());
        }
      }
    }
    alloca->replaceAllUsesWith(slot);
  }
  for (llvm::AllocaInst* alloca : allocas) alloca->eraseFromParent();
  return result;
}


// Whether `blocks` call a function that stays a call and has no vector forms: the lowering's
// helpers kept out of line, and functions that are not inlined. The vectoriser cannot widen
// such a call, so a warp's lanes would never become vectors there.
bool has_unwidenable_call(const std::vector<const llvm::BasicBlock*>& blocks) {
  return std::any_of(blocks.begin(), blocks.end(), [](const llvm::BasicBlock* block) {
    return std::any_of(block->begin(), block->end(), [](const llvm::Instruction& instruction) {
      const auto* call = llvm::dyn_cast<llvm::CallInst>(&instruction);
      const llvm::Function* callee = call != nullptr ? call->getCalledFunction() : nullptr;
      return callee != nullptr && !callee->isDeclaration() && !callee->hasFnAttribute(llvm::Attribute::AlwaysInline) &&
             !call->hasFnAttr("vector-function-abi-variant");
    });
  });
}

// Whether a thread running the region of `blocks` from its first may come back to a block.
bool has_cycle(const std::vector<const llvm::BasicBlock*>& blocks) {
  enum class Visit { open, closed };
  std::unordered_map<const llvm::BasicBlock*, Visit> visits;
  std::vector<std::pair<const llvm::BasicBlock*, bool>> pending{{blocks.front(), false}};
  while (!pending.empty()) {
    auto [block, leaving] = pending.back();
    pending.pop_back();
    if (leaving) {
      visits[block] = Visit::closed;
      continue;
    }
    if (auto found = visits.find(block); found != visits.end()) {
      if (found->second == Visit::open) return true;
      continue;
    }
    visits[block] = Visit::open;
    pending.emplace_back(block, true);
    for (const llvm::BasicBlock* successor : llvm::successors(block)) {
      if (auto found = visits.find(successor); found != visits.end() && found->second == Visit::open) return true;
      pending.emplace_back(successor, false);
    }
  }
  return false;
}

// The vectoriser takes no loop inside the loop over a warp's lanes. A loop beside a warp's
// collectives (`for (i = lane; i < n; i += 32) sum += x[i];` before a shuffle reduction) gets a
// region of its own, cut where every thread passes before and after it: at the outermost pair
// of blocks around it that are entered and left together (the first dominates the second, which
// post-dominates the first) with no collective or barrier between them. Between block barriers
// threads may run in any order, so a kernel without races gives the same answers with the cut.
// A loop with collectives and no barrier (`for (...) x = __shfl_sync(~0u, x, lane + 1);`) is
// cut at its header instead: each of its rounds becomes a pass over the block, straight code
// over a warp's lanes. Its threads must then leave it together (a block-uniform trip count), or
// the kernel has no warp path.
void cut_around_loops(llvm::Function& kernel, llvm::Function* barrier) {
  llvm::DominatorTree dominators(kernel);
  llvm::PostDominatorTree post_dominators(kernel);
  llvm::LoopInfo loops(dominators);
  auto holds_exchange = [](const llvm::BasicBlock& block) { return std::any_of(block.begin(), block.end(), is_lane_exchange); };
  auto holds_barrier = [&](const llvm::BasicBlock& block) {
    return std::any_of(block.begin(), block.end(), [&](const llvm::Instruction& instruction) {
      const auto* call = llvm::dyn_cast<llvm::CallBase>(&instruction);
      return call != nullptr && call->getCalledFunction() == barrier;
    });
  };
  auto holds_cut = [&](const llvm::BasicBlock& block) { return holds_exchange(block) || holds_barrier(block); };
  // Whether the blocks a thread may run from `entered` until it reaches `left` hold a cut.
  auto cut_between = [&](llvm::BasicBlock* entered, llvm::BasicBlock* left) {
    std::vector<llvm::BasicBlock*> pending{entered};
    std::unordered_set<llvm::BasicBlock*> seen{entered, left};
    while (!pending.empty()) {
      llvm::BasicBlock* block = pending.back();
      pending.pop_back();
      if (holds_cut(*block)) return true;
      for (llvm::BasicBlock* successor : llvm::successors(block))
        if (seen.insert(successor).second) pending.push_back(successor);
    }
    return false;
  };
  std::set<std::pair<llvm::BasicBlock*, llvm::BasicBlock*>> around;  // entered, left
  for (llvm::Loop* loop : loops) {
    llvm::BasicBlock* header = loop->getHeader();
    std::optional<std::pair<llvm::BasicBlock*, llvm::BasicBlock*>> widest;
    for (llvm::DomTreeNode* before = dominators.getNode(header)->getIDom(); before != nullptr; before = before->getIDom()) {
      llvm::BasicBlock* entered = before->getBlock();
      llvm::DomTreeNode* after = post_dominators.getNode(entered)->getIDom();
      while (after != nullptr && after->getBlock() != nullptr && !dominators.dominates(entered, after->getBlock())) after = after->getIDom();
      if (after == nullptr || after->getBlock() == nullptr) continue;  // the kernel may end on the way
      llvm::BasicBlock* left = after->getBlock();
      if (!post_dominators.dominates(left, header) || loops.getLoopFor(entered) != nullptr || loops.getLoopFor(left) != nullptr) continue;
      if (cut_between(entered, left)) break;
      widest = std::make_pair(entered, left);
    }
    if (widest) around.insert(*widest);
  }
  auto* i32 = llvm::Type::getInt32Ty(kernel.getContext());
  auto cut = [&](llvm::Instruction* at) { llvm::CallInst::Create(barrier, {kernel.getArg(0), llvm::ConstantInt::get(i32, 0)}, "", at->getIterator()); };
  for (llvm::Loop* loop : loops.getLoopsInPreorder()) {
    auto holds = [&](auto&& test) { return std::any_of(loop->block_begin(), loop->block_end(), [&](llvm::BasicBlock* block) { return test(*block); }); };
    if (holds(holds_exchange) && !holds(holds_barrier)) cut(&*loop->getHeader()->getFirstInsertionPt());
  }
  for (auto [entered, left] : around) {
    // In a block of its own: the kernel's first block holds only its allocations.
    cut(llvm::SplitBlock(entered, entered->getTerminator())->getTerminator());
    cut(&*left->getFirstInsertionPt());
  }
}

// The steps both ways of splitting share, once the kernel holds all its cut points itself.
// `thread_limit`: as move_allocas_to_thread_storage takes it; `first_tier`: as split_at_barriers.
ResumableKernel split(llvm::Function& kernel, CutPoints cuts, uint32_t thread_limit, bool first_tier) {
  promote_registers(kernel);
  llvm::Function* resumable = make_resumable(kernel);
  ThreadUniformity uniformity(*resumable);
  ResumableKernel result;
  auto resume_points = split_regions(*resumable, cuts, first_tier, result.exchanged_words);
  add_dispatch(*resumable, resume_points);
  result.function = resumable;
  result.regions = classify_regions(*resumable, resume_points, uniformity);
  std::unordered_set<llvm::AllocaInst*> uniform = spill_values_crossing_regions(*resumable, uniformity);
  share_slots(*resumable, result.regions, uniform);
  std::vector<std::unordered_set<const llvm::BasicBlock*>> entry_reads;
  result.storage =
      move_allocas_to_thread_storage(*resumable, uniform, thread_limit, exchange_bytes_per_thread(result.exchanged_words), entry_reads);
  std::unordered_map<const llvm::BasicBlock*, std::vector<uint32_t>> regions_of;
  for (Region& region : result.regions) {
    const llvm::BasicBlock* start = region_start(*resumable, region.resume_point);
    if (auto working = working_threads(*start)) {
      region.working_from = working->from;
      region.working_to = working->to;
      region.skipped_exit = working->skipped_exit;
    }
    const std::vector<const llvm::BasicBlock*> blocks = region_blocks(start);
    region.rotates = may_rotate(blocks);
    region.compares_thread_index = compares_thread_index(blocks);
    for (const llvm::BasicBlock* block : blocks) regions_of[block].push_back(region.resume_point);
  }
  for (size_t slot = 0; slot < entry_reads.size(); ++slot) {
    std::set<uint32_t> reading;
    for (const llvm::BasicBlock* block : entry_reads[slot]) reading.insert(regions_of[block].begin(), regions_of[block].end());
    result.storage.uniform_slots[slot].read_after.assign(reading.begin(), reading.end());
  }
  return result;
}

}  // namespace

bool only_loaded_and_stored(const llvm::AllocaInst& alloca) {
  return std::all_of(alloca.user_begin(), alloca.user_end(), [&](const llvm::User* user) {
    const auto* store = llvm::dyn_cast<llvm::StoreInst>(user);
    return llvm::isa<llvm::LoadInst>(user) || (store != nullptr && store->getPointerOperand() == &alloca);
  });
}

std::vector<const llvm::BasicBlock*> region_blocks(const llvm::BasicBlock* start) {
  std::vector<const llvm::BasicBlock*> blocks{start};
  std::unordered_set<const llvm::BasicBlock*> seen{start};
  for (size_t next = 0; next < blocks.size(); ++next)
    for (const llvm::BasicBlock* successor : llvm::successors(blocks[next]))
      if (seen.insert(successor).second) blocks.push_back(successor);
  return blocks;
}

const llvm::BasicBlock* region_start(const llvm::Function& resumable, uint32_t resume_point) {
  const auto* dispatch = llvm::cast<llvm::SwitchInst>(resumable.getEntryBlock().getTerminator());
  for (const auto& choice : dispatch->cases())
    if (choice.getCaseValue()->getZExtValue() == resume_point) return choice.getCaseSuccessor();
  return dispatch->getDefaultDest();
}

std::optional<ResumableKernel> split_at_barriers(llvm::Function& kernel, std::string_view kernel_name, uint32_t thread_limit,
                                                bool first_tier, DiagnosticSink& diagnostics) {
  llvm::Module& module = *kernel.getParent();
  CutPoints cuts{module.getFunction(intrinsics::barrier), module.getFunction(intrinsics::warp_exchange),
                 module.getFunction(intrinsics::warp_exchange_words)};
  if (cuts.barrier == nullptr && cuts.exchange == nullptr && cuts.exchange_words == nullptr) return std::nullopt;
  BarrierReach reach(cuts);
  if (!reach.reaches(kernel)) return std::nullopt;
  if (!inline_barrier_paths(kernel, reach)) {
    diagnostics.error(SourceLocation{0, 0}, "'" + std::string(kernel_name) +
                                                "': a barrier or warp collective inside a recursive function is not supported yet");
    return std::nullopt;
  }
  return split(kernel, cuts, thread_limit, first_tier);
}

std::optional<ResumableKernel> split_for_warp_lanes(llvm::Function& original, uint32_t thread_limit) {
  CutPoints cuts{original.getParent()->getFunction(intrinsics::barrier), original.getParent()->getFunction(intrinsics::warp_exchange)};
  if (cuts.exchange == nullptr || !BarrierReach(CutPoints{nullptr, cuts.exchange}).reaches(original)) return std::nullopt;
  // Matrix instructions, which exchange words, take no warp path: their lanes gather the warp's
  // fragments in loops.
  if (BarrierReach(CutPoints{nullptr, nullptr, original.getParent()->getFunction(intrinsics::warp_exchange_words)}).reaches(original))
    return std::nullopt;
  llvm::ValueToValueMapTy copies;
  llvm::Function& kernel = *llvm::CloneFunction(&original, copies);
  // The copy's body moves into the resumable function, or goes with the copy.
  struct Discard {
    llvm::Function& copy;
    ~Discard() { copy.eraseFromParent(); }
  } discard{kernel};
  BarrierReach reach(cuts);
  if (!inline_barrier_paths(kernel, reach) || !use_lane_exchanges(kernel)) return std::nullopt;
  llvm::LLVMContext& context = kernel.getContext();
  auto* barrier = llvm::cast<llvm::Function>(
      kernel.getParent()
          ->getOrInsertFunction(intrinsics::barrier, llvm::Type::getVoidTy(context), llvm::PointerType::get(context, 0), llvm::Type::getInt32Ty(context))
          .getCallee());
  cut_around_loops(kernel, barrier);
  ResumableKernel result = split(kernel, CutPoints{barrier, nullptr}, thread_limit, /*first_tier=*/false);
  // The vectoriser takes no loop with a loop inside, nor one with a call it cannot widen;
  // threads that part ways would need rounds, which run one thread at a time.
  bool whole = true;
  for (Region& region : result.regions) {
    std::vector<const llvm::BasicBlock*> blocks = region_blocks(region_start(*result.function, region.resume_point));
    region.warp_lanes = std::any_of(blocks.begin(), blocks.end(), [](const llvm::BasicBlock* block) {
      return std::any_of(block->begin(), block->end(), [](const llvm::Instruction& instruction) { return is_lane_exchange(instruction); });
    });
    whole = whole && region.exit != RegionExit::per_thread && !(region.warp_lanes && (has_cycle(blocks) || has_unwidenable_call(blocks)));
  }
  if (whole) return result;
  result.function->eraseFromParent();
  return std::nullopt;
}

}  // namespace xcuda::ptx::host
