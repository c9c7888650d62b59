// Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap and the rest) on the
// host backend. Physical memory is a memfd, so that one allocation can be mapped at several
// addresses and passed to another process as a file descriptor; an address reservation is an
// inaccessible anonymous mapping (PROT_NONE) that cuMemMap replaces piecewise with the memfd
// (MAP_FIXED) and cuMemUnmap turns back into a reservation. Mapped memory is inaccessible until
// cuMemSetAccess grants access, as on a GPU; from then on it is in the memory registry, so that
// copies, fills, kernels and pointer queries accept it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include "runtime/status.h"

namespace xcuda::runtime {

class Context;

// What cuMemGetAllocationPropertiesFromHandle reports.
struct PhysicalMemoryDescription {
  int device = 0;
  size_t size = 0;
  unsigned handle_types = 0;  // CUmemAllocationHandleType bits asked for at creation
};

// One CUmemAccessDesc: `flags` is a CUmemAccess_flags value.
struct AccessGrant {
  int device = 0;
  unsigned flags = 0;
};

class VirtualMemory {
 public:
  // 2 MiB, what NVIDIA's driver reports for device memory: applications round every size to it.
  static constexpr size_t granularity = size_t{2} << 20;

  // The returned handles stay valid until released as often as created or retained.
  Expected<uint64_t> create(int device, size_t size, unsigned handle_types);
  Expected<uint64_t> import_descriptor(int descriptor);
  Status release(uint64_t handle);
  Expected<PhysicalMemoryDescription> describe(uint64_t handle) const;
  // A new descriptor the caller owns.
  Expected<int> export_descriptor(uint64_t handle) const;
  // The handle of the memory mapped at `address`, retained once more.
  Expected<uint64_t> retain(uintptr_t address);

  // `alignment` is 0 or a power of two; `hint` an address the caller would like, or 0.
  Expected<uintptr_t> reserve(size_t size, size_t alignment, uintptr_t hint);
  Status free_reservation(uintptr_t base, size_t size);
  Status map(uintptr_t address, size_t size, size_t offset, uint64_t handle);
  // [address, address + size) must be made of whole mappings, or hold none.
  Status unmap(uintptr_t address, size_t size);
  // [address, address + size) must be made of whole mappings; accessible mappings are
  // registered as device memory of `context`.
  Status set_access(uintptr_t address, size_t size, std::span<const AccessGrant> grants,
                    Context* context);
  // The CUmemAccess_flags `device` has on the mapping containing `address`.
  Expected<unsigned> access(uintptr_t address, int device) const;

 private:
  struct Physical;
  struct Handle {
    std::shared_ptr<Physical> memory;
    unsigned references = 0;
  };
  struct Mapping {
    size_t size = 0;
    std::shared_ptr<Physical> memory;
    std::map<int, unsigned> access;  // by device; absent means no access
  };
  struct Reservation {
    size_t size = 0;
    std::map<uintptr_t, Mapping> mappings;  // by address
  };

  Expected<uint64_t> adopt(std::shared_ptr<Physical> memory);
  Reservation* reservation_containing(uintptr_t address, size_t size);
  Mapping* mapping_containing(uintptr_t address);
  const Mapping* mapping_containing(uintptr_t address) const;
  // Whether any mapping shares a byte with [address, address + size).
  static bool any_mapped(const Reservation& reservation, uintptr_t address, size_t size);
  // Whether mappings cover [address, address + size) without a gap.
  static bool covered(const Reservation& reservation, uintptr_t address, size_t size);
  // The mappings that make up [address, address + size) exactly, first and past the last.
  using MappingRange = std::pair<std::map<uintptr_t, Mapping>::iterator,
                                 std::map<uintptr_t, Mapping>::iterator>;
  static Expected<MappingRange> whole_mappings(Reservation& reservation, uintptr_t address,
                                               size_t size);

  mutable std::mutex mutex_;
  std::map<uint64_t, Handle> handles_;
  std::map<uintptr_t, Reservation> reservations_;  // by base address
};

VirtualMemory& virtual_memory();

}  // namespace xcuda::runtime
