#include "target/host/builtin_library.h"

#include <string>
#include <unordered_set>

#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include "host_abi.h"
#include "lower/tensor_core.h"
#include "target/host/host_target.h"
#include "target/object_file.h"

namespace xcuda::ptx::host {
namespace {

using tensor_core::DotForm;
using tensor_core::Element;

// The dot products of mma.sync and wmma, whose B columns lie 8 (mma.sync, wmma m32n8),
// 16 (wmma m16n16) or 32 (wmma m8n32) elements apart. Per-thread matrices lie in address space 0
// on the host.
std::vector<DotForm> builtin_dot_forms() {
  constexpr uint32_t strides[] = {8, 16, 32};
  std::vector<DotForm> forms;
  // Floating-point inputs: one function for every k (it takes k as an argument), so the form's
  // k only has to equal its step.
  struct Types {
    Element a, b, accumulator;
  };
  constexpr Types sums[] = {
      {Element::f16, Element::f16, Element::f16},    {Element::f16, Element::f16, Element::f32},
      {Element::bf16, Element::bf16, Element::f32},  {Element::tf32, Element::tf32, Element::f32},
      {Element::e4m3, Element::e4m3, Element::f16},  {Element::e4m3, Element::e4m3, Element::f32},
      {Element::e4m3, Element::e5m2, Element::f16},  {Element::e4m3, Element::e5m2, Element::f32},
      {Element::e5m2, Element::e4m3, Element::f16},  {Element::e5m2, Element::e4m3, Element::f32},
      {Element::e5m2, Element::e5m2, Element::f16},  {Element::e5m2, Element::e5m2, Element::f32},
  };
  for (const Types& types : sums)
    for (uint32_t stride : strides) forms.push_back(DotForm{types.a, types.b, types.accumulator, 16, stride, 16, false});
  // wmma's .tf32 m16n16k8, summed in two steps of 4.
  forms.push_back(DotForm{Element::tf32, Element::tf32, Element::f32, 8, 16, 4, false});
  // .s8/.u8, written out for their k: 16 (mma.sync m8n8k16 and m16n8k16, wmma) and 32 (mma.sync
  // m16n8k32), with and without .satfinite.
  for (Element a : {Element::s8, Element::u8})
    for (Element b : {Element::s8, Element::u8})
      for (bool saturate : {false, true}) {
        for (uint32_t stride : strides) forms.push_back(DotForm{a, b, Element::s32, 16, stride, 16, saturate});
        forms.push_back(DotForm{a, b, Element::s32, 32, 8, 32, saturate});
      }
  // .s4/.u4, for k 32 (mma.sync m8n8k32 and m16n8k32, wmma m8n8k32, mma.sp m16n8k64) and 64
  // (mma.sync m16n8k64, mma.sp m16n8k128), and .b1, for k 128 (m8n8k128, m16n8k128) and 256
  // (m16n8k256), with .and or .xor: written out bit by bit, each cost a module 5-20 ms of CPU.
  for (Element a : {Element::s4, Element::u4})
    for (Element b : {Element::s4, Element::u4})
      for (bool saturate : {false, true})
        for (uint32_t k : {32u, 64u}) forms.push_back(DotForm{a, b, Element::s32, k, 8, k, saturate});
  for (uint32_t k : {128u, 256u})
    for (bool exclusive_bits : {false, true}) forms.push_back(DotForm{Element::b1, Element::b1, Element::s32, k, 8, k, false, exclusive_bits});
  // .f64 chains of fused multiply-adds: mma.sync m8n8k4, m16n8k4, m16n8k8 and m16n8k16, wmma m8n8k4.
  for (uint32_t k : {4u, 8u, 16u}) forms.push_back(DotForm{Element::f64, Element::f64, Element::f64, k, 8, k, false});
  return forms;
}

}  // namespace

bool is_builtin(std::string_view name) {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> all;
    for (const DotForm& form : builtin_dot_forms()) all.insert(tensor_core::dot_function_name(form, 0));
    return all;
  }();
  return name.starts_with("xcuda.tensor_core.dot.") && names.contains(std::string(name));
}

std::vector<uint8_t> compile_builtin_library(DiagnosticSink& diagnostics) {
  std::unique_ptr<llvm::TargetMachine> made = lowest_level_target_machine(diagnostics);
  if (made == nullptr) return {};
  llvm::TargetMachine& machine = *made;
  llvm::LLVMContext context;
  llvm::Module module("xcuda_host_builtins", context);
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
  auto* pointer = llvm::PointerType::get(context, 0);
  auto* i64 = llvm::Type::getInt64Ty(context);
  auto* builtin_type = llvm::StructType::get(pointer, pointer);
  auto* level_type = llvm::StructType::get(pointer, pointer, i64);
  auto text = [&](llvm::StringRef string) -> llvm::Constant* {
    llvm::Constant* characters = llvm::ConstantDataArray::getString(context, string);
    return new llvm::GlobalVariable(module, characters->getType(), true, llvm::GlobalValue::PrivateLinkage, characters, "text");
  };
  // The kernels' code is for the host's own processor, and the dot products' loops ran half as
  // fast for x86-64-v2 as for it (an AVX-512 machine): so a copy per level, each function under
  // its level's processor, and the runtime picks.
  const bool x86 = machine.getTargetTriple().getArch() == llvm::Triple::x86_64;
  const std::vector<std::string> processors = x86 ? std::vector<std::string>{"x86-64-v4", "x86-64-v3", "x86-64-v2"}
                                                  : std::vector<std::string>{"generic"};
  std::vector<llvm::Constant*> levels;
  for (const std::string& processor : processors) {
    std::vector<llvm::Constant*> builtins;
    for (const DotForm& form : builtin_dot_forms()) {
      llvm::Function* dot = tensor_core::dot_function(module, form, 0);
      builtins.push_back(llvm::ConstantStruct::get(builtin_type, {text(dot->getName()), dot}));
      // Each level's copy under a name of its own, so that the next level's are written anew.
      dot->setName(dot->getName() + "." + processor);
      dot->addFnAttr("target-cpu", processor);
      dot->addFnAttr("prefer-vector-width", "512");
    }
    auto* table_type = llvm::ArrayType::get(builtin_type, builtins.size());
    auto* table = new llvm::GlobalVariable(module, table_type, true, llvm::GlobalValue::PrivateLinkage,
                                           llvm::ConstantArray::get(table_type, builtins), "builtins." + processor);
    levels.push_back(llvm::ConstantStruct::get(level_type, {text(processor), table, llvm::ConstantInt::get(i64, builtins.size())}));
  }
  auto* levels_type = llvm::ArrayType::get(level_type, levels.size());
  // Hidden: the runtime's shared library reaches them itself, and exports only the driver's API.
  auto* table = new llvm::GlobalVariable(module, levels_type, true, llvm::GlobalValue::ExternalLinkage,
                                         llvm::ConstantArray::get(levels_type, levels), host_abi::builtin_levels_symbol);
  auto* count = new llvm::GlobalVariable(module, i64, true, llvm::GlobalValue::ExternalLinkage, llvm::ConstantInt::get(i64, levels.size()),
                                         host_abi::builtin_level_count_symbol);
  for (llvm::GlobalVariable* variable : {table, count}) variable->setVisibility(llvm::GlobalValue::HiddenVisibility);
  optimize(module, machine, 3, /*whole_warp_blocks=*/false, nullptr);
  return emit_object(module, machine, "host", diagnostics);
}

}  // namespace xcuda::ptx::host
