// Textures and surfaces on AMDGPU: the runtime functions that tex, tld4, txq, suld, sust and
// suq call (host_abi.h names them and gives their contract), defined in IR that reads the
// object's amdgpu_abi::TextureObject and then the texels themselves, with the addressing and
// filtering of the host backend's sampler (runtime/host/texture_sampling.cpp, whose comments say
// where each rule comes from, measured on an H200). Each function is inlined where it is called,
// where the operation word is a constant, so that only the code of that operation remains; the
// descriptor's format and sampler settings are read at run time.
#include <cstddef>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "host_abi.h"
#include "target/amdgpu/amdgpu_abi.h"
#include "target/amdgpu/amdgpu_target.h"

namespace xcuda::ptx::amdgpu {
namespace {

namespace abi = host_abi;
using amdgpu_abi::TextureLevel;
using amdgpu_abi::TextureObject;
using Builder = llvm::IRBuilder<>;
using llvm::Value;

constexpr unsigned global_address_space = 1;
constexpr uint32_t wrap_mode = 0, clamp_mode = 1, mirror_mode = 2, border_mode = 3;
constexpr uint32_t signed_integer_kind = 1, float_kind = 2;

llvm::Type* words_type(Builder& b) { return llvm::FixedVectorType::get(b.getInt32Ty(), 4); }
llvm::Type* floats_type(Builder& b) { return llvm::FixedVectorType::get(b.getFloatTy(), 4); }
llvm::PointerType* global_pointer(Builder& b) { return b.getPtrTy(global_address_space); }

// A field of the descriptor (or of one of its levels), which no kernel writes.
Value* field(Builder& b, Value* base, size_t offset, llvm::Type* type) {
  auto* load = b.CreateLoad(type, b.CreateConstGEP1_64(b.getInt8Ty(), base, offset));
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return load;
}
Value* u32_field(Builder& b, Value* base, size_t offset) { return field(b, base, offset, b.getInt32Ty()); }
Value* flag(Builder& b, Value* descriptor, uint32_t bit) {
  return b.CreateICmpNE(b.CreateAnd(u32_field(b, descriptor, offsetof(TextureObject, flags)), bit), b.getInt32(0));
}

Value* descriptor_of(Builder& b, Value* object) { return b.CreateIntToPtr(object, global_pointer(b)); }

Value* level_of(Builder& b, Value* descriptor, Value* index) {
  Value* offset = b.CreateAdd(b.getInt64(offsetof(TextureObject, levels)),
                              b.CreateMul(b.CreateZExt(index, b.getInt64Ty()), b.getInt64(sizeof(TextureLevel))));
  return b.CreateGEP(b.getInt8Ty(), descriptor, offset);
}

constexpr size_t extent_offset(uint32_t axis) { return offsetof(TextureLevel, width) + 4 * axis; }

Value* is_layered(Builder& b, Value* geometry) {
  return b.CreateOr(b.CreateICmpEQ(geometry, b.getInt32(abi::geometry_layered_1d)),
                    b.CreateICmpEQ(geometry, b.getInt32(abi::geometry_layered_2d)));
}

// Whether the geometry has axis `axis` (1d: x; 2d: x, y; 3d: x, y, z).
Value* has_axis(Builder& b, Value* geometry, uint32_t axis) {
  if (axis == 0) return b.getTrue();
  Value* three = b.CreateICmpEQ(geometry, b.getInt32(abi::geometry_3d));
  if (axis == 2) return three;
  return b.CreateOr(three, b.CreateOr(b.CreateICmpEQ(geometry, b.getInt32(abi::geometry_2d)),
                                      b.CreateICmpEQ(geometry, b.getInt32(abi::geometry_layered_2d))));
}

// An internal function of the module, defined by `define` the first time it is asked for.
template <typename Define>
llvm::Function* helper(llvm::Module& module, const char* name, llvm::FunctionType* type, Define define) {
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  auto* function = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  define(*function);
  return function;
}

llvm::BasicBlock* block(llvm::Function& function, const char* name) {
  return llvm::BasicBlock::Create(function.getContext(), name, &function);
}

// texel_words(descriptor, element): the element's channels as integers, sign-extended for signed
// formats, and 0 for channels the format lacks.
llvm::Function* texel_words_function(llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  Builder types(context);
  auto* type = llvm::FunctionType::get(words_type(types), {global_pointer(types), global_pointer(types)}, false);
  return helper(module, "xcuda.amdgpu.texel_words", type, [&](llvm::Function& function) {
    function.setOnlyReadsMemory();
    Builder b(block(function, "entry"));
    Value* descriptor = function.getArg(0);
    Value* element = function.getArg(1);
    Value* bytes = u32_field(b, descriptor, offsetof(TextureObject, channel_bytes));
    Value* channels = u32_field(b, descriptor, offsetof(TextureObject, channels));
    Value* is_signed = b.CreateICmpEQ(u32_field(b, descriptor, offsetof(TextureObject, channel_kind)), b.getInt32(signed_integer_kind));
    Value* words = llvm::Constant::getNullValue(words_type(b));
    for (uint32_t channel = 0; channel < 4; ++channel) {
      llvm::BasicBlock* from = b.GetInsertBlock();
      llvm::BasicBlock* present = block(function, "present");
      llvm::BasicBlock* next = block(function, "next");
      b.CreateCondBr(b.CreateICmpULT(b.getInt32(channel), channels), present, next);
      b.SetInsertPoint(present);
      Value* at = b.CreateGEP(b.getInt8Ty(), element, b.CreateZExt(b.CreateMul(bytes, b.getInt32(channel)), b.getInt64Ty()));
      llvm::BasicBlock* widths[3] = {block(function, "byte"), block(function, "half"), block(function, "word")};
      auto* choice = b.CreateSwitch(bytes, widths[2], 2);
      choice->addCase(b.getInt32(1), widths[0]);
      choice->addCase(b.getInt32(2), widths[1]);
      Value* loaded[3];
      for (uint32_t width = 0; width < 3; ++width) {
        b.SetInsertPoint(widths[width]);
        Value* raw = b.CreateAlignedLoad(b.getIntNTy(8u << width), at, llvm::Align(1u << width));
        loaded[width] = b.CreateSelect(is_signed, b.CreateSExtOrBitCast(raw, b.getInt32Ty()), b.CreateZExtOrBitCast(raw, b.getInt32Ty()));
        b.CreateBr(next);
      }
      b.SetInsertPoint(next);
      llvm::PHINode* value = b.CreatePHI(b.getInt32Ty(), 4);
      value->addIncoming(b.getInt32(0), from);
      for (uint32_t width = 0; width < 3; ++width) value->addIncoming(loaded[width], widths[width]);
      words = b.CreateInsertElement(words, value, channel);
    }
    b.CreateRet(words);
  });
}

// float_texel(descriptor, words): the channels of texel_words as the texture returns floats:
// half and single floats as they are, integers normalised (unsigned n-bit over 2^n - 1, signed
// over 2^(n-1) - 1, at least -1), 8-bit sRGB colour channels made linear (through ocml's powf).
llvm::Function* float_texel_function(llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  Builder types(context);
  auto* type = llvm::FunctionType::get(floats_type(types), {global_pointer(types), words_type(types)}, false);
  return helper(module, "xcuda.amdgpu.float_texel", type, [&](llvm::Function& function) {
    function.setOnlyReadsMemory();
    Builder b(block(function, "entry"));
    Value* descriptor = function.getArg(0);
    Value* words = function.getArg(1);
    Value* kind = u32_field(b, descriptor, offsetof(TextureObject, channel_kind));
    Value* bytes = u32_field(b, descriptor, offsetof(TextureObject, channel_bytes));
    Value* is_float = b.CreateICmpEQ(kind, b.getInt32(float_kind));
    Value* is_signed = b.CreateICmpEQ(kind, b.getInt32(signed_integer_kind));
    Value* bits = b.CreateSub(b.CreateShl(bytes, 3), b.CreateZExt(is_signed, b.getInt32Ty()));
    Value* scale = b.CreateUIToFP(b.CreateSub(b.CreateShl(b.getInt64(1), b.CreateZExt(bits, b.getInt64Ty())), b.getInt64(1)), b.getFloatTy());
    Value* floats = llvm::Constant::getNullValue(floats_type(b));
    for (uint32_t channel = 0; channel < 4; ++channel) {
      Value* word = b.CreateExtractElement(words, channel);
      // A half NaN reads as the quiet NaN of its sign, as the host's conversion makes it.
      Value* half = b.CreateFPExt(b.CreateBitCast(b.CreateTrunc(word, b.getInt16Ty()), b.getHalfTy()), b.getFloatTy());
      Value* quiet = b.CreateSelect(b.CreateICmpNE(b.CreateAnd(word, 0x8000), b.getInt32(0)), b.getInt32(0xffc00000), b.getInt32(0x7fc00000));
      half = b.CreateSelect(b.CreateFCmpUNO(half, half), b.CreateBitCast(quiet, b.getFloatTy()), half);
      Value* stored = b.CreateSelect(b.CreateICmpEQ(bytes, b.getInt32(2)), half, b.CreateBitCast(word, b.getFloatTy()));
      Value* integer = b.CreateSelect(is_signed, b.CreateSIToFP(word, b.getFloatTy()), b.CreateUIToFP(word, b.getFloatTy()));
      Value* normalized = b.CreateFDiv(integer, scale);
      Value* minus_one = llvm::ConstantFP::get(b.getFloatTy(), -1.0);
      normalized = b.CreateSelect(b.CreateFCmpOLT(normalized, minus_one), minus_one, normalized);
      floats = b.CreateInsertElement(floats, b.CreateSelect(is_float, stored, normalized), channel);
    }
    llvm::BasicBlock* plain = b.GetInsertBlock();
    llvm::BasicBlock* srgb = block(function, "srgb");
    llvm::BasicBlock* done = block(function, "done");
    Value* applies = b.CreateAnd(flag(b, descriptor, amdgpu_abi::texture_srgb),
                                 b.CreateAnd(b.CreateICmpEQ(kind, b.getInt32(0)), b.CreateICmpEQ(bytes, b.getInt32(1))));
    b.CreateCondBr(applies, srgb, done);
    b.SetInsertPoint(srgb);
    llvm::FunctionCallee power = module.getOrInsertFunction("powf", b.getFloatTy(), b.getFloatTy(), b.getFloatTy());
    if (auto* declaration = llvm::dyn_cast<llvm::Function>(power.getCallee())) {
      declaration->setDoesNotAccessMemory();
      declaration->setDoesNotThrow();
    }
    Value* linear = floats;
    for (uint32_t channel = 0; channel < 3; ++channel) {
      Value* value = b.CreateExtractElement(floats, channel);
      auto constant = [&](double number) { return llvm::ConstantFP::get(b.getFloatTy(), number); };
      Value* low = b.CreateFDiv(value, constant(12.92f));
      Value* high = b.CreateCall(power, {b.CreateFDiv(b.CreateFAdd(value, constant(0.055f)), constant(1.055f)), constant(2.4f)});
      linear = b.CreateInsertElement(linear, b.CreateSelect(b.CreateFCmpOLE(value, constant(0.04045f)), low, high), channel);
    }
    b.CreateBr(done);
    b.SetInsertPoint(done);
    llvm::PHINode* result = b.CreatePHI(floats_type(b), 2);
    result->addIncoming(floats, plain);
    result->addIncoming(linear, srgb);
    b.CreateRet(result);
  });
}

Value* float_texel(Builder& b, Value* descriptor, Value* element) {
  llvm::Module& module = *b.GetInsertBlock()->getModule();
  Value* words = b.CreateCall(texel_words_function(module), {descriptor, element});
  return b.CreateCall(float_texel_function(module), {descriptor, words});
}

// floor() of a coordinate as a texel index; NaN is 0, and ±2^30 (far outside any texture, at
// most 2^28 texels) bounds it.
Value* floor_index(Builder& b, Value* coordinate) {
  Value* limit = llvm::ConstantFP::get(b.getFloatTy(), 0x1p30);
  Value* negative_limit = llvm::ConstantFP::get(b.getFloatTy(), -0x1p30);
  Value* clamped = b.CreateSelect(b.CreateFCmpOLT(coordinate, negative_limit), negative_limit,
                                  b.CreateSelect(b.CreateFCmpOLT(limit, coordinate), limit, coordinate));
  Value* index = b.CreateFPToSI(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, clamped), b.getInt32Ty());
  return b.CreateSelect(b.CreateFCmpUNO(coordinate, coordinate), b.getInt32(0), index);
}

// A texel index along an axis of `size` texels after the address mode; -1 for the border.
Value* address(Builder& b, Value* index, Value* size, Value* mode) {
  Value* zero = b.getInt32(0);
  Value* remainder = b.CreateSRem(index, size);
  Value* wrapped = b.CreateSelect(b.CreateICmpSLT(remainder, zero), b.CreateAdd(remainder, size), remainder);
  Value* period = b.CreateShl(size, 1);
  Value* folded = b.CreateSRem(index, period);
  folded = b.CreateSelect(b.CreateICmpSLT(folded, zero), b.CreateAdd(folded, period), folded);
  Value* mirrored = b.CreateSelect(b.CreateICmpSLT(folded, size), folded, b.CreateSub(b.CreateSub(period, b.getInt32(1)), folded));
  Value* inside = b.CreateAnd(b.CreateICmpSGE(index, zero), b.CreateICmpSLT(index, size));
  Value* bordered = b.CreateSelect(inside, index, b.getInt32(-1));
  Value* clamped = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index, zero),
                                           b.CreateSub(size, b.getInt32(1)));
  Value* result = b.CreateSelect(b.CreateICmpEQ(mode, b.getInt32(wrap_mode)), wrapped, clamped);
  result = b.CreateSelect(b.CreateICmpEQ(mode, b.getInt32(mirror_mode)), mirrored, result);
  return b.CreateSelect(b.CreateICmpEQ(mode, b.getInt32(border_mode)), bordered, result);
}

