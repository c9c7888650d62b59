// The answer static cudart expects from the integrity-check export table: a keyed digest of
// facts about the process and its devices, which cudart recomputes and compares before it will
// run anything (measured: a wrong answer makes every call fail with
// cudaErrorSoftwareValidityNotEstablished).
//
// The construction, established by earlier clean-room work and confirmed here by cudart 13.0
// accepting our answers, is HMAC (RFC 2104) over MD2 (RFC 1319) with a fixed 16-byte key; the
// message is the record below followed by one DeviceRecord per device.
#pragma once

#include <cstdint>
#include <span>

namespace xcuda::api {

struct IntegrityRecord {
  uint32_t driver_version;
  uint32_t runtime_version;  // the version argument cudart passed
  uint32_t process_id;
  uint32_t thread_id;
  const void* cudart_interface_table;
  const void* integrity_table;
  const void* integrity_function;
  uint64_t timestamp;  // the seconds argument cudart passed
};
static_assert(sizeof(IntegrityRecord) == 48);

#pragma pack(push, 1)
struct IntegrityDeviceRecord {
  uint8_t uuid[16];
  uint32_t pci_domain;
  uint32_t pci_bus;
  uint32_t pci_device;
};
#pragma pack(pop)
static_assert(sizeof(IntegrityDeviceRecord) == 28);

struct Digest {
  uint8_t bytes[16];
};

Digest md2(std::span<const uint8_t> message);

// The value cudart checks. Runtime versions ending in 0 and 1 expect fixed answers; the others
// the keyed digest.
Digest integrity_digest(const IntegrityRecord& record,
                        std::span<const IntegrityDeviceRecord> devices);

}  // namespace xcuda::api
