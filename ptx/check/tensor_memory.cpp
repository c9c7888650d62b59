#include "check/tensor_memory.h"

#include <algorithm>
#include <span>
#include <string_view>
#include <vector>

namespace xcuda::ptx {
namespace {

using Words = std::span<const std::string_view>;

constexpr std::string_view cta_groups[] = {"cta_group::1", "cta_group::2"};
constexpr std::string_view sync[] = {"sync"};
constexpr std::string_view aligned[] = {"aligned"};
constexpr std::string_view b32[] = {"b32"};
constexpr std::string_view b64[] = {"b64"};
constexpr std::string_view f32[] = {"f32"};
constexpr std::string_view access_shapes[] = {"32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2"};
constexpr std::string_view repeats[] = {"x1", "x2", "x4", "x8", "x16", "x32", "x64", "x128"};
constexpr std::string_view copy_shapes[] = {"128x256b", "4x256b", "128x128b", "64x128b", "32x128b"};
constexpr std::string_view kinds[] = {"kind::f16", "kind::tf32", "kind::f8f6f4", "kind::i8", "kind::mxf8f6f4",
                                      "kind::mxf4", "kind::mxf4nvf4"};
constexpr std::string_view scale_sizes[] = {"scale_vec::1X", "scale_vec::2X", "scale_vec::4X", "block16", "block32"};
constexpr std::string_view a_collector[] = {"collector::a::fill", "collector::a::use", "collector::a::lastuse",
                                            "collector::a::discard"};
constexpr std::string_view b_collectors[] = {
    "collector::b0::fill", "collector::b0::use", "collector::b0::lastuse", "collector::b0::discard",
    "collector::b1::fill", "collector::b1::use", "collector::b1::lastuse", "collector::b1::discard",
    "collector::b2::fill", "collector::b2::use", "collector::b2::lastuse", "collector::b2::discard",
    "collector::b3::fill", "collector::b3::use", "collector::b3::lastuse", "collector::b3::discard"};

// The modifiers of one instruction, taken off as the form claims them; what is left over at the
// end does not belong to the form.
class Modifiers {
 public:
  Modifiers(const Instruction& instruction, std::string name) : instruction_(instruction), name_(std::move(name)) {
    for (size_t index = 1; index < instruction.modifiers.size(); ++index) left_.push_back(index);
  }

  // The one of `options` written, if any; two of them are a problem.
  std::optional<std::string_view> take(Words options) {
    std::optional<std::string_view> found;
    for (auto position = left_.begin(); position != left_.end();) {
      const Modifier& modifier = instruction_.modifiers[*position];
      auto match = std::find(options.begin(), options.end(), modifier.word);
      if (match == options.end()) {
        ++position;
        continue;
      }
      if (found) problem(modifier.location, "'." + modifier.word + "' repeats what '." + std::string(*found) + "' said");
      found = *match;
      position = left_.erase(position);
    }
    return found;
  }

  std::string_view require(Words options, std::string_view what) {
    std::optional<std::string_view> found = take(options);
    if (!found) problem(instruction_.location, name_ + " needs " + std::string(what));
    return found.value_or(std::string_view{});
  }

  bool has(std::string_view word) { return take(std::span(&word, 1)).has_value(); }

  void problem(SourceLocation location, std::string message) {
    if (!problem_) problem_ = FormProblem{location, std::move(message)};
  }

  std::optional<FormProblem> finish() {
    for (size_t index : left_) {
      const Modifier& modifier = instruction_.modifiers[index];
      problem(modifier.location, "'." + modifier.word + "' is not a modifier of " + name_);
    }
    return problem_;
  }

  const std::string& name() const { return name_; }