// The texels one axis contributes and their weights in 256ths: one tap (index[0], weight 256)
// for point sampling and axes the geometry lacks, two for linear filtering (`second` holds).
struct AxisTaps {
  Value* index[2];
  Value* weight[2];
  Value* second;
};

struct Taps {
  AxisTaps axes[3];
  Value* layer;
};

// Per-axis taps on one level (`base` is level 0, which coordinates address), and the layer.
Taps taps(Builder& b, Value* descriptor, Value* level, Value* base, Value* geometry, Value* integer_coordinates,
          Value* coordinates, Value* linear) {
  Value* normalized = b.CreateAnd(flag(b, descriptor, amdgpu_abi::texture_normalized_coordinates), b.CreateNot(integer_coordinates));
  Value* linear_memory = flag(b, descriptor, amdgpu_abi::texture_linear_memory);
  Value* filtered = b.CreateAnd(linear, b.CreateNot(integer_coordinates));
  Value* zero = b.getInt32(0);
  Taps result;
  for (uint32_t axis = 0; axis < 3; ++axis) {
    Value* size = u32_field(b, level, extent_offset(axis));
    Value* base_size = u32_field(b, base, extent_offset(axis));
    Value* word = b.CreateExtractElement(coordinates, axis);
    // An integer coordinate names a texel; its centre is half a texel further.
    Value* position = b.CreateSelect(
        integer_coordinates, b.CreateFAdd(b.CreateSIToFP(word, b.getFloatTy()), llvm::ConstantFP::get(b.getFloatTy(), 0.5)),
        b.CreateBitCast(word, b.getFloatTy()));
    // Wrap and mirror need normalised coordinates; without them the hardware clamps.
    Value* mode = u32_field(b, descriptor, offsetof(TextureObject, address_mode) + 4 * axis);
    Value* repeats = b.CreateOr(b.CreateICmpEQ(mode, b.getInt32(wrap_mode)), b.CreateICmpEQ(mode, b.getInt32(mirror_mode)));
    Value* unnormalized_float = b.CreateAnd(b.CreateNot(flag(b, descriptor, amdgpu_abi::texture_normalized_coordinates)),
                                            b.CreateNot(integer_coordinates));
    mode = b.CreateSelect(b.CreateAnd(unnormalized_float, repeats), b.getInt32(clamp_mode), mode);
    mode = b.CreateSelect(linear_memory, b.getInt32(border_mode), mode);
    Value* extent = b.CreateUIToFP(size, b.getFloatTy());
    Value* level_scale = b.CreateFDiv(extent, b.CreateUIToFP(base_size, b.getFloatTy()));
    position = b.CreateSelect(normalized, b.CreateFMul(position, extent),
                              b.CreateSelect(b.CreateICmpNE(size, base_size), b.CreateFMul(position, level_scale), position));
    Value* point = address(b, floor_index(b, position), size, mode);
    // The guide's linear-filtering weight: frac(x - 0.5) in 8 fractional bits, rounded to nearest.
    Value* shifted = b.CreateFSub(position, llvm::ConstantFP::get(b.getFloatTy(), 0.5));
    Value* first = floor_index(b, shifted);
    Value* fraction = b.CreateFSub(shifted, b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, shifted));
    Value* alpha = b.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {b.getInt32Ty(), b.getFloatTy()},
                                     {b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(fraction, llvm::ConstantFP::get(b.getFloatTy(), 256.0)))});
    Value* present = has_axis(b, geometry, axis);
    Value* two = b.CreateAnd(present, filtered);
    AxisTaps& taps = result.axes[axis];
    taps.index[0] = b.CreateSelect(present, b.CreateSelect(filtered, address(b, first, size, mode), point), zero);
    taps.index[1] = b.CreateSelect(two, address(b, b.CreateAdd(first, b.getInt32(1)), size, mode), zero);
    taps.weight[0] = b.CreateSelect(two, b.CreateSub(b.getInt32(256), alpha), b.getInt32(256));
    taps.weight[1] = b.CreateSelect(two, alpha, zero);
    taps.second = two;
  }
  Value* layers = u32_field(b, level, offsetof(TextureLevel, layers));
  Value* requested = b.CreateExtractElement(coordinates, 3);
  Value* layer = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax,
                                         b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, requested, b.CreateSub(layers, b.getInt32(1))), zero);
  result.layer = b.CreateSelect(b.CreateAnd(is_layered(b, geometry), b.CreateICmpNE(layers, zero)), layer, zero);
  return result;
}

