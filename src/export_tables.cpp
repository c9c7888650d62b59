// cuGetExportTable: the private tables NVIDIA's runtime (static cudart) asks the driver for,
// identified by UUID. Their layouts are undocumented. Each slot we answer is named below with
// how its behaviour was established; every other slot of a table we hand out is a function that
// logs "table, slot" and answers CUDA_ERROR_NOT_SUPPORTED, so a slot we missed shows up at once.
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string_view>
#include <vector>

#include "src/api.h"

#include "src/cudart_integrity.h"

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

// The tables whose first slot is their own size in bytes, as NVIDIA's driver lays them out
// (measured on driver 580.159.04 by reading the tables it returns).
template <int Table, size_t Slots>
constexpr std::array<Slot, Slots> sized_table() {
  auto slots = unknown_slots<Table>(std::make_index_sequence<Slots>());
  slots[0] = reinterpret_cast<Slot>(uintptr_t{Slots * sizeof(Slot)});
  return slots;
}

void trace_slot(const char* table, int slot) {
  runtime::logger().trace("export table {}: slot {}", table, slot);
}

// ---- cudart interface: 6bd5fb6c-5bf4-e74a-8987-d93912fd9df9 --------------------------------
// cudart's way into the driver for what the public API lacks: registering fatbins and
// retaining the primary context. 13 slots on NVIDIA's driver (size word 0x68). cudart 13.0
// registers its fatbins through cuLibraryLoadData and calls only slot 2 here (measured); the
// module slots follow the layout earlier clean-room work published, for older runtimes.

// Slot 1: load the module a fatbin wrapper describes.
CUresult module_from_wrapper(CUmodule* result, const void* wrapper) {
  trace_slot("cudart interface", 1);
  return cuModuleLoadData(result, wrapper);
}

// Slot 2: the primary context of a device, retained.
CUresult retain_primary_context(CUcontext* result, CUdevice device) {
  trace_slot("cudart interface", 2);
  return cuDevicePrimaryCtxRetain(result, device);
}

// Slot 6: slot 1 with two out-pointers and a flag word that stay unused here.
CUresult module_from_wrapper_extended(CUmodule* result, const void* wrapper, void*, void*,
                                      unsigned) {
  trace_slot("cudart interface", 6);
  return cuModuleLoadData(result, wrapper);
}

// Slot 7: one integer during start-up; success is the answer.
CUresult acknowledge(uintptr_t) {
  trace_slot("cudart interface", 7);
  return CUDA_SUCCESS;
}

// Slot 8: slot 6 with the fatbin itself first and the module second.
CUresult module_from_fatbin_extended(const void* fatbin, CUmodule* result, void*, void*,
                                     unsigned) {
  trace_slot("cudart interface", 8);
  return cuModuleLoadData(result, fatbin);
}

const auto cudart_interface = [] {
  auto slots = sized_table<1, 13>();
  slots[1] = reinterpret_cast<Slot>(&module_from_wrapper);
  slots[2] = reinterpret_cast<Slot>(&retain_primary_context);
  slots[6] = reinterpret_cast<Slot>(&module_from_wrapper_extended);
  slots[7] = reinterpret_cast<Slot>(&acknowledge);
  slots[8] = reinterpret_cast<Slot>(&module_from_fatbin_extended);
  return slots;
}();

// ---- tools hooks: a094798c-2e74-2e74-93f2-0800200c0a66 -------------------------------------
// Where profilers' callbacks would live; 7 slots (size word 0x38). cudart 13.0 calls slots 2
// and 6 right after it obtains the cudart interface and refuses to start without the table
// (measured). Slots 2 and 6 each hand out a block and its size that cudart then fills in;
// NVIDIA's driver hands out 1024 words and 14 bytes (measured). With no profiler attached,
// zeroed blocks mean "no hooks".
uintptr_t callback_hook_slots[1024];
uint8_t callback_hook_flags[14];

void hook_slots(uintptr_t** block, size_t* size) {
  trace_slot("tools hooks", 2);
  *block = callback_hook_slots;
  *size = std::size(callback_hook_slots);
}

void hook_flags(uint8_t** block, size_t* size) {
  trace_slot("tools hooks", 6);
  *block = callback_hook_flags;
  *size = std::size(callback_hook_flags);
}

const auto tools_hooks = [] {
  auto slots = sized_table<2, 7>();
  slots[2] = reinterpret_cast<Slot>(&hook_slots);
  slots[6] = reinterpret_cast<Slot>(&hook_flags);
  return slots;
}();

// ---- tools thread-local state: 42d85a81-23f6-cb47-8298-f6e78a3aecdc -------------------------
// 3 slots (size word 0x18). cudart 13.0 asks for it but calls nothing in it (measured).
const auto tools_thread_state = sized_table<3, 3>();

// ---- context-local storage: c693336e-1121-df11-a8c3-68f355d89593 ----------------------------
// cudart keeps its per-context state here. No size word: slot 0 is already a function on
// NVIDIA's driver (measured). Slot 2 (called first) looks a value up by key and must fail
// with CUDA_ERROR_INVALID_VALUE when there is none, after which cudart stores one with slot 0;
// slot 1 removes it at exit (all three measured). A null context means the current one.
runtime::Context* context_or_current(CUcontext handle, CUresult& status) {
  if (!handle) {
    // cudart asks before any context exists; that is an expected "no", not worth a log line.
    runtime::Context* current = runtime::current_context();
    status = current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
    return current;
  }
  if (!runtime::live_contexts().contains(handle)) {
    status = CUDA_ERROR_INVALID_CONTEXT;
    return nullptr;
  }
  status = CUDA_SUCCESS;
  return reinterpret_cast<runtime::Context*>(handle);
}

