// Warp folds: vote, match and redux read every lane's offer at one exchange and fold them. The
// lowering calls a fold intrinsic for that, i32 (ptr context, i32 participants, i64 value): the
// offers of the lanes of `participants`, which arrived at the thread's last exchange, folded in
// lane order. A target may compute one whole (the host target's warp paths compare or reduce the
// vector of a warp's offers at once) or expand it into a loop of intrinsics::warp_peer reads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <llvm/IR/IRBuilder.h>

namespace xcuda::ptx {

enum class WarpFold : uint8_t {
  ballot,  // the lanes whose offer is not 0, as a mask
  equal,   // the lanes whose offer equals `value`, as a mask
  // The low 32 bits of the offers, combined.
  add,
  and_,
  or_,
  xor_,
  umin,
  umax,
  smin,
  smax,
};

inline constexpr std::array<std::string_view, 10> warp_fold_names{"ballot", "equal", "add", "and", "or",
                                                                  "xor", "umin", "umax", "smin", "smax"};
inline constexpr std::string_view warp_fold_prefix = "xcuda.warp.fold.";

// `prefix` followed by the fold's name: by default the intrinsic's name.
inline std::string warp_fold_name(WarpFold fold, std::string_view prefix = warp_fold_prefix) {
  return std::string(prefix) + std::string(warp_fold_names[static_cast<size_t>(fold)]);
}

// The inverse of warp_fold_name, if `name` is one.
inline std::optional<WarpFold> warp_fold_of(std::string_view name, std::string_view prefix = warp_fold_prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  for (size_t index = 0; index < warp_fold_names.size(); ++index)
    if (warp_fold_names[index] == name) return static_cast<WarpFold>(index);
  return std::nullopt;
}

// What the fold answers when no lane takes part.
inline uint32_t warp_fold_identity(WarpFold fold) {
  switch (fold) {
    case WarpFold::and_: case WarpFold::umin: return ~0u;
    case WarpFold::smin: return 0x7FFFFFFFu;
    case WarpFold::smax: return 0x80000000u;
    default: return 0;
  }
}

// For the targets whose lanes read each other's offers one by one: the fold as a loop over the
// 32 lanes that reads each offer through intrinsics::warp_peer, emitted at the end of the
// builder's block, which must have no terminator yet. Returns the i32 result, with the builder
// at the end of the loop's exit.
llvm::Value* emit_warp_fold(llvm::IRBuilder<>& builder, WarpFold kind, llvm::Value* context, llvm::Value* participants,
                            llvm::Value* value);

// The same in place of every warp fold `function` calls.
void expand_warp_folds(llvm::Function& function);

}  // namespace xcuda::ptx