// The element at non-negative indices {x, y, z} of `layer`.
Value* element(Builder& b, Value* descriptor, Value* level, Value* const index[3], Value* layer) {
  auto wide = [&](Value* value) { return b.CreateZExt(value, b.getInt64Ty()); };
  Value* element_bytes = b.CreateMul(u32_field(b, descriptor, offsetof(TextureObject, channel_bytes)),
                                     u32_field(b, descriptor, offsetof(TextureObject, channels)));
  Value* slice = b.CreateAdd(b.CreateMul(wide(layer), wide(u32_field(b, level, extent_offset(2)))), wide(index[2]));
  Value* offset = b.CreateMul(slice, field(b, level, offsetof(TextureLevel, slice_pitch), b.getInt64Ty()));
  offset = b.CreateAdd(offset, b.CreateMul(wide(index[1]), field(b, level, offsetof(TextureLevel, row_pitch), b.getInt64Ty())));
  offset = b.CreateAdd(offset, b.CreateMul(wide(index[0]), wide(element_bytes)));
  Value* data = b.CreateIntToPtr(field(b, level, offsetof(TextureLevel, data), b.getInt64Ty()), global_pointer(b));
  return b.CreateGEP(b.getInt8Ty(), data, offset);
}

Value* border_color(Builder& b, Value* descriptor) {
  return field(b, descriptor, offsetof(TextureObject, border), floats_type(b));
}