CUresult store_local(CUcontext handle, void* key, void* value,
                     void (*destructor)(CUcontext, void*, void*)) {
  trace_slot("context-local storage", 0);
  CUresult status;
  runtime::Context* context = context_or_current(handle, status);
  if (!context) return status;
  context->set_local(key, value,
                     reinterpret_cast<runtime::Context::LocalDestructor>(destructor));
  return CUDA_SUCCESS;
}

CUresult remove_local(CUcontext handle, void* key) {
  trace_slot("context-local storage", 1);
  CUresult status;
  runtime::Context* context = context_or_current(handle, status);
  if (!context) return status;
  context->remove_local(key);
  return CUDA_SUCCESS;
}

CUresult load_local(void** value, CUcontext handle, void* key) {
  trace_slot("context-local storage", 2);
  CUresult status;
  runtime::Context* context = context_or_current(handle, status);
  if (!context) return status;
  auto found = context->local(key);
  if (!found) return CUDA_ERROR_INVALID_VALUE;
  *value = *found;
  return CUDA_SUCCESS;
}

const auto context_local_storage = [] {
  auto slots = unknown_slots<4>(std::make_index_sequence<3>());
  slots[0] = reinterpret_cast<Slot>(&store_local);
  slots[1] = reinterpret_cast<Slot>(&remove_local);
  slots[2] = reinterpret_cast<Slot>(&load_local);
  return slots;
}();

// ---- integrity check: d4082055-bde6-704b-8d34-ba123c66e1f2 ----------------------------------
// 3 slots (size word 0x18). cudart 13.0 refuses to start without this table and calls slot 1
// three times, with runtime versions 13000, 13001 and 13002 and the time in seconds
// (measured). It recomputes the digest from what the driver reports and compares
// (cudart_integrity.h); our digest equals NVIDIA's driver's for the same inputs (measured on
// driver 580.159.04 for versions 12080, 12093 and 13000-13002).
CUresult integrity_check(unsigned runtime_version, uint64_t seconds, api::Digest* result);

const auto integrity_table = [] {
  auto slots = sized_table<5, 3>();
  slots[1] = reinterpret_cast<Slot>(&integrity_check);
  return slots;
}();

CUresult integrity_check(unsigned runtime_version, uint64_t seconds, api::Digest* result) {
  trace_slot("integrity check", 1);
  XCUDA_REQUIRE(result, CUDA_ERROR_INVALID_VALUE, "result is null");
  int device_count = 0;
  if (CUresult status = cuDeviceGetCount(&device_count); status != CUDA_SUCCESS) return status;
  std::vector<api::IntegrityDeviceRecord> devices(static_cast<size_t>(device_count));
  for (int device = 0; device < device_count; ++device) {
    api::IntegrityDeviceRecord& record = devices[static_cast<size_t>(device)];
    CUuuid uuid;
    int domain = 0, bus = 0, slot = 0;
    if (cuDeviceGetUuid_v2(&uuid, device) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device) != CUDA_SUCCESS)
      return api::fail(__func__, CUDA_ERROR_UNKNOWN, "cannot describe device for cudart");
    std::memcpy(record.uuid, uuid.bytes, sizeof record.uuid);
    record.pci_domain = uint32_t(domain);
    record.pci_bus = uint32_t(bus);
    record.pci_device = uint32_t(slot);
  }
  api::IntegrityRecord record{};
  record.driver_version = CUDA_VERSION;
  record.runtime_version = runtime_version;
  record.process_id = uint32_t(getpid());
  // The calling thread's pthread_t, truncated: gettid() gives a digest cudart rejects (measured).
  record.thread_id = uint32_t(reinterpret_cast<uintptr_t>(pthread_self()));
  record.cudart_interface_table = cudart_interface.data();
  record.integrity_table = integrity_table.data();
  record.integrity_function = reinterpret_cast<const void*>(&integrity_check);
  record.timestamp = seconds;
  *result = api::integrity_digest(record, devices);
  return CUDA_SUCCESS;
}

// ---- context checks: 263e8860-7cd2-6143-92f6-bbd5006dfa7e -----------------------------------
// 15 slots (size word 0x78). cudart 13.0 refuses to start without the table (measured:
// cudaMalloc then fails with cudaErrorSymbolNotFound) and calls slots 3 and 2.

// Slot 3, no arguments, during start-up: NVIDIA's driver answers 0 (measured).
unsigned no_context_problem() {
  trace_slot("context checks", 3);
  return 0;
}

// Slot 2, a context and two out-pointers: earlier clean-room work reads it as "is this context a
// wrapper around another one"; ours never are.
CUresult context_is_wrapped(CUcontext, unsigned* is_wrapped, CUcontext* unwrapped) {
  trace_slot("context checks", 2);
  if (is_wrapped) *is_wrapped = 0;
  (void)unwrapped;
  return CUDA_SUCCESS;
}

const auto context_checks = [] {
  auto slots = sized_table<6, 15>();
  slots[2] = reinterpret_cast<Slot>(&context_is_wrapped);
  slots[3] = reinterpret_cast<Slot>(&no_context_problem);
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
    {uuid({0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c,
           0x0a, 0x66}),
     tools_hooks.data(), "tools hooks"},
    {uuid({0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a,
           0xec, 0xdc}),
     tools_thread_state.data(), "tools thread state"},
    {uuid({0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8,
           0x95, 0x93}),
     context_local_storage.data(), "context-local storage"},
    {uuid({0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d,
           0xfa, 0x7e}),
     context_checks.data(), "context checks"},
    {uuid({0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66,
           0xe1, 0xf2}),
     integrity_table.data(), "integrity check"},
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
