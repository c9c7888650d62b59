#include "runtime/host/tensor_copy.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/host/worker_pool.h"

namespace xcuda::runtime::host {
namespace {

namespace abi = ptx::tensor_map;
using abi::Reduction;

// CUtensorMapDataType values the reductions tell apart.
enum ElementType : uint32_t {
  u8 = 0, u16 = 1, u32 = 2, s32 = 3, u64 = 4, s64 = 5, f16 = 6, f32 = 7, f64 = 8, bf16 = 9, f32_ftz = 10,
};

// The launch fails, as an H200's does (with an illegal instruction) on a tensor copy it cannot
// carry out.
[[noreturn]] void fail(const char* reason) { abandon_current_block(ErrorCode::illegal_instruction, reason); }

// What NAN_REQUEST_ZERO_FMA fills an element with: an H200 writes 0x7ff7 into every 16 bits,
// a NaN in each floating-point format a map may hold.
void fill_nan(uint8_t* element, uint32_t bytes) {
  for (uint32_t half = 0; half < bytes; half += 2) {
    uint16_t bits = 0x7ff7;
    std::memcpy(element + half, &bits, 2);
  }
}

uint16_t round_to_bfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return 0x7fff;
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
float from_bfloat16(uint16_t bits) {
  uint32_t wide = uint32_t{bits} << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}

template <class Bits, class Combine>
void combine_atomically(uint8_t* at, Bits operand, Combine combine) {
  Bits* word = reinterpret_cast<Bits*>(at);
  Bits old = __atomic_load_n(word, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(word, &old, combine(old, operand), true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

template <class Value, class Bits>
Bits bits_of(Value value) {
  Bits bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
template <class Value, class Bits>
Value value_of(Bits bits) {
  Value value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Integer reductions on `Value` held in `Bits`.
template <class Value, class Bits>
bool reduce_integer(uint8_t* at, const uint8_t* source, Reduction reduction) {
  Bits operand;
  std::memcpy(&operand, source, sizeof operand);
  auto as_value = [](Bits bits) { return value_of<Value>(bits); };
  switch (reduction) {
    case Reduction::add: combine_atomically(at, operand, [](Bits a, Bits b) { return static_cast<Bits>(a + b); }); return true;
    case Reduction::min: combine_atomically(at, operand, [&](Bits a, Bits b) { return as_value(b) < as_value(a) ? b : a; }); return true;
    case Reduction::max: combine_atomically(at, operand, [&](Bits a, Bits b) { return as_value(b) > as_value(a) ? b : a; }); return true;
    case Reduction::bitwise_and: combine_atomically(at, operand, [](Bits a, Bits b) { return static_cast<Bits>(a & b); }); return true;
    case Reduction::bitwise_or: combine_atomically(at, operand, [](Bits a, Bits b) { return static_cast<Bits>(a | b); }); return true;
    case Reduction::bitwise_xor: combine_atomically(at, operand, [](Bits a, Bits b) { return static_cast<Bits>(a ^ b); }); return true;
    // atom.inc and atom.dec: counters that wrap at the operand.
    case Reduction::inc: combine_atomically(at, operand, [](Bits a, Bits b) { return static_cast<Bits>(a >= b ? 0 : a + 1); }); return true;
    case Reduction::dec: combine_atomically(at, operand, [](Bits a, Bits b) { return static_cast<Bits>(a == 0 || a > b ? b : a - 1); }); return true;
  }
  return false;
}

// Floating-point reductions through float (exact for the 16-bit formats: a sum of two of them
// rounds once more correctly) or double.
template <class Bits, class Widen, class Narrow>
bool reduce_float(uint8_t* at, const uint8_t* source, Reduction reduction, Widen widen, Narrow narrow) {
  Bits operand;
  std::memcpy(&operand, source, sizeof operand);
  switch (reduction) {
    case Reduction::add: combine_atomically(at, operand, [&](Bits a, Bits b) { return narrow(widen(a) + widen(b)); }); return true;
    case Reduction::min: combine_atomically(at, operand, [&](Bits a, Bits b) { return narrow(std::fmin(widen(a), widen(b))); }); return true;
    case Reduction::max: combine_atomically(at, operand, [&](Bits a, Bits b) { return narrow(std::fmax(widen(a), widen(b))); }); return true;
    default: return false;
  }
}

// What an H200 accepts: every reduction on 32- and 64-bit integers but .inc and .dec, which
// take only u32; .add on floating-point elements (subnormals kept), and .min and .max on the
// 16-bit ones.
bool reduce_element(uint8_t* at, const uint8_t* source, uint32_t element_type, Reduction reduction) {
  bool counter = reduction == Reduction::inc || reduction == Reduction::dec;
  if (counter && element_type != u32) return false;
  switch (element_type) {
    case u32: return reduce_integer<uint32_t, uint32_t>(at, source, reduction);
    case s32: return reduce_integer<int32_t, uint32_t>(at, source, reduction);
    case u64: return reduce_integer<uint64_t, uint64_t>(at, source, reduction);
    case s64: return reduce_integer<int64_t, uint64_t>(at, source, reduction);
    case f16:
      return reduce_float<uint16_t>(at, source, reduction, [](uint16_t bits) { return static_cast<float>(value_of<_Float16>(bits)); },
                                    [](float value) { return bits_of<_Float16, uint16_t>(static_cast<_Float16>(value)); });
    case bf16: return reduce_float<uint16_t>(at, source, reduction, from_bfloat16, round_to_bfloat16);
    case f32:
    case f32_ftz:
      return reduction == Reduction::add &&
             reduce_float<uint32_t>(at, source, reduction, [](uint32_t bits) { return value_of<float>(bits); },
                                    [](float value) { return bits_of<float, uint32_t>(value); });
    case f64:
      return reduction == Reduction::add &&
             reduce_float<uint64_t>(at, source, reduction, [](uint64_t bits) { return value_of<double>(bits); },
                                    [](double value) { return bits_of<double, uint64_t>(value); });
    default: return false;
  }
}

// 16-byte chunks of shared memory trade places within each row of the swizzle's span
// (CU_TENSOR_MAP_SWIZZLE_*): bits 4 and up of the shared-window address take the exclusive or
// of the bits from 7 up, as many bits as the span has chunks' worth (1, 2 or 3).
uint32_t swizzled(uint32_t address, uint32_t span) {
  if (span == 0) return address;
  return address ^ (((address >> 7) & (span / 16 - 1)) << 4);
}

}  // namespace

uint32_t tensor_copy(const abi::TensorMap* bytes, uint32_t operation, const int32_t* coordinates, uint8_t* shared,
                     uint32_t shared_address) {
  abi::TensorMap map;
  std::memcpy(&map, bytes, sizeof map);
  if (map.magic == abi::refused_magic)
    fail("tensor copy through a map that tensormap.replace gave a value xcuda does not support (an interleave, a "
         "packed type, the 96-byte swizzle or a swizzle atomicity other than 16 bytes)");
  if (map.magic != abi::encoded_magic) fail("tensor copy through bytes that cuTensorMapEncodeTiled did not write");
  uint32_t rank = operation >> abi::rank_shift & 0xff;
  if (rank != map.rank) fail("tensor copy of another rank than its tensor map's");
  uint32_t element = abi::element_bytes(map.element_type);
  // The box starts on a 16-byte boundary of its rows: an H200 refuses other first coordinates.
  if (map.interleave == 0 && int64_t{coordinates[0]} * element % 16 != 0)
    fail("tensor copy whose first coordinate is not on a 16-byte boundary");
  auto direction = static_cast<abi::Direction>(operation & abi::direction_mask);
  // Stores and reductions start inside the tensor: an H200 refuses negative coordinates there.
  if (direction != abi::Direction::load)
    for (uint32_t i = 0; i < rank; ++i)
      if (coordinates[i] < 0) fail("tensor store or reduction at a negative coordinate");
  auto reduction = static_cast<Reduction>(operation >> abi::reduction_shift & 0xff);
  uint32_t span = abi::swizzle_span(map.swizzle);

  // Elements of the box in each dimension: every element_strides[i]-th of box[i].
  uint32_t count[abi::max_rank] = {1, 1, 1, 1, 1};
  uint64_t total = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    count[i] = (map.box[i] + map.element_strides[i] - 1) / map.element_strides[i];
    total *= count[i];
  }
  // Rows of the box (its first dimension) lie one after another in shared memory; under a
  // swizzle each takes the whole span, as an H200 lays them out.
  uint32_t row_pitch = span ? span : count[0] * element;
  // A store writes whole 16-byte pieces of a row, as an H200 does: an element past the end of
  // the tensor's row goes out with the in-bounds elements of its piece.
  uint32_t piece = direction == abi::Direction::load ? 1 : 16 / element;
  uint32_t index[abi::max_rank] = {};
  for (uint64_t row = 0; row < total / count[0]; ++row) {
    bool row_inside = true;
    uint64_t row_address = map.global_address;
    for (uint32_t i = 1; i < rank; ++i) {
      int64_t coordinate = int64_t{coordinates[i]} + int64_t{index[i]} * map.element_strides[i];
      row_inside = row_inside && coordinate >= 0 && static_cast<uint64_t>(coordinate) < map.global_dims[i];
      row_address += static_cast<uint64_t>(coordinate) * map.global_strides[i - 1];
    }
    for (uint32_t column = 0; column < count[0]; ++column) {
      int64_t coordinate = int64_t{coordinates[0]} + column;
      int64_t piece_start = int64_t{coordinates[0]} + column / piece * piece;
      bool inside = row_inside && piece_start >= 0 && static_cast<uint64_t>(piece_start) < map.global_dims[0];
      uint32_t offset = static_cast<uint32_t>(row * row_pitch + column * element);
      uint8_t* local = shared + (swizzled(shared_address + offset, span) - shared_address);
      auto* remote = reinterpret_cast<uint8_t*>(row_address + static_cast<uint64_t>(coordinate) * element);
      if (direction == abi::Direction::load) {
        if (inside)
          std::memcpy(local, remote, element);
        else if (map.fill)
          fill_nan(local, element);
        else
          std::memset(local, 0, element);
      } else if (inside) {
        if (direction == abi::Direction::store)
          std::memcpy(remote, local, element);
        else if (!reduce_element(remote, local, map.element_type, reduction))
          fail("tensor reduction that the tensor map's element type does not take");
      }
    }
    for (uint32_t i = 1; i < rank && ++index[i] == count[i]; ++i) index[i] = 0;
  }
  return static_cast<uint32_t>(total * element);
}

void bulk_reduce(uint8_t* destination, const uint8_t* source, uint32_t bytes, uint32_t operation) {
  auto reduction = static_cast<Reduction>(operation >> abi::reduction_shift & 0xff);
  uint32_t element_type = operation >> abi::element_type_shift;
  uint32_t element = abi::element_bytes(element_type);
  for (uint32_t offset = 0; offset < bytes; offset += element)
    if (!reduce_element(destination + offset, source + offset, element_type, reduction))
      fail("bulk reduction that its element type does not take");
}

}  // namespace xcuda::runtime::host
