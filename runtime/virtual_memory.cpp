#include "runtime/virtual_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <string_view>

#include <spdlog/fmt/fmt.h>

#include "runtime/memory.h"

namespace xcuda::runtime {
namespace {

// The memfd's name carries its device, so that an imported descriptor, perhaps from another
// process, still says which device it belongs to.
constexpr std::string_view memfd_prefix = "xcuda-device-";

Error system_error(ErrorCode code, std::string_view what) {
  return make_error(code, fmt::format("{}: {}", what, std::strerror(errno)));
}

// The device of an xcuda memfd, from /proc/self/fd/N's link ("/memfd:NAME (deleted)").
Expected<int> memfd_device(int descriptor) {
  char link[256] = {};
  std::string path = fmt::format("/proc/self/fd/{}", descriptor);
  ssize_t length = readlink(path.c_str(), link, sizeof link - 1);
  std::string_view target(link, length > 0 ? static_cast<size_t>(length) : 0);
  constexpr std::string_view memfd_link = "/memfd:";
  if (!target.starts_with(memfd_link) || !target.substr(memfd_link.size()).starts_with(memfd_prefix))
    return make_error(ErrorCode::unknown,
                      fmt::format("descriptor {} is not xcuda device memory", descriptor));
  std::string_view number = target.substr(memfd_link.size() + memfd_prefix.size());
  int device = -1;
  auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), device);
  if (error != std::errc{} || device < 0)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("descriptor {} names no device", descriptor));
  return device;
}

// Gives [address, address + size) back to its reservation: inaccessible, no memory behind it.
bool reserve_fixed(uintptr_t address, size_t size) {
  void* result = mmap(reinterpret_cast<void*>(address), size, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  return result != MAP_FAILED;
}

int protection(unsigned flags) {
  // CU_MEM_ACCESS_FLAGS_PROT_READ = 1, _READWRITE = 3
  if (flags == 3) return PROT_READ | PROT_WRITE;
  if (flags == 1) return PROT_READ;
  return PROT_NONE;
}

}  // namespace

struct VirtualMemory::Physical {
  int descriptor = -1;
  PhysicalMemoryDescription description;

  Physical() = default;
  Physical(const Physical&) = delete;
  Physical& operator=(const Physical&) = delete;
  ~Physical() {
    if (descriptor >= 0) close(descriptor);
  }
};

Expected<uint64_t> VirtualMemory::create(int device, size_t size, unsigned handle_types) {
  auto memory = std::make_shared<Physical>();
  std::string name = fmt::format("{}{}", memfd_prefix, device);
  memory->descriptor = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (memory->descriptor < 0) return system_error(ErrorCode::out_of_memory, "memfd_create");
  if (ftruncate(memory->descriptor, static_cast<off_t>(size)) != 0)
    return system_error(ErrorCode::out_of_memory,
                        fmt::format("sizing physical memory to {} bytes", size));
  memory->description = {device, size, handle_types};
  return adopt(std::move(memory));
}

Expected<uint64_t> VirtualMemory::import_descriptor(int descriptor) {
  Expected<int> device = memfd_device(descriptor);
  if (!device) return device.error();
  struct stat status {};
  if (fstat(descriptor, &status) != 0) return system_error(ErrorCode::unknown, "fstat");
  auto memory = std::make_shared<Physical>();
  memory->descriptor = fcntl(descriptor, F_DUPFD_CLOEXEC, 0);
  if (memory->descriptor < 0) return system_error(ErrorCode::out_of_memory, "dup");
  // NVIDIA's driver reports no handle types for imported memory.
  memory->description = {*device, static_cast<size_t>(status.st_size), 0};
  return adopt(std::move(memory));
}

Expected<uint64_t> VirtualMemory::adopt(std::shared_ptr<Physical> memory) {
  // The object's address is unique while it lives, and never a small number a caller might
  // invent.
  uint64_t handle = reinterpret_cast<uintptr_t>(memory.get());
  std::lock_guard lock(mutex_);
  handles_[handle] = {std::move(memory), 1};
  return handle;
}

Status VirtualMemory::release(uint64_t handle) {
  std::lock_guard lock(mutex_);
  auto found = handles_.find(handle);
  if (found == handles_.end())
    return make_error(ErrorCode::invalid_value, fmt::format("{:#x} is not a live handle", handle));
  // Mappings hold the memory too: it is freed with the last of them.
  if (--found->second.references == 0) handles_.erase(found);
  return {};
}

Expected<PhysicalMemoryDescription> VirtualMemory::describe(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  if (auto found = handles_.find(handle); found != handles_.end())
    return found->second.memory->description;
  // A released handle still describes its memory while that is mapped, as on NVIDIA's driver.
  for (const auto& [base, reservation] : reservations_)
    for (const auto& [address, mapping] : reservation.mappings)
      if (reinterpret_cast<uintptr_t>(mapping.memory.get()) == handle)
        return mapping.memory->description;
  return make_error(ErrorCode::invalid_value, fmt::format("{:#x} is not a live handle", handle));
}