// filtered(descriptor, level, geometry, integer coordinates, coordinates): the float texel of
// one level, the weighted sum of every tap's texel under linear filtering.
llvm::Function* filtered_function(llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  Builder types(context);
  auto* type = llvm::FunctionType::get(
      floats_type(types), {global_pointer(types), types.getInt32Ty(), types.getInt32Ty(), types.getInt1Ty(), words_type(types)}, false);
  return helper(module, "xcuda.amdgpu.filtered", type, [&](llvm::Function& function) {
    function.setOnlyReadsMemory();
    Builder b(block(function, "entry"));
    Value* descriptor = function.getArg(0);
    Value* integer_coordinates = function.getArg(3);
    Value* level = level_of(b, descriptor, function.getArg(1));
    Value* base = level_of(b, descriptor, b.getInt32(0));
    Value* linear = flag(b, descriptor, amdgpu_abi::texture_linear_filter);
    Taps found = taps(b, descriptor, level, base, function.getArg(2), integer_coordinates, function.getArg(4), linear);
    Value* border = border_color(b, descriptor);
    Value* zero = b.getInt32(0);
    // A texel of the border reads no memory.
    auto texel = [&](Value* const index[3]) {
      Value* outside = b.CreateOr(b.CreateICmpSLT(index[0], zero), b.CreateOr(b.CreateICmpSLT(index[1], zero), b.CreateICmpSLT(index[2], zero)));
      Value* inside_index[3];
      for (uint32_t axis = 0; axis < 3; ++axis) inside_index[axis] = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, index[axis], zero);
      return b.CreateSelect(outside, border, float_texel(b, descriptor, element(b, descriptor, level, inside_index, found.layer)));
    };
    llvm::BasicBlock* point = block(function, "point");
    llvm::BasicBlock* weighted = block(function, "weighted");
    b.CreateCondBr(b.CreateAnd(linear, b.CreateNot(integer_coordinates)), weighted, point);
    // A point sample is the texel itself, -0 and NaN payloads included.
    b.SetInsertPoint(point);
    Value* nearest[3] = {found.axes[0].index[0], found.axes[1].index[0], found.axes[2].index[0]};
    b.CreateRet(texel(nearest));
    b.SetInsertPoint(weighted);
    Value* sum = llvm::Constant::getNullValue(floats_type(b));
    for (uint32_t k = 0; k < 2; ++k)
      for (uint32_t j = 0; j < 2; ++j)
        for (uint32_t i = 0; i < 2; ++i) {
          Value* index[3] = {found.axes[0].index[i], found.axes[1].index[j], found.axes[2].index[k]};
          Value* exists = b.getTrue();
          if (i == 1) exists = b.CreateAnd(exists, found.axes[0].second);
          if (j == 1) exists = b.CreateAnd(exists, found.axes[1].second);
          if (k == 1) exists = b.CreateAnd(exists, found.axes[2].second);
          // A texel's weight is the product of its axes' weights, itself rounded to 256ths.
          Value* product = b.CreateMul(b.CreateMul(found.axes[0].weight[i], found.axes[1].weight[j]), found.axes[2].weight[k]);
          Value* weight = b.CreateFMul(b.CreateUIToFP(b.CreateLShr(b.CreateAdd(product, b.getInt32(32768)), 16), b.getFloatTy()),
                                       llvm::ConstantFP::get(b.getFloatTy(), 1.0 / 256));
          Value* term = b.CreateFMul(b.CreateVectorSplat(4, weight), texel(index));
          sum = b.CreateSelect(exists, b.CreateFAdd(sum, term), sum);
        }
    b.CreateRet(sum);
  });
}

