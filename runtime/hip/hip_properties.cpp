#include "runtime/hip/hip_properties.h"

#include <cstring>
#include <vector>

#include "runtime/hip/hip_errors.h"

namespace xcuda::runtime::hip {
namespace {

// hipDeviceAttribute_t values, the same from ROCm 5 to 7.
enum HipAttribute : int {
  clock_rate = 5,
  concurrent_kernels = 8,
  cooperative_launch = 10,
  integrated = 16,
  l2_cache_size = 19,
  managed_memory = 24,
  max_blocks_per_multiprocessor = 25,
  max_block_dim_x = 26,
  max_block_dim_y = 27,
  max_block_dim_z = 28,
  max_grid_dim_x = 29,
  max_grid_dim_y = 30,
  max_grid_dim_z = 31,
  max_threads_per_block = 56,
  max_threads_per_multiprocessor = 57,
  memory_bus_width = 59,
  memory_clock_rate = 60,
  multiprocessor_count = 63,
  pci_bus_id = 67,
  pci_device_id = 68,
  pci_domain_id = 69,
  max_registers_per_block = 71,
  max_registers_per_multiprocessor = 72,
  max_shared_memory_per_block = 74,
  shared_memory_per_block_optin = 75,
  shared_memory_per_multiprocessor = 76,
  total_constant_memory = 83,
  unified_addressing = 85,
  warp_size = 87,
};

struct IntegerAttribute {
  HipAttribute attribute;
  int DeviceProperties::*member;
};

constexpr IntegerAttribute integer_attributes[] = {
    {clock_rate, &DeviceProperties::clock_rate_khz},
    {l2_cache_size, &DeviceProperties::l2_cache_bytes},
    {max_blocks_per_multiprocessor, &DeviceProperties::max_blocks_per_multiprocessor},
    {max_threads_per_block, &DeviceProperties::max_threads_per_block},
    {max_threads_per_multiprocessor, &DeviceProperties::max_threads_per_multiprocessor},
    {memory_bus_width, &DeviceProperties::memory_bus_width},
    {memory_clock_rate, &DeviceProperties::memory_clock_rate_khz},
    {multiprocessor_count, &DeviceProperties::multiprocessor_count},
    {pci_bus_id, &DeviceProperties::pci_bus_id},
    {pci_device_id, &DeviceProperties::pci_device_id},
    {pci_domain_id, &DeviceProperties::pci_domain_id},
    {max_registers_per_block, &DeviceProperties::registers_per_block},
    {max_registers_per_multiprocessor, &DeviceProperties::registers_per_multiprocessor},
    {max_shared_memory_per_block, &DeviceProperties::shared_memory_per_block},
    {shared_memory_per_block_optin, &DeviceProperties::shared_memory_per_block_optin},
    {shared_memory_per_multiprocessor, &DeviceProperties::shared_memory_per_multiprocessor},
    {total_constant_memory, &DeviceProperties::total_constant_memory},
};

struct FlagAttribute {
  HipAttribute attribute;
  bool DeviceProperties::*member;
};

constexpr FlagAttribute flag_attributes[] = {
    {concurrent_kernels, &DeviceProperties::concurrent_kernels},
    {cooperative_launch, &DeviceProperties::cooperative_launch},
    {integrated, &DeviceProperties::integrated},
    {managed_memory, &DeviceProperties::managed_memory},
    {unified_addressing, &DeviceProperties::unified_addressing},
};

constexpr HipAttribute block_dimensions[] = {max_block_dim_x, max_block_dim_y, max_block_dim_z};
constexpr HipAttribute grid_dimensions[] = {max_grid_dim_x, max_grid_dim_y, max_grid_dim_z};

// Large enough for every hipDeviceProp_t layout HIP has had (about 1.5 KiB in ROCm 6).
constexpr size_t properties_buffer_bytes = 4096;
constexpr size_t architecture_name_bytes = 256;

class AttributeReader {
 public:
  AttributeReader(const HipFunctions& functions, int device)
      : functions_(functions), device_(device) {}

  // Leaves `value` alone when HIP does not answer.
  void read(HipAttribute attribute, int& value) const {
    int answer = 0;
    if (functions_.device_get_attribute(&answer, attribute, device_) == hip_success) value = answer;
  }

  void read(HipAttribute attribute, bool& value) const {
    int answer = value;
    read(attribute, answer);
    value = answer != 0;
  }

 private:
  const HipFunctions& functions_;
  int device_;
};

Expected<std::string> architecture_name(const HipFunctions& functions, int device) {
  std::vector<char> properties(properties_buffer_bytes, 0);
  if (Status status =
          check_hip(functions, functions.get_device_properties(properties.data(), device),
                    "hipGetDeviceProperties");
      !status)
    return status.error();
  const char* name = properties.data() + functions.architecture_name_offset;
  return std::string(name, strnlen(name, architecture_name_bytes));
}

}  // namespace

std::string_view processor_of(std::string_view architecture_name) {
  return architecture_name.substr(0, architecture_name.find(':'));
}

Expected<HipDeviceDescription> describe_hip_device(const HipFunctions& functions, int device,
                                                   int compute_major, int compute_minor) {
  HipDeviceDescription description;
  DeviceProperties& properties = description.properties;
  char name[256] = {};
  if (Status status = check_hip(functions, functions.device_get_name(name, sizeof name, device),
                                "hipDeviceGetName");
      !status)
    return status.error();
  properties.name = std::string(name, strnlen(name, sizeof name));
  size_t total_memory = 0;
  if (Status status = check_hip(functions, functions.device_total_mem(&total_memory, device),
                                "hipDeviceTotalMem");
      !status)
    return status.error();
  properties.total_memory = total_memory;
  Expected<std::string> architecture = architecture_name(functions, device);
  if (!architecture) return architecture.error();
  description.architecture_name = std::move(*architecture);
  // A UUID is optional in CUDA too; a device without one reports zeros.
  (void)functions.device_get_uuid(properties.uuid, device);

  // Unset, so that a HIP without the opt-in attribute ends up with the per-block limit below
  // rather than an NVIDIA GPU's default.
  properties.shared_memory_per_block_optin = 0;
  AttributeReader reader(functions, device);
  for (const IntegerAttribute& entry : integer_attributes)
    reader.read(entry.attribute, properties.*entry.member);
  for (const FlagAttribute& entry : flag_attributes)
    reader.read(entry.attribute, properties.*entry.member);
  for (int axis = 0; axis < 3; ++axis) {
    reader.read(block_dimensions[axis], properties.max_block_dim[axis]);
    reader.read(grid_dimensions[axis], properties.max_grid_dim[axis]);
  }
  reader.read(warp_size, description.wavefront_size);
  // Where HIP knows no opt-in limit above the default, the default is the limit.
  if (properties.shared_memory_per_block_optin < properties.shared_memory_per_block)
    properties.shared_memory_per_block_optin = properties.shared_memory_per_block;
  properties.compute_major = compute_major;
  properties.compute_minor = compute_minor;
  // The warp CUDA code sees: 32 lanes, emulated inside a 64-wide wavefront on CDNA.
  properties.warp_size = 32;
  return description;
}

}  // namespace xcuda::runtime::hip