Expected<int> VirtualMemory::export_descriptor(uint64_t handle) const {
  std::lock_guard lock(mutex_);
  auto found = handles_.find(handle);
  if (found == handles_.end())
    return make_error(ErrorCode::invalid_value, fmt::format("{:#x} is not a live handle", handle));
  const Physical& memory = *found->second.memory;
  if (!(memory.description.handle_types & 1))
    return make_error(ErrorCode::invalid_value,
                      "the allocation was not created with CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR");
  int descriptor = fcntl(memory.descriptor, F_DUPFD_CLOEXEC, 0);
  if (descriptor < 0) return system_error(ErrorCode::out_of_memory, "dup");
  return descriptor;
}

Expected<uint64_t> VirtualMemory::retain(uintptr_t address) {
  std::lock_guard lock(mutex_);
  const Mapping* mapping = mapping_containing(address);
  if (!mapping)
    return make_error(ErrorCode::invalid_value, fmt::format("{:#x} is not mapped", address));
  uint64_t handle = reinterpret_cast<uintptr_t>(mapping->memory.get());
  Handle& entry = handles_[handle];
  entry.memory = mapping->memory;
  ++entry.references;
  return handle;
}

Expected<uintptr_t> VirtualMemory::reserve(size_t size, size_t alignment, uintptr_t hint) {
  alignment = std::max(alignment, granularity);
  constexpr int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  uintptr_t base = 0;
  // The hint is honoured where it is aligned and free; otherwise it is only a hint.
  if (hint && hint % alignment == 0) {
    void* at = mmap(reinterpret_cast<void*>(hint), size, PROT_NONE, flags | MAP_FIXED_NOREPLACE,
                    -1, 0);
    // Kernels before 4.17 take MAP_FIXED_NOREPLACE for a plain hint and may map elsewhere.
    if (at == reinterpret_cast<void*>(hint))
      base = hint;
    else if (at != MAP_FAILED)
      munmap(at, size);
  }
  if (!base) {
    if (size > SIZE_MAX - alignment)
      return make_error(ErrorCode::out_of_memory, fmt::format("cannot reserve {} bytes", size));
    // Over-reserve and trim to the alignment.
    void* wide = mmap(nullptr, size + alignment, PROT_NONE, flags, -1, 0);
    if (wide == MAP_FAILED)
      return system_error(ErrorCode::out_of_memory, fmt::format("reserving {} bytes", size));
    uintptr_t start = reinterpret_cast<uintptr_t>(wide);
    base = (start + alignment - 1) / alignment * alignment;
    if (base > start) munmap(wide, base - start);
    if (uintptr_t end = start + size + alignment; end > base + size)
      munmap(reinterpret_cast<void*>(base + size), end - base - size);
  }
  std::lock_guard lock(mutex_);
  reservations_[base] = {size, {}};
  return base;
}

Status VirtualMemory::free_reservation(uintptr_t base, size_t size) {
  std::lock_guard lock(mutex_);
  auto found = reservations_.find(base);
  if (found == reservations_.end() || found->second.size != size)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) is not a whole reservation", base, size));
  if (!found->second.mappings.empty())
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) still has memory mapped", base, size));
  munmap(reinterpret_cast<void*>(base), size);
  reservations_.erase(found);
  return {};
}

VirtualMemory::Reservation* VirtualMemory::reservation_containing(uintptr_t address,
                                                                  size_t size) {
  auto after = reservations_.upper_bound(address);
  if (after == reservations_.begin()) return nullptr;
  auto& [base, reservation] = *std::prev(after);
  if (address - base >= reservation.size || size > reservation.size - (address - base))
    return nullptr;
  return &reservation;
}

const VirtualMemory::Mapping* VirtualMemory::mapping_containing(uintptr_t address) const {
  return const_cast<VirtualMemory*>(this)->mapping_containing(address);
}

VirtualMemory::Mapping* VirtualMemory::mapping_containing(uintptr_t address) {
  Reservation* reservation = reservation_containing(address, 1);
  if (!reservation) return nullptr;
  auto after = reservation->mappings.upper_bound(address);
  if (after == reservation->mappings.begin()) return nullptr;
  auto& [base, mapping] = *std::prev(after);
  return address - base < mapping.size ? &mapping : nullptr;
}

bool VirtualMemory::any_mapped(const Reservation& reservation, uintptr_t address, size_t size) {
  auto next = reservation.mappings.lower_bound(address);
  return (next != reservation.mappings.end() && next->first < address + size) ||
         (next != reservation.mappings.begin() &&
          std::prev(next)->first + std::prev(next)->second.size > address);
}