// __xcuda_texture_fetch(object, operation, coordinates, level).
void define_texture_fetch(llvm::Function& function) {
  llvm::Module& module = *function.getParent();
  Builder b(block(function, "entry"));
  Value* descriptor = descriptor_of(b, function.getArg(0));
  Value* operation = function.getArg(1);
  Value* coordinates = function.getArg(2);
  Value* geometry = b.CreateAnd(operation, abi::geometry_mask);
  auto has = [&](uint32_t bit) { return b.CreateICmpNE(b.CreateAnd(operation, bit), b.getInt32(0)); };
  Value* integer_coordinates = has(abi::fetch_integer_coordinates);
  Value* explicit_level = has(abi::fetch_explicit_level);
  Value* gather = has(abi::fetch_gather);
  Value* base = level_of(b, descriptor, b.getInt32(0));
  Value* zero = b.getInt32(0);
  Value* reads_float = flag(b, descriptor, amdgpu_abi::texture_reads_float);
  llvm::BasicBlock* gathering = block(function, "gather");
  llvm::BasicBlock* sampling = block(function, "sample");
  b.CreateCondBr(gather, gathering, sampling);

  // tld4: channel `channel` of the 2 × 2 texels bilinear filtering would read, in the order the
  // PTX ISA gives: (i0, j1), (i1, j1), (i1, j0), (i0, j0).
  b.SetInsertPoint(gathering);
  {
    Value* channel = b.CreateAnd(b.CreateLShr(operation, abi::fetch_gather_channel_shift), 3);
    Taps found = taps(b, descriptor, base, base, geometry, integer_coordinates, coordinates, b.getTrue());
    Value* border = b.CreateBitCast(b.CreateExtractElement(border_color(b, descriptor), channel), b.getInt32Ty());
    static constexpr uint32_t corners[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
    Value* result = llvm::Constant::getNullValue(words_type(b));
    for (uint32_t corner = 0; corner < 4; ++corner) {
      Value* x = found.axes[0].index[corners[corner][0]];
      Value* y = found.axes[1].index[corners[corner][1]];
      Value* outside = b.CreateOr(b.CreateICmpSLT(x, zero), b.CreateICmpSLT(y, zero));
      Value* index[3] = {b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, zero),
                         b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, y, zero), zero};
      Value* words = b.CreateCall(texel_words_function(module), {descriptor, element(b, descriptor, base, index, found.layer)});
      Value* floats = b.CreateBitCast(b.CreateCall(float_texel_function(module), {descriptor, words}), words_type(b));
      Value* value = b.CreateExtractElement(b.CreateSelect(reads_float, floats, words), channel);
      result = b.CreateInsertElement(result, b.CreateSelect(outside, border, value), corner);
    }
    b.CreateRet(result);
  }

  // The mipmap level of detail, clamped as the sampler says.
  b.SetInsertPoint(sampling);
  auto* f32 = b.getFloatTy();
  Value* count = u32_field(b, descriptor, offsetof(TextureObject, level_count));
  Value* lod = b.CreateFAdd(b.CreateSelect(explicit_level, function.getArg(3), llvm::ConstantFP::get(f32, 0.0)),
                            field(b, descriptor, offsetof(TextureObject, level_bias), f32));
  auto clamp = [&](Value* value, Value* low, Value* high) {
    return b.CreateSelect(b.CreateFCmpOLT(value, low), low, b.CreateSelect(b.CreateFCmpOLT(high, value), high, value));
  };
  Value* min_level = field(b, descriptor, offsetof(TextureObject, min_level), f32);
  Value* max_level = field(b, descriptor, offsetof(TextureObject, max_level), f32);
  lod = clamp(lod, min_level, b.CreateSelect(b.CreateFCmpOLT(min_level, max_level), max_level, min_level));
  Value* last = b.CreateSub(count, b.getInt32(1));
  lod = clamp(lod, llvm::ConstantFP::get(f32, 0.0), b.CreateUIToFP(last, f32));
  auto to_index = [&](Value* value) { return b.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {b.getInt32Ty(), f32}, {value}); };
  Value* nearest = to_index(b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b.CreateFAdd(lod, llvm::ConstantFP::get(f32, 0.5))));
  llvm::BasicBlock* floats = block(function, "floats");
  llvm::BasicBlock* integers = block(function, "integers");
  b.CreateCondBr(reads_float, floats, integers);

  b.SetInsertPoint(floats);
  {
    llvm::Function* filtered = filtered_function(module);
    Value* single = b.CreateICmpEQ(count, b.getInt32(1));
    Value* mipmap_point = b.CreateNot(flag(b, descriptor, amdgpu_abi::texture_linear_mipmap_filter));
    Value* lower_level = b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, lod);
    Value* lower = to_index(lower_level);
    Value* fraction = b.CreateFMul(
        b.CreateUIToFP(to_index(b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(b.CreateFSub(lod, lower_level),
                                                                                          llvm::ConstantFP::get(f32, 256.0)))),
                       f32),
        llvm::ConstantFP::get(f32, 1.0 / 256));
    Value* first_level = b.CreateSelect(single, zero, b.CreateSelect(mipmap_point, nearest, lower));
    Value* first = b.CreateCall(filtered, {descriptor, first_level, geometry, integer_coordinates, coordinates});
    Value* upper = b.CreateAdd(lower, b.getInt32(1));
    Value* blend = b.CreateAnd(b.CreateAnd(b.CreateNot(single), b.CreateNot(mipmap_point)),
                               b.CreateAnd(b.CreateFCmpUNE(fraction, llvm::ConstantFP::get(f32, 0.0)), b.CreateICmpULT(upper, count)));
    llvm::BasicBlock* one = b.GetInsertBlock();
    llvm::BasicBlock* blending = block(function, "blend");
    llvm::BasicBlock* blended = block(function, "blended");
    b.CreateCondBr(blend, blending, blended);
    b.SetInsertPoint(blending);
    Value* second = b.CreateCall(filtered, {descriptor, upper, geometry, integer_coordinates, coordinates});
    Value* mixed = b.CreateFAdd(b.CreateFMul(b.CreateVectorSplat(4, b.CreateFSub(llvm::ConstantFP::get(f32, 1.0), fraction)), first),
                                b.CreateFMul(b.CreateVectorSplat(4, fraction), second));
    b.CreateBr(blended);
    b.SetInsertPoint(blended);
    llvm::PHINode* texel = b.CreatePHI(floats_type(b), 2);
    texel->addIncoming(first, one);
    texel->addIncoming(mixed, blending);
    b.CreateRet(b.CreateBitCast(texel, words_type(b)));
  }

  // Integer reads are never filtered: the nearest texel of the nearest level, 0 outside.
  b.SetInsertPoint(integers);
  {
    Value* level = level_of(b, descriptor, nearest);
    Taps found = taps(b, descriptor, level, base, geometry, integer_coordinates, coordinates, b.getFalse());
    Value* index[3];
    Value* outside = b.getFalse();
    for (uint32_t axis = 0; axis < 3; ++axis) {
      outside = b.CreateOr(outside, b.CreateICmpSLT(found.axes[axis].index[0], zero));
      index[axis] = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, found.axes[axis].index[0], zero);
    }
    Value* words = b.CreateCall(texel_words_function(module), {descriptor, element(b, descriptor, level, index, found.layer)});
    b.CreateRet(b.CreateSelect(outside, llvm::Constant::getNullValue(words_type(b)), words));
  }
}

