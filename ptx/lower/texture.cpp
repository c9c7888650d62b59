// Texture and surface instructions on texture and surface objects: tex, tld4, txq, suld.b,
// sust.b and suq. Each becomes a call of a runtime function named in host_abi.h, which reads the
// object's descriptor; coordinates and texels travel as one <4 x i32>. Texture references
// (module-scope .texref/.surfref variables) and cube, multisample and gradient forms are
// reported as not supported.
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

// {x, y, z, layer} from the coordinate vector in [object, {…}]: PTX puts a layered geometry's
// layer first.
Value* coordinates(FunctionLowering& lowering, const Instruction& instruction, const Geometry& geometry,
                   ScalarType type) {
  const Operand& address = instruction.operands[instruction.opcode == "sust" ? 0 : 1];
  if (address.elements.size() != 1 || address.elements[0].kind != Operand::Kind::vector ||
      address.elements[0].elements.size() != geometry.coordinates) {
    lowering.error(address.location, "expected [object, {…}] with " + std::to_string(geometry.coordinates) +
                                         " coordinates for this geometry");
    return nullptr;
  }
  const auto& elements = address.elements[0].elements;
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
    if (name != std::string_view(abi::surface_store_symbol) && name != std::string_view(abi::surface_load_symbol))
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
  Value* words = coordinates(lowering, instruction, *geometry, coordinate_type);
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
  uint32_t operation = geometry->code | (element_bits * count / 8) << abi::surface_bytes_shift;
  if (has_word(instruction, "clamp")) operation |= abi::surface_clamp;
  if (has_word(instruction, "zero")) operation |= abi::surface_zero;
  Value* object = object_handle(lowering, instruction.operands[store ? 0 : 1]);
  Value* words = coordinates(lowering, instruction, *geometry, ScalarType::s32);
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
  table["txq"] = lower_query;
  table["suq"] = lower_query;
}

}  // namespace xcuda::ptx