 private:
  const Instruction& instruction_;
  std::string name_;
  std::vector<size_t> left_;
  std::optional<FormProblem> problem_;
};

void expect_operands(Modifiers& modifiers, const Instruction& instruction, size_t fewest, size_t most) {
  size_t count = instruction.operands.size();
  if (count >= fewest && count <= most) return;
  std::string expected = fewest == most ? std::to_string(fewest) : std::to_string(fewest) + " to " + std::to_string(most);
  modifiers.problem(instruction.location, modifiers.name() + " takes " + expected + " operands, found " + std::to_string(count));
}

void expect_address(Modifiers& modifiers, const Instruction& instruction, size_t index) {
  if (index < instruction.operands.size() && instruction.operands[index].kind != Operand::Kind::address)
    modifiers.problem(instruction.operands[index].location, "expected a tensor memory or shared memory address [...]");
}

// tcgen05.ld/.st: the registers one thread moves are `x` times 1, 2 or 4 by shape; .16x32bx2
// adds an immediate offset of the second half. ld.red (sm_103a) also takes the reduction's
// destination.
void check_access(Modifiers& modifiers, const Instruction& instruction, bool load) {
  modifiers.require(sync, ".sync");
  modifiers.require(aligned, ".aligned");
  bool reduces = load && modifiers.has("red");
  std::string_view shape = modifiers.require(access_shapes, "a shape (.32x32b, .16x64b, .16x128b, .16x256b, .16x32bx2)");
  std::string_view repeat = modifiers.require(repeats, "a repeat count (.x1 ... .x128)");
  modifiers.has(load ? "pack::16b" : "unpack::16b");
  if (reduces) {
    constexpr std::string_view operations[] = {"min", "max"};
    modifiers.require(operations, ".min or .max");
    modifiers.has("abs");
    modifiers.has("NaN");
    modifiers.require(f32, ".f32");
  } else {
    modifiers.require(b32, ".b32");
  }
  if (shape.empty() || repeat.empty()) return;
  bool split = shape == "16x32bx2";
  size_t operands = 2 + (split ? 1 : 0) + (reduces ? 1 : 0);
  expect_operands(modifiers, instruction, operands, operands);
  if (instruction.operands.size() != operands) return;
  uint32_t per_repeat = shape == "16x128b" ? 2 : shape == "16x256b" ? 4 : 1;
  uint32_t registers = per_repeat * static_cast<uint32_t>(std::stoul(std::string(repeat.substr(1))));
  const Operand& values = load ? instruction.operands[0] : instruction.operands.back();
  size_t count = values.kind == Operand::Kind::vector ? values.elements.size() : 1;
  if (count != registers)
    modifiers.problem(values.location, "." + std::string(shape) + "." + std::string(repeat) + " moves " +
                                           std::to_string(registers) + " registers a thread, found " + std::to_string(count));
  expect_address(modifiers, instruction, load ? operands - 1 - (split ? 1 : 0) : 0);
}

// tcgen05.mma{.sp}{.ws}: [d], a-desc or [a], b-desc, {[sparsity metadata],} idesc, then by form
// the disabled output lanes, the block scales, enable-input-d and scale-input-d or a zero-column
// mask.
void check_matrix_multiply(Modifiers& modifiers, const Instruction& instruction) {
  bool sparse = modifiers.has("sp");
  bool warp_specialised = modifiers.has("ws");
  std::string_view group = modifiers.require(cta_groups, ".cta_group::1 or ::2");
  if (warp_specialised && group == "cta_group::2")
    modifiers.problem(instruction.location, modifiers.name() + ".ws runs on .cta_group::1 only");
  std::string_view kind = modifiers.require(kinds, "a kind (.kind::f16, ::tf32, ::f8f6f4, ::i8, ::mxf8f6f4, ::mxf4, ::mxf4nvf4)");
  bool scaled_kind = kind.starts_with("kind::mx");
  bool block_scale = modifiers.has("block_scale");
  if (!kind.empty() && scaled_kind != block_scale)
    modifiers.problem(instruction.location, scaled_kind ? "." + std::string(kind) + " needs .block_scale"
                                                        : "." + std::string(kind) + " cannot be combined with .block_scale");
  if (warp_specialised && block_scale)
    modifiers.problem(instruction.location, modifiers.name() + ".ws has no .block_scale form");
  if (modifiers.take(scale_sizes) && !block_scale)
    modifiers.problem(instruction.location, "a scale vector size needs .block_scale");
  bool shifts = !warp_specialised && modifiers.has("ashift");
  modifiers.take(warp_specialised ? Words(b_collectors) : Words(a_collector));
  size_t fixed = 4 + (sparse ? 1 : 0);  // d, a, b, {metadata,} idesc
  size_t fewest = fixed + (block_scale ? 3 : 1);
  size_t most = warp_specialised ? fewest + 1 : block_scale ? fewest : fewest + 2;
  expect_operands(modifiers, instruction, fewest, most);
  expect_address(modifiers, instruction, 0);
  if (shifts && instruction.operands.size() > 1 && instruction.operands[1].kind != Operand::Kind::address)
    modifiers.problem(instruction.operands[1].location, ".ashift takes matrix A from tensor memory [a]");
  if (sparse) expect_address(modifiers, instruction, 3);
  if (!warp_specialised && !block_scale && instruction.operands.size() > fixed + 1 &&
      instruction.operands[fixed].kind == Operand::Kind::vector) {
    size_t lanes = group == "cta_group::2" ? 8 : 4;
    if (instruction.operands[fixed].elements.size() != lanes)
      modifiers.problem(instruction.operands[fixed].location, "the disabled output lanes of ." + std::string(group) +
                                                                 " are " + std::to_string(lanes) + " registers");
  }
}

}  // namespace

std::optional<FormProblem> tcgen05_form_problem(const Instruction& instruction) {
  if (instruction.modifiers.empty())
    return FormProblem{instruction.location, "tcgen05 needs an operation such as .alloc, .ld or .mma"};
  const std::string& operation = instruction.modifiers[0].word;
  Modifiers modifiers(instruction, "tcgen05." + operation);
  if (operation == "alloc" || operation == "dealloc") {
    modifiers.require(cta_groups, ".cta_group::1 or ::2");
    modifiers.require(sync, ".sync");
    modifiers.require(aligned, ".aligned");
    if (operation == "alloc") modifiers.has("shared::cta");
    modifiers.require(b32, ".b32");
    expect_operands(modifiers, instruction, 2, 2);
    if (operation == "alloc") expect_address(modifiers, instruction, 0);
  } else if (operation == "relinquish_alloc_permit") {
    modifiers.require(cta_groups, ".cta_group::1 or ::2");
    modifiers.require(sync, ".sync");
    modifiers.require(aligned, ".aligned");
    expect_operands(modifiers, instruction, 0, 0);
  } else if (operation == "ld" || operation == "st") {
    check_access(modifiers, instruction, operation == "ld");
  } else if (operation == "wait::ld" || operation == "wait::st") {
    modifiers.require(sync, ".sync");
    modifiers.require(aligned, ".aligned");
    expect_operands(modifiers, instruction, 0, 0);
  } else if (operation == "fence::before_thread_sync" || operation == "fence::after_thread_sync") {
    expect_operands(modifiers, instruction, 0, 0);
  } else if (operation == "commit") {
    modifiers.require(cta_groups, ".cta_group::1 or ::2");
    constexpr std::string_view arrive[] = {"mbarrier::arrive::one"};
    modifiers.require(arrive, ".mbarrier::arrive::one");
    modifiers.has("shared::cluster");
    bool multicast = modifiers.has("multicast::cluster");
    modifiers.require(b64, ".b64");
    expect_operands(modifiers, instruction, multicast ? 2 : 1, multicast ? 2 : 1);
    expect_address(modifiers, instruction, 0);
  } else if (operation == "cp") {
    modifiers.require(cta_groups, ".cta_group::1 or ::2");
    std::string_view shape = modifiers.require(copy_shapes, "a shape (.128x256b, .4x256b, .128x128b, .64x128b, .32x128b)");
    constexpr std::string_view pairs[] = {"warpx2::02_13", "warpx2::01_23"};
    bool by_pairs = modifiers.take(pairs).has_value();
    bool by_fours = modifiers.has("warpx4");
    if ((shape == "64x128b") != by_pairs || (shape == "32x128b") != by_fours)
      modifiers.problem(instruction.location, shape == "64x128b"   ? ".64x128b needs .warpx2::02_13 or .warpx2::01_23"
                                              : shape == "32x128b" ? ".32x128b needs .warpx4"
                                                                   : "." + std::string(shape) + " takes no warp multicast");
    if (modifiers.has("b8x16")) {
      constexpr std::string_view sources[] = {"b6x16_p32", "b4x16_p64"};
      modifiers.require(sources, "a source format (.b6x16_p32 or .b4x16_p64) after .b8x16");
    }
    expect_operands(modifiers, instruction, 2, 2);
    expect_address(modifiers, instruction, 0);
  } else if (operation == "shift") {
    modifiers.require(cta_groups, ".cta_group::1 or ::2");
    constexpr std::string_view down[] = {"down"};
    modifiers.require(down, ".down");
    expect_operands(modifiers, instruction, 1, 1);
    expect_address(modifiers, instruction, 0);
  } else if (operation == "mma") {
    check_matrix_multiply(modifiers, instruction);
  } else {
    return FormProblem{instruction.modifiers[0].location, "unknown tcgen05 operation '." + operation + "'"};
  }
  return modifiers.finish();
}

}  // namespace xcuda::ptx