// Where a surface access goes, and whether it is skipped (out of range under .zero); out of
// range under .trap (or a surface narrower than the access) the kernel traps, which fails the
// launch as on NVIDIA hardware.
struct SurfaceLocation {
  Value* address;
  Value* skipped;
};

SurfaceLocation surface_location(Builder& b, llvm::Function& function) {
  Value* descriptor = descriptor_of(b, function.getArg(0));
  Value* operation = function.getArg(1);
  Value* coordinates = function.getArg(2);
  Value* geometry = b.CreateAnd(operation, abi::geometry_mask);
  Value* level = level_of(b, descriptor, b.getInt32(0));
  auto* i64 = b.getInt64Ty();
  auto wide = [&](Value* value) { return b.CreateZExt(value, i64); };
  Value* access_bytes = b.CreateAnd(b.CreateLShr(operation, abi::surface_bytes_shift), 0xff);
  Value* element_bytes = b.CreateMul(u32_field(b, descriptor, offsetof(TextureObject, channel_bytes)),
                                     u32_field(b, descriptor, offsetof(TextureObject, channels)));
  // Column in bytes, row, slice, layer, and how many of each there are.
  Value* position[4];
  Value* limit[4];
  for (uint32_t axis = 0; axis < 3; ++axis)
    position[axis] = b.CreateSelect(has_axis(b, geometry, axis), b.CreateSExt(b.CreateExtractElement(coordinates, axis), i64), b.getInt64(0));
  position[3] = b.CreateSelect(is_layered(b, geometry), b.CreateSExt(b.CreateExtractElement(coordinates, 3), i64), b.getInt64(0));
  limit[0] = b.CreateAdd(b.CreateSub(b.CreateMul(wide(u32_field(b, level, extent_offset(0))), wide(element_bytes)), wide(access_bytes)),
                         b.getInt64(1));
  limit[1] = wide(u32_field(b, level, extent_offset(1)));
  limit[2] = wide(u32_field(b, level, extent_offset(2)));
  limit[3] = wide(b.CreateBinaryIntrinsic(llvm::Intrinsic::umax, u32_field(b, level, offsetof(TextureLevel, layers)), b.getInt32(1)));
  Value* inside = b.getTrue();
  for (uint32_t axis = 0; axis < 4; ++axis)
    inside = b.CreateAnd(inside, b.CreateAnd(b.CreateICmpSGE(position[axis], b.getInt64(0)), b.CreateICmpSLT(position[axis], limit[axis])));
  Value* zero = b.CreateICmpNE(b.CreateAnd(operation, abi::surface_zero), b.getInt32(0));
  Value* clamp = b.CreateICmpNE(b.CreateAnd(operation, abi::surface_clamp), b.getInt32(0));
  Value* traps = b.CreateAnd(b.CreateNot(inside), b.CreateAnd(b.CreateNot(zero),
                                                             b.CreateOr(b.CreateNot(clamp), b.CreateICmpSLE(limit[0], b.getInt64(0)))));
  llvm::BasicBlock* trapping = block(function, "trap");
  llvm::BasicBlock* accessing = block(function, "access");
  b.CreateCondBr(traps, trapping, accessing);
  b.SetInsertPoint(trapping);
  b.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
  b.CreateUnreachable();
  b.SetInsertPoint(accessing);
  for (uint32_t axis = 0; axis < 4; ++axis) {
    Value* clamped = b.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin, b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, position[axis], b.getInt64(0)), b.CreateSub(limit[axis], b.getInt64(1)));
    position[axis] = b.CreateSelect(clamp, clamped, position[axis]);
  }
  Value* slice = b.CreateAdd(b.CreateMul(position[3], wide(u32_field(b, level, extent_offset(2)))), position[2]);
  Value* offset = b.CreateAdd(b.CreateMul(slice, field(b, level, offsetof(TextureLevel, slice_pitch), i64)),
                              b.CreateAdd(b.CreateMul(position[1], field(b, level, offsetof(TextureLevel, row_pitch), i64)), position[0]));
  Value* data = b.CreateIntToPtr(field(b, level, offsetof(TextureLevel, data), i64), global_pointer(b));
  return {b.CreateGEP(b.getInt8Ty(), data, offset), b.CreateAnd(b.CreateNot(inside), zero)};
}

