// Texture and surface instructions on texture and surface objects: tex, tld4, txq, suld.b,
// sust.b, sured, suq and istypep. Each but istypep becomes a call of a runtime function named in
// host_abi.h, which reads the object's descriptor; coordinates and texels travel as one
// <4 x i32>. Texture references (module-scope .texref/.surfref variables) and cube, multisample
// and gradient forms are reported as not supported.
#include <optional>

#include "host_abi.h"
#include "lower/instruction_lowering.h"
#include "lower/module_lowering.h"

namespace xcuda::ptx {
namespace {

namespace abi = host_abi;
using llvm::Value;

struct Geometry {
  uint32_t code;
  uint32_t coordinates;  // elements of the coordinate vector
};

std::optional<Geometry> geometry_of(FunctionLowering& lowering, const Instruction& instruction) {
  static constexpr std::pair<std::string_view, Geometry> geometries[] = {
      {"1d", {abi::geometry_1d, 1}},          {"2d", {abi::geometry_2d, 2}},
      {"3d", {abi::geometry_3d, 4}},          {"a1d", {abi::geometry_layered_1d, 2}},
      {"a2d", {abi::geometry_layered_2d, 4}},
  };
  for (const auto& [word, geometry] : geometries)
    if (has_word(instruction, word)) return geometry;
  for (std::string_view word : {"cube", "acube", "2dms", "a2dms"})
    if (has_word(instruction, word)) {
      lowering.error(instruction.location, "'" + instruction.opcode + "." + std::string(word) +
                                               "' is not supported yet");
      return std::nullopt;
    }
  lowering.error(instruction.location, "'" + instruction.opcode + "' needs a geometry (.1d, .2d, .3d, .a1d, .a2d)");
  return std::nullopt;
}

// The object operand [handle, …] as its 64-bit value.
Value* object_handle(FunctionLowering& lowering, const Operand& address) {
  if (address.kind != Operand::Kind::address || address.resolution != Operand::Resolution::register_ ||
      address.offset != 0) {
    lowering.error(address.location, "expected [object, ...] with a texture or surface object in a register "
                                     "(texture and surface references are not supported)");
    return nullptr;
  }
  Operand handle = address;
  handle.kind = Operand::Kind::name;
  handle.elements.clear();
  return lowering.read(handle, ScalarType::u64);
}

// {x, y, z, layer} from the coordinates in [object, {…}]: PTX puts a layered geometry's layer
// first, and lets a 1d geometry's one coordinate stand without braces.
Value* coordinates(FunctionLowering& lowering, const Operand& address, const Geometry& geometry, ScalarType type) {
  bool scalar = address.elements.size() == 1 && address.elements[0].kind != Operand::Kind::vector &&
                geometry.coordinates == 1;
  if (address.elements.size() != 1 ||
      (!scalar && (address.elements[0].kind != Operand::Kind::vector ||
                   address.elements[0].elements.size() != geometry.coordinates))) {
    lowering.error(address.location, "expected [object, {…}] with " + std::to_string(geometry.coordinates) +
                                         " coordinates for this geometry");
    return nullptr;
  }
  const auto& elements = scalar ? address.elements : address.elements[0].elements;
  auto& builder = lowering.builder();
  bool layered = geometry.code == abi::geometry_layered_1d || geometry.code == abi::geometry_layered_2d;
  uint32_t dimensions = geometry.code == abi::geometry_3d ? 3 : geometry.code == abi::geometry_1d || geometry.code == abi::geometry_layered_1d ? 1 : 2;
  Value* words = llvm::Constant::getNullValue(llvm::FixedVectorType::get(builder.getInt32Ty(), 4));
  for (uint32_t axis = 0; axis < dimensions; ++axis) {
    Value* value = builder.CreateBitCast(lowering.read(elements[axis + (layered ? 1 : 0)], type), builder.getInt32Ty());
    words = builder.CreateInsertElement(words, value, axis);
  }
  if (layered) words = builder.CreateInsertElement(words, lowering.read(elements[0], ScalarType::u32), 3);
  return words;
}

llvm::FunctionCallee runtime_function(FunctionLowering& lowering, const char* name, llvm::Type* result,
                                      llvm::ArrayRef<llvm::Type*> parameters) {
  llvm::Module& module = lowering.module().target();
  auto callee = module.getOrInsertFunction(name, llvm::FunctionType::get(result, parameters, false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    function->setDoesNotThrow();
    // Fetches and queries only read memory, so identical ones may be merged or hoisted.
    if (name == std::string_view(abi::texture_fetch_symbol) || name == std::string_view(abi::resource_query_symbol))
      function->setOnlyReadsMemory();
  }
  return callee;
}

llvm::Type* words_type(FunctionLowering& lowering) {
  return llvm::FixedVectorType::get(lowering.builder().getInt32Ty(), 4);
}

// tex and tld4: four channels into the destination vector.
void lower_texture_fetch(FunctionLowering& lowering, const Instruction& instruction) {
  const Qualifiers& qualifiers = instruction.qualifiers;
  auto geometry = geometry_of(lowering, instruction);
  if (!geometry) return;
  if (qualifiers.types.size() != 2 || qualifiers.vector_width != 4) {
    lowering.error(instruction.location, "expected ." + instruction.opcode + ".<geometry>.v4.<result type>.<coordinate type>");
    return;
  }
  ScalarType result_type = qualifiers.types[0], coordinate_type = qualifiers.types[1];
  if (bit_width(result_type) != 32 || bit_width(coordinate_type) != 32) {
    lowering.error(instruction.location, "only 32-bit results and coordinates are supported");
    return;
  }
  if (has_word(instruction, "grad") || instruction.operands.size() > 3 ||
      instruction.operands[0].kind != Operand::Kind::vector || instruction.operands[0].elements.size() != 4) {
    lowering.error(instruction.location, "expected {d0, d1, d2, d3}, [object, {…}] (gradients and a "
                                         "predicate result are not supported yet)");
    return;
  }
  bool explicit_level = has_word(instruction, "level");
  if (explicit_level != (instruction.operands.size() == 3)) {
    lowering.error(instruction.location, "tex.level takes the level of detail as its third operand");
    return;
  }
  uint32_t operation = geometry->code;
  if (!is_float(coordinate_type)) operation |= abi::fetch_integer_coordinates;
  if (explicit_level) operation |= abi::fetch_explicit_level;
  if (instruction.opcode == "tld4") {
    operation |= abi::fetch_gather;
    static constexpr std::string_view channels[] = {"r", "g", "b", "a"};
    for (uint32_t channel = 0; channel < 4; ++channel)
      if (has_word(instruction, channels[channel])) operation |= channel << abi::fetch_gather_channel_shift;
  }
  Value* object = object_handle(lowering, instruction.operands[1]);
  Value* words = coordinates(lowering, instruction.operands[1], *geometry, coordinate_type);
  if (!object || !words) return;
  auto& builder = lowering.builder();
  Value* level = explicit_level ? lowering.read(instruction.operands[2], ScalarType::f32)
                                : llvm::ConstantFP::get(builder.getFloatTy(), 0.0);
  llvm::FunctionCallee fetch = runtime_function(
      lowering, abi::texture_fetch_symbol, words_type(lowering),
      {builder.getInt64Ty(), builder.getInt32Ty(), words_type(lowering), builder.getFloatTy()});
  Value* texel = builder.CreateCall(fetch, {object, builder.getInt32(operation), words, level});
  const auto& destinations = instruction.operands[0].elements;
  for (uint32_t channel = 0; channel < 4; ++channel) {
    if (destinations[channel].kind == Operand::Kind::sink) continue;
    Value* value = builder.CreateBitCast(builder.CreateExtractElement(texel, channel), lowering.type_of(result_type));
    lowering.write(destinations[channel], value, result_type);
  }
}

// The operation word's bits for .clamp and .zero; neither is .trap.
uint32_t out_of_range_mode(const Instruction& instruction) {
  if (has_word(instruction, "clamp")) return abi::surface_clamp;
  if (has_word(instruction, "zero")) return abi::surface_zero;
  return 0;
}

// suld.b and sust.b: up to 16 bytes of raw surface data.
void lower_surface_access(FunctionLowering& lowering, const Instruction& instruction) {
  const Qualifiers& qualifiers = instruction.qualifiers;
  bool store = instruction.opcode == "sust";
  auto geometry = geometry_of(lowering, instruction);
  if (!geometry) return;
  if (!has_word(instruction, "b") || qualifiers.types.size() != 1) {
    lowering.error(instruction.location, "only ." + instruction.opcode + ".b with one data type is supported");
    return;
  }
  ScalarType type = qualifiers.types[0];
  uint32_t element_bits = bit_width(type), count = qualifiers.vector_width;
  if (element_bits * count > 128) {
    lowering.error(instruction.location, "a surface access moves at most 16 bytes");
    return;
  }
  const Operand& data = instruction.operands[store ? 1 : 0];
  std::vector<const Operand*> elements;
  if (data.kind == Operand::Kind::vector)
    for (const Operand& element : data.elements) elements.push_back(&element);
  else
    elements.push_back(&data);
  if (elements.size() != count) {
    lowering.error(data.location, "expected " + std::to_string(count) + " data elements");
    return;
  }
  uint32_t operation = geometry->code | (element_bits * count / 8) << abi::surface_bytes_shift | out_of_range_mode(instruction);
  const Operand& address = instruction.operands[store ? 0 : 1];
  Value* object = object_handle(lowering, address);
  Value* words = coordinates(lowering, address, *geometry, ScalarType::s32);
  if (!object || !words) return;
  auto& builder = lowering.builder();
  // The data as a vector of the access's elements, laid over the 16 bytes.
  auto* lanes = llvm::FixedVectorType::get(lowering.integer_type(element_bits), 128 / element_bits);
  if (store) {
    Value* packed = llvm::Constant::getNullValue(lanes);
    for (uint32_t index = 0; index < count; ++index) {
      Value* value = builder.CreateBitCast(lowering.read(*elements[index], type), lowering.integer_type(element_bits));
      packed = builder.CreateInsertElement(packed, value, index);
    }
    llvm::FunctionCallee function = runtime_function(
        lowering, abi::surface_store_symbol, builder.getVoidTy(),
        {builder.getInt64Ty(), builder.getInt32Ty(), words_type(lowering), words_type(lowering)});
    builder.CreateCall(function, {object, builder.getInt32(operation), words,
                                  builder.CreateBitCast(packed, words_type(lowering))});
    return;
  }
  llvm::FunctionCallee function = runtime_function(lowering, abi::surface_load_symbol, words_type(lowering),
                                                   {builder.getInt64Ty(), builder.getInt32Ty(), words_type(lowering)});
  Value* loaded = builder.CreateBitCast(builder.CreateCall(function, {object, builder.getInt32(operation), words}), lanes);
  for (uint32_t index = 0; index < count; ++index) {
    if (elements[index]->kind == Operand::Kind::sink) continue;
    Value* value = builder.CreateBitCast(builder.CreateExtractElement(loaded, index), lowering.type_of(type));
    lowering.write(*elements[index], value, type);
  }
}

// The types the PTX ISA gives each operation of sured.b and sured.p; ptxas refuses the others.
bool is_reduction_form(bool element_column, abi::SurfaceReduction reduction, ScalarType type) {
  bool ordering = reduction == abi::reduce_min || reduction == abi::reduce_max;
  if (element_column) return type == ScalarType::b32 || (type == ScalarType::b64 && ordering);
  bool addable = type == ScalarType::u32 || type == ScalarType::s32 || type == ScalarType::u64;
  if (reduction == abi::reduce_add) return addable;
  if (ordering) return addable || type == ScalarType::s64;
  return type == ScalarType::b32;
}

// sured.b and sured.p: an atomic reduction of one 32- or 64-bit element, at a byte column or an
// element column; sured.p's min and max are signed when the surface's format is.
void lower_surface_reduction(FunctionLowering& lowering, const Instruction& instruction) {
  const Qualifiers& qualifiers = instruction.qualifiers;
  auto geometry = geometry_of(lowering, instruction);
  if (!geometry) return;
  if (geometry->code != abi::geometry_1d && geometry->code != abi::geometry_2d && geometry->code != abi::geometry_3d) {
    lowering.error(instruction.location, "sured takes a .1d, .2d or .3d geometry");
    return;
  }
  static constexpr std::pair<Operation, abi::SurfaceReduction> reductions[] = {
      {Operation::add, abi::reduce_add}, {Operation::min, abi::reduce_min}, {Operation::max, abi::reduce_max},
      {Operation::and_, abi::reduce_and}, {Operation::or_, abi::reduce_or},
  };
  std::optional<abi::SurfaceReduction> reduction;
  for (const auto& [word, value] : reductions)
    if (qualifiers.operation == word) reduction = value;
  bool element_column = has_word(instruction, "p");
  if (element_column == has_word(instruction, "b") || !reduction || qualifiers.types.size() != 1) {
    lowering.error(instruction.location, "expected sured.b or sured.p, then .add, .min, .max, .and or .or, and one type");
    return;
  }
  if (!has_word(instruction, "trap") && !has_word(instruction, "clamp") && !has_word(instruction, "zero")) {
    lowering.error(instruction.location, "sured needs .trap, .clamp or .zero");
    return;
  }
  ScalarType type = qualifiers.types[0];
  if (!is_reduction_form(element_column, *reduction, type)) {
    static constexpr std::string_view operation_words[] = {"add", "min", "max", "and", "or"};
    lowering.error(instruction.location, "'." + std::string(name_of(type)) + "' is not a type of sured." +
                                             (element_column ? "p." : "b.") +
                                             std::string(operation_words[*reduction]));
    return;
  }
  if (instruction.operands.size() != 2) {
    lowering.error(instruction.location, "expected [object, {…}], value");
    return;
  }
  uint32_t bytes = bit_width(type) / 8;
  uint32_t operation = geometry->code | bytes << abi::surface_bytes_shift | out_of_range_mode(instruction) |
                       *reduction << abi::surface_reduction_shift;
  if (element_column) operation |= abi::surface_element_column;
  if (type == ScalarType::s32 || type == ScalarType::s64) operation |= abi::surface_signed;
  const Operand& address = instruction.operands[0];
  Value* object = object_handle(lowering, address);
  Value* words = coordinates(lowering, address, *geometry, ScalarType::s32);
  if (!object || !words) return;
  auto& builder = lowering.builder();
  Value* value = builder.CreateZExt(lowering.read(instruction.operands[1], type), builder.getInt64Ty());
  llvm::FunctionCallee function =
      runtime_function(lowering, abi::surface_reduce_symbol, builder.getVoidTy(),
                       {builder.getInt64Ty(), builder.getInt32Ty(), words_type(lowering), builder.getInt64Ty()});
  builder.CreateCall(function, {object, builder.getInt32(operation), words, value});
}

// istypep.texref, .samplerref and .surfref. ptxas makes each a test of one bit of the value, 61,
// 62 or 63 (its sm_90 code), and an H200 answers false for every texture and surface object
// (measured). xcuda's objects are host addresses, below 2^47, so they answer false too, and a
// value that is no handle is never dereferenced.
void lower_type_query(FunctionLowering& lowering, const Instruction& instruction) {
  static constexpr std::pair<std::string_view, uint64_t> kinds[] = {
      {"texref", 61}, {"samplerref", 62}, {"surfref", 63}};
  std::optional<uint64_t> bit;
  for (const auto& [word, value] : kinds)
    if (has_word(instruction, word)) bit = value;
  if (!bit || instruction.operands.size() != 2) {
    lowering.error(instruction.location, "expected istypep.texref, .samplerref or .surfref p, a");
    return;
  }
  auto& builder = lowering.builder();
  Value* handle = lowering.read(instruction.operands[1], ScalarType::u64);
  Value* kind = builder.CreateAnd(builder.CreateLShr(handle, *bit), builder.getInt64(1));
  lowering.write(instruction.operands[0], builder.CreateICmpNE(kind, builder.getInt64(0)), ScalarType::pred);
}

// txq and suq: one property of the object as a .b32.
void lower_query(FunctionLowering& lowering, const Instruction& instruction) {
  static constexpr std::pair<std::string_view, abi::ResourceQuery> queries[] = {
      {"width", abi::query_width},
      {"height", abi::query_height},
      {"depth", abi::query_depth},
      {"array_size", abi::query_array_size},
      {"num_mipmap_levels", abi::query_mipmap_levels},
      {"normalized_coords", abi::query_normalized_coordinates},
      {"filter_mode", abi::query_filter_mode},
      {"addr_mode_0", abi::query_address_mode_0},
      {"addr_mode_1", abi::query_address_mode_1},
      {"addr_mode_2", abi::query_address_mode_2},
  };
  std::optional<abi::ResourceQuery> query;
  for (const auto& [word, value] : queries)
    if (has_word(instruction, word)) query = value;
  if (!query) {
    lowering.error(instruction.location, "this '" + instruction.opcode + "' query is not supported yet");
    return;
  }
  bool per_level = has_word(instruction, "level");
  if (per_level != (instruction.operands.size() == 3)) {
    lowering.error(instruction.location, "txq.level takes the mipmap level as its third operand");
    return;
  }
  Value* object = object_handle(lowering, instruction.operands[1]);
  if (!object) return;
  auto& builder = lowering.builder();
  Value* level = per_level ? lowering.read(instruction.operands[2], ScalarType::u32) : builder.getInt32(0);
  llvm::FunctionCallee function =
      runtime_function(lowering, abi::resource_query_symbol, builder.getInt32Ty(),
                       {builder.getInt64Ty(), builder.getInt32Ty(), builder.getInt32Ty()});
  lowering.write(instruction.operands[0], builder.CreateCall(function, {object, builder.getInt32(*query), level}),
                 ScalarType::b32);
}

}  // namespace

void add_texture_lowerings(LoweringTable& table) {
  table["tex"] = lower_texture_fetch;
  table["tld4"] = lower_texture_fetch;
  table["suld"] = lower_surface_access;
  table["sust"] = lower_surface_access;
  table["sured"] = lower_surface_reduction;
  table["istypep"] = lower_type_query;
  table["txq"] = lower_query;
  table["suq"] = lower_query;
}

}  // namespace xcuda::ptx