bool VirtualMemory::covered(const Reservation& reservation, uintptr_t address, size_t size) {
  auto after = reservation.mappings.upper_bound(address);
  if (after == reservation.mappings.begin()) return false;
  uintptr_t end = address + size;
  for (auto at = std::prev(after); at != reservation.mappings.end() && address < end; ++at) {
    if (at->first > address || at->first + at->second.size <= address) return false;
    address = at->first + at->second.size;
  }
  return address >= end;
}

Status VirtualMemory::map(uintptr_t address, size_t size, size_t offset, uint64_t handle) {
  std::lock_guard lock(mutex_);
  auto found = handles_.find(handle);
  if (found == handles_.end())
    return make_error(ErrorCode::invalid_handle, fmt::format("{:#x} is not a live handle", handle));
  const std::shared_ptr<Physical>& memory = found->second.memory;
  if (offset > memory->description.size || size > memory->description.size - offset)
    return make_error(ErrorCode::not_supported,
                      fmt::format("[{}, +{}) is not inside the {} bytes of the allocation", offset,
                                  size, memory->description.size));
  Reservation* reservation = reservation_containing(address, size);
  if (!reservation)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) is not inside a reservation", address, size));
  if (any_mapped(*reservation, address, size))
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) is already mapped in part", address, size));
  void* result = mmap(reinterpret_cast<void*>(address), size, PROT_NONE, MAP_SHARED | MAP_FIXED,
                      memory->descriptor, static_cast<off_t>(offset));
  if (result == MAP_FAILED) return system_error(ErrorCode::out_of_memory, "mapping memory");
  reservation->mappings[address] = {size, memory, {}};
  return {};
}

Expected<VirtualMemory::MappingRange> VirtualMemory::whole_mappings(Reservation& reservation,
                                                                  uintptr_t address,
                                                                  size_t size) {
  auto first = reservation.mappings.find(address);
  auto last = reservation.mappings.lower_bound(address + size);
  if (first == reservation.mappings.end() || !covered(reservation, address, size) ||
      std::prev(last)->first + std::prev(last)->second.size != address + size)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) is not made of whole mappings", address, size));
  return MappingRange{first, last};
}

Status VirtualMemory::unmap(uintptr_t address, size_t size) {
  std::lock_guard lock(mutex_);
  Reservation* reservation = reservation_containing(address, size);
  if (!reservation)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) is not inside a reservation", address, size));
  // Nothing mapped there: NVIDIA's driver answers success too.
  if (!any_mapped(*reservation, address, size)) return {};
  auto range = whole_mappings(*reservation, address, size);
  if (!range) return range.error();
  auto [first, last] = *range;
  if (!reserve_fixed(address, size)) return system_error(ErrorCode::unknown, "unmapping memory");
  for (auto at = first; at != last; ++at) memory_registry().remove(at->first);
  reservation->mappings.erase(first, last);
  return {};
}

Status VirtualMemory::set_access(uintptr_t address, size_t size,
                                 std::span<const AccessGrant> grants, Context* context) {
  std::lock_guard lock(mutex_);
  Reservation* reservation = reservation_containing(address, size);
  if (!reservation)
    return make_error(ErrorCode::invalid_value,
                      fmt::format("[{:#x}, +{}) is not inside a reservation", address, size));
  auto range = whole_mappings(*reservation, address, size);
  if (!range) return range.error();
  for (auto at = range->first; at != range->second; ++at) {
    auto& [base, mapping] = *at;
    for (const AccessGrant& grant : grants) mapping.access[grant.device] = grant.flags;
    // Every device is the CPU here, so the mapping's protection is the widest any device has.
    unsigned widest = 0;
    for (const auto& [device, flags] : mapping.access) widest |= flags;
    if (mprotect(reinterpret_cast<void*>(base), mapping.size, protection(widest)) != 0)
      return system_error(ErrorCode::unknown, "changing access");
    memory_registry().remove(base);
    if (widest) {
      Allocation allocation{base, mapping.size, MemoryKind::device, context, false};
      memory_registry().add(std::move(allocation));
    }
  }
  return {};
}

Expected<unsigned> VirtualMemory::access(uintptr_t address, int device) const {
  std::lock_guard lock(mutex_);
  const Mapping* mapping = mapping_containing(address);
  if (!mapping)
    return make_error(ErrorCode::invalid_value, fmt::format("{:#x} is not mapped", address));
  auto found = mapping->access.find(device);
  return found == mapping->access.end() ? 0u : found->second;
}

VirtualMemory& virtual_memory() {
  static auto& instance = *new VirtualMemory;
  return instance;
}

}  // namespace xcuda::runtime