// Runs `access(bits)` in a block of its own for each access size (1, 2, 4, 8 or 16 bytes)
// unless the access is skipped; each block branches to `done`.
template <typename Access>
void for_access_size(Builder& b, llvm::Function& function, Value* skipped, llvm::BasicBlock* done, Access access) {
  llvm::BasicBlock* sizes = block(function, "sizes");
  llvm::BasicBlock* impossible = block(function, "impossible");
  b.CreateCondBr(skipped, done, sizes);
  b.SetInsertPoint(impossible);
  b.CreateUnreachable();
  b.SetInsertPoint(sizes);
  Value* bytes = b.CreateAnd(b.CreateLShr(function.getArg(1), abi::surface_bytes_shift), 0xff);
  auto* choice = b.CreateSwitch(bytes, impossible, 5);
  for (uint32_t size = 1; size <= 16; size *= 2) {
    llvm::BasicBlock* sized = block(function, "sized");
    choice->addCase(b.getInt32(size), sized);
    b.SetInsertPoint(sized);
    access(8 * size);
    b.CreateBr(done);
  }
}

// __xcuda_surface_load(object, operation, coordinates): the bytes in the vector's first bytes.
void define_surface_load(llvm::Function& function) {
  Builder b(block(function, "entry"));
  llvm::BasicBlock* done = block(function, "done");
  SurfaceLocation location = surface_location(b, function);
  llvm::BasicBlock* skipped = b.GetInsertBlock();
  std::vector<std::pair<Value*, llvm::BasicBlock*>> loaded;
  for_access_size(b, function, location.skipped, done, [&](uint32_t bits) {
    Value* value = b.CreateAlignedLoad(b.getIntNTy(bits), location.address, llvm::Align(1));
    loaded.emplace_back(b.CreateZExtOrBitCast(value, b.getInt128Ty()), b.GetInsertBlock());
  });
  b.SetInsertPoint(done);
  llvm::PHINode* data = b.CreatePHI(b.getInt128Ty(), loaded.size() + 1);
  data->addIncoming(b.getIntN(128, 0), skipped);
  for (auto [value, from] : loaded) data->addIncoming(value, from);
  b.CreateRet(b.CreateBitCast(data, words_type(b)));
}

