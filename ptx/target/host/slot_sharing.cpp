#include "target/host/slot_sharing.h"

#include <algorithm>
#include <unordered_map>

#include <llvm/ADT/BitVector.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

namespace xcuda::ptx::host {
namespace {

// The regions as a graph: which blocks each holds and which may follow it.
struct RegionGraph {
  std::unordered_map<const llvm::BasicBlock*, std::vector<size_t>> regions_of;
  std::unordered_map<const llvm::BasicBlock*, size_t> started_by;
  std::vector<const llvm::BasicBlock*> starts;
  std::vector<std::vector<size_t>> successors;
  bool complete = true;  // every resume point a region returns is a region's

  RegionGraph(const llvm::Function& resumable, const std::vector<Region>& regions) : successors(regions.size()) {
    std::unordered_map<uint32_t, size_t> region_at;
    for (size_t index = 0; index < regions.size(); ++index) region_at[regions[index].resume_point] = index;
    for (size_t index = 0; index < regions.size(); ++index) {
      const llvm::BasicBlock* start = region_start(resumable, regions[index].resume_point);
      starts.push_back(start);
      started_by[start] = index;
      for (const llvm::BasicBlock* block : region_blocks(start)) {
        regions_of[block].push_back(index);
        const auto* exit = llvm::dyn_cast<llvm::ReturnInst>(block->getTerminator());
        if (exit == nullptr) continue;
        const uint64_t next = llvm::cast<llvm::ConstantInt>(exit->getReturnValue())->getZExtValue();
        if (next == thread_finished) continue;
        auto found = region_at.find(static_cast<uint32_t>(next));
        if (found == region_at.end()) complete = false;
        else successors[index].push_back(found->second);
      }
    }
  }
};

// Whether only loads and stores in the regions' blocks use `alloca` (the dispatch block, which
// every region passes, and unreachable blocks have none).
bool used_in_regions_only(const llvm::AllocaInst& alloca, const RegionGraph& graph) {
  return only_loaded_and_stored(alloca) && std::all_of(alloca.user_begin(), alloca.user_end(), [&](const llvm::User* user) {
           return graph.regions_of.contains(llvm::cast<llvm::Instruction>(user)->getParent());
         });
}

}  // namespace

void share_slots(llvm::Function& resumable, const std::vector<Region>& regions, const std::unordered_set<llvm::AllocaInst*>& kept_apart) {
  const RegionGraph graph(resumable, regions);
  if (!graph.complete) return;
  const llvm::DataLayout& layout = resumable.getParent()->getDataLayout();
  std::vector<llvm::AllocaInst*> slots;
  for (llvm::BasicBlock& block : resumable)
    for (llvm::Instruction& instruction : block)
      if (auto* alloca = llvm::dyn_cast<llvm::AllocaInst>(&instruction);
          alloca != nullptr && !kept_apart.contains(alloca) && alloca->getAllocationSize(layout) &&
          used_in_regions_only(*alloca, graph))
        slots.push_back(alloca);
  if (slots.size() < 2) return;

  // Per region, over the slots: read before any store on some path from the region's start
  // (exposed), stored on every path (defined), read or stored at all (accessed).
  const size_t region_count = regions.size();
  std::vector<llvm::BitVector> exposed(region_count, llvm::BitVector(slots.size()));
  std::vector<llvm::BitVector> defined = exposed, accessed = exposed;
  llvm::PostDominatorTree post_dominators(resumable);
  const llvm::BasicBlock* dispatch = &resumable.getEntryBlock();
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    std::unordered_map<const llvm::BasicBlock*, const llvm::StoreInst*> first_store;
    for (llvm::User* user : slots[slot]->users()) {
      const auto* store = llvm::dyn_cast<llvm::StoreInst>(user);
      if (store == nullptr) continue;
      const llvm::StoreInst*& first = first_store[store->getParent()];
      if (first == nullptr || store->comesBefore(first)) first = store;
    }
    std::vector<const llvm::BasicBlock*> pending;
    std::unordered_set<const llvm::BasicBlock*> seen;
    for (llvm::User* user : slots[slot]->users()) {
      const llvm::BasicBlock* block = llvm::cast<llvm::Instruction>(user)->getParent();
      for (size_t region : graph.regions_of.at(block)) accessed[region].set(slot);
      const auto* load = llvm::dyn_cast<llvm::LoadInst>(user);
      if (load == nullptr) continue;
      auto stored = first_store.find(block);
      if ((stored == first_store.end() || load->comesBefore(stored->second)) && seen.insert(block).second) pending.push_back(block);
    }
    // Back from the reads that come before any store in their block, through blocks without a
    // store, to the starts of regions.
    while (!pending.empty()) {
      const llvm::BasicBlock* block = pending.back();
      pending.pop_back();
      if (auto start = graph.started_by.find(block); start != graph.started_by.end()) exposed[start->second].set(slot);
      for (const llvm::BasicBlock* predecessor : llvm::predecessors(block))
        if (predecessor != dispatch && !first_store.contains(predecessor) && seen.insert(predecessor).second) pending.push_back(predecessor);
    }
    for (const auto& [block, store] : first_store)
      for (size_t region : graph.regions_of.at(block))
        if (post_dominators.dominates(block, graph.starts[region])) defined[region].set(slot);
  }

  // Which slots hold a value when a region begins and when it ends, over the regions a thread
  // may run one after another.
  std::vector<llvm::BitVector> live_in(region_count, llvm::BitVector(slots.size()));
  std::vector<llvm::BitVector> live_out = live_in;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t region = region_count; region-- > 0;) {
      llvm::BitVector out(slots.size());
      for (size_t next : graph.successors[region]) out |= live_in[next];
      llvm::BitVector in = out;
      in.reset(defined[region]);
      in |= exposed[region];
      if (in != live_in[region] || out != live_out[region]) {
        changed = true;
        live_in[region] = std::move(in);
        live_out[region] = std::move(out);
      }
    }
  }

  struct Shared {
    llvm::AllocaInst* alloca;
    uint64_t bytes;
    llvm::BitVector occupied;  // the regions in which its values live
  };
  std::vector<Shared> shared;
  for (size_t slot = 0; slot < slots.size(); ++slot) {
    llvm::AllocaInst* alloca = slots[slot];
    llvm::BitVector occupied(region_count);
    for (size_t region = 0; region < region_count; ++region)
      if (live_in[region][slot] || live_out[region][slot] || accessed[region][slot]) occupied.set(region);
    const uint64_t bytes = alloca->getAllocationSize(layout)->getFixedValue();
    auto fits = [&](const Shared& other) {
      return other.bytes == bytes && other.alloca->getAlign() == alloca->getAlign() && !other.occupied.anyCommon(occupied);
    };
    if (auto found = std::find_if(shared.begin(), shared.end(), fits); found != shared.end()) {
      found->occupied |= occupied;
      alloca->replaceAllUsesWith(found->alloca);
      alloca->eraseFromParent();
    } else {
      shared.push_back({alloca, bytes, std::move(occupied)});
    }
  }
}

}  // namespace xcuda::ptx::host
