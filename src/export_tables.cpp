// cuGetExportTable: the private tables NVIDIA's runtime (static cudart) asks the driver for,
// identified by UUID. Their layouts are undocumented. Each slot we answer is named below with
// how its behaviour was established; every other slot of a table we hand out is a function that
// logs "table, slot" and answers CUDA_ERROR_NOT_SUPPORTED, so a slot we missed shows up at once.
#include <array>
#include <cstring>
#include <string_view>

#include "src/api.h"

#include "runtime/module.h"

using namespace xcuda;

namespace {

using Slot = const void*;

// A numbered stand-in for each slot we do not implement.
template <int Table, int Index>
CUresult unknown_slot() {
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true))
    runtime::logger().warn("export table {} slot {} was called; xcuda does not implement it",
                           Table, Index);
  return CUDA_ERROR_NOT_SUPPORTED;
}

template <int Table, size_t... Index>
constexpr std::array<Slot, sizeof...(Index)> unknown_slots(std::index_sequence<Index...>) {
  return {reinterpret_cast<Slot>(&unknown_slot<Table, int(Index)>)...};
}

// ---- cudart interface: 6bd5fb6c-5bf4-e74a-8987-d93912fd9df9 --------------------------------
// cudart's way into the driver for what the public API lacks: registering the fatbins embedded
// in the executable and retaining the primary context.

// Slot 1 (layout as published by earlier clean-room work, confirmed by logging the calls static
// cudart 13.0 makes): load the module described by a fatbin wrapper.
CUresult module_from_wrapper(CUmodule* result, const void* wrapper) {
  return cuModuleLoadData(result, wrapper);
}

// Slot 2: cudart asks for the primary context of a device, retaining it.
CUresult retain_primary_context(CUcontext* result, CUdevice device) {
  return cuDevicePrimaryCtxRetain(result, device);
}

// Slot 6: slot 1 plus two out-pointers and a flag word we do not need.
CUresult module_from_wrapper_extended(CUmodule* result, const void* wrapper, void*, void*,
                                      unsigned) {
  return cuModuleLoadData(result, wrapper);
}

// Slot 7: called with one integer during start-up; answering success is what the driver does.
CUresult acknowledge(uintptr_t) { return CUDA_SUCCESS; }

// Slot 8: like slot 6 but the fatbin itself comes first and the module second.
CUresult module_from_fatbin_extended(const void* fatbin, CUmodule* result, void*, void*,
                                     unsigned) {
  return cuModuleLoadData(result, fatbin);
}

constexpr int cudart_interface_size = 10;

const auto cudart_interface = [] {
  auto slots = unknown_slots<1>(std::make_index_sequence<cudart_interface_size>());
  slots[0] = reinterpret_cast<Slot>(uintptr_t{cudart_interface_size * sizeof(Slot)});
  slots[1] = reinterpret_cast<Slot>(&module_from_wrapper);
  slots[2] = reinterpret_cast<Slot>(&retain_primary_context);
  slots[6] = reinterpret_cast<Slot>(&module_from_wrapper_extended);
  slots[7] = reinterpret_cast<Slot>(&acknowledge);
  slots[8] = reinterpret_cast<Slot>(&module_from_fatbin_extended);
  return slots;
}();

struct Table {
  CUuuid id;
  const void* slots;
  std::string_view name;
};

constexpr CUuuid uuid(std::array<unsigned char, 16> bytes) {
  CUuuid result{};
  for (size_t index = 0; index < 16; ++index) result.bytes[index] = char(bytes[index]);
  return result;
}

const Table tables[] = {
    {uuid({0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd,
           0x9d, 0xf9}),
     cudart_interface.data(), "cudart interface"},
};

std::string format_uuid(const CUuuid& id) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(id.bytes);
  return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                     "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                     bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6],
                     bytes[7], bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13],
                     bytes[14], bytes[15]);
}

}  // namespace

XCUDA_EXPORT CUresult cuGetExportTable(const void** table, const CUuuid* id) {
  XCUDA_REQUIRE(table && id, CUDA_ERROR_INVALID_VALUE, "null pointer");
  for (const Table& candidate : tables) {
    if (std::memcmp(candidate.id.bytes, id->bytes, sizeof id->bytes) == 0) {
      runtime::logger().debug("cuGetExportTable: {} ({})", candidate.name, format_uuid(*id));
      *table = candidate.slots;
      return CUDA_SUCCESS;
    }
  }
  // Measured: cudart carries on without the tables it is refused.
  *table = nullptr;
  return api::fail(__func__, CUDA_ERROR_NOT_FOUND,
                   "no export table " + format_uuid(*id) + " (the caller continues without it)");
}