// __xcuda_surface_store(object, operation, coordinates, values).
void define_surface_store(llvm::Function& function) {
  Builder b(block(function, "entry"));
  llvm::BasicBlock* done = block(function, "done");
  SurfaceLocation location = surface_location(b, function);
  Value* values = b.CreateBitCast(function.getArg(3), b.getInt128Ty());
  for_access_size(b, function, location.skipped, done, [&](uint32_t bits) {
    b.CreateAlignedStore(b.CreateTrunc(values, b.getIntNTy(bits)), location.address, llvm::Align(1));
  });
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

// __xcuda_resource_query(object, query, level): extents in elements of the level (the last one
// for a level beyond it), array_size counts layers.
void define_resource_query(llvm::Function& function) {
  Builder b(block(function, "entry"));
  Value* descriptor = descriptor_of(b, function.getArg(0));
  Value* query = function.getArg(1);
  Value* count = u32_field(b, descriptor, offsetof(TextureObject, level_count));
  Value* level = level_of(b, descriptor, b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, function.getArg(2), b.CreateSub(count, b.getInt32(1))));
  auto as_word = [&](Value* truth) { return b.CreateZExt(truth, b.getInt32Ty()); };
  std::pair<abi::ResourceQuery, Value*> answers[] = {
      {abi::query_width, u32_field(b, level, extent_offset(0))},
      {abi::query_height, u32_field(b, level, extent_offset(1))},
      {abi::query_depth, u32_field(b, level, extent_offset(2))},
      {abi::query_array_size, u32_field(b, level, offsetof(TextureLevel, layers))},
      {abi::query_mipmap_levels, count},
      {abi::query_normalized_coordinates, as_word(flag(b, descriptor, amdgpu_abi::texture_normalized_coordinates))},
      {abi::query_filter_mode, as_word(flag(b, descriptor, amdgpu_abi::texture_linear_filter))},
  };
  Value* result = b.getInt32(0);
  for (const auto& [kind, value] : answers) result = b.CreateSelect(b.CreateICmpEQ(query, b.getInt32(kind)), value, result);
  for (uint32_t axis = 0; axis < 3; ++axis)
    result = b.CreateSelect(b.CreateICmpEQ(query, b.getInt32(abi::query_address_mode_0 + axis)),
                            u32_field(b, descriptor, offsetof(TextureObject, address_mode) + 4 * axis), result);
  b.CreateRet(result);
}

}  // namespace

bool define_texture_function(llvm::Function& function) {
  std::string_view name = function.getName();
  if (name == abi::texture_fetch_symbol)
    define_texture_fetch(function);
  else if (name == abi::surface_load_symbol)
    define_surface_load(function);
  else if (name == abi::surface_store_symbol)
    define_surface_store(function);
  else if (name == abi::resource_query_symbol)
    define_resource_query(function);
  else
    return false;
  function.setLinkage(llvm::GlobalValue::InternalLinkage);
  function.addFnAttr(llvm::Attribute::AlwaysInline);
  return true;
}

}  // namespace xcuda::ptx::amdgpu
