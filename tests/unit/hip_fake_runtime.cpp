#include "hip_fake_runtime.h"

#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace xcuda::runtime::hip::fake {
namespace {

// Where the fake's hipGetDevicePropertiesR0600 writes gcnArchName, as ROCm 6 does.
constexpr size_t architecture_name_offset = 1160;

FakeHip state;
int stream_tag = 0;  // streams and events are distinct non-null pointers into this
int event_tag = 0;
int module_tag = 0;
int kernel_tag = 0;

int note(const std::string& name, int result = hip_success) {
  state.calls.push_back(name + " " + std::to_string(state.current_device));
  return result;
}

bool known_device(int device) {
  return device >= 0 && static_cast<size_t>(device) < state.devices.size();
}

int init(unsigned) { return note("hipInit", state.init_result); }

int get_device_count(int* count) {
  *count = state.init_result == hip_success ? static_cast<int>(state.devices.size()) : 0;
  return note("hipGetDeviceCount", *count ? hip_success : hip_error_no_device);
}

int runtime_get_version(int* version) {
  *version = state.runtime_version;
  return hip_success;
}

const char* get_error_name(int error) {
  return error == hip_error_out_of_memory ? "hipErrorOutOfMemory" : "hipErrorFake";
}

int set_device(int device) {
  if (!known_device(device)) return hip_error_invalid_device;
  state.current_device = device;
  return hip_success;
}

int device_get_attribute(int* value, int attribute, int device) {
  if (!known_device(device)) return hip_error_invalid_device;
  const auto& attributes = state.devices[static_cast<size_t>(device)].attributes;
  auto found = attributes.find(attribute);
  if (found == attributes.end()) return hip_error_invalid_value;
  *value = found->second;
  return hip_success;
}

int device_get_name(char* name, int length, int device) {
  if (!known_device(device)) return hip_error_invalid_device;
  std::snprintf(name, static_cast<size_t>(length), "%s",
                state.devices[static_cast<size_t>(device)].name.c_str());
  return hip_success;
}

int device_total_mem(size_t* bytes, int device) {
  if (!known_device(device)) return hip_error_invalid_device;
  *bytes = state.devices[static_cast<size_t>(device)].total_memory;
  return hip_success;
}

int device_get_uuid(uint8_t* uuid, int device) {
  if (!known_device(device)) return hip_error_invalid_device;
  std::memset(uuid, 0x10 + device, 16);
  return hip_success;
}

int get_device_properties(void* properties, int device) {
  if (!known_device(device)) return hip_error_invalid_device;
  const std::string& name = state.devices[static_cast<size_t>(device)].architecture_name;
  std::memcpy(static_cast<char*>(properties) + architecture_name_offset, name.c_str(),
              name.size() + 1);
  return hip_success;
}

int allocate(void** pointer, size_t bytes) {
  if (state.malloc_result != hip_success) return note("hipMalloc", state.malloc_result);
  *pointer = std::malloc(bytes);
  std::memset(*pointer, garbage_byte, bytes);
  state.allocations.emplace(*pointer, bytes);
  return note("hipMalloc");
}

int release(void* pointer) {
  auto found = state.allocations.find(pointer);
  if (found == state.allocations.end()) return note("hipFree", hip_error_invalid_value);
  state.allocations.erase(found);
  std::free(pointer);
  return note("hipFree");
}

int memcpy_async(void* destination, const void* source, size_t bytes, int kind, HipStream) {
  if (kind != hip_memcpy_default) return note("hipMemcpyAsync", hip_error_invalid_value);
  std::memmove(destination, source, bytes);
  return note("hipMemcpyAsync");
}

int memcpy_sync(void* destination, const void* source, size_t bytes, int kind) {
  if (kind != hip_memcpy_default) return note("hipMemcpy", hip_error_invalid_value);
  if (state.memcpy_result != hip_success) return note("hipMemcpy", state.memcpy_result);
  std::memmove(destination, source, bytes);
  return note("hipMemcpy");
}

int memset_sync(void* destination, int value, size_t bytes) {
  if (state.memset_result != hip_success) return note("hipMemset", state.memset_result);
  std::memset(destination, value, bytes);
  return note("hipMemset");
}

int memcpy_2d_async(void* destination, size_t destination_pitch, const void* source,
                    size_t source_pitch, size_t width, size_t height, int kind, HipStream) {
  if (kind != hip_memcpy_default || width > destination_pitch || width > source_pitch)
    return note("hipMemcpy2DAsync", hip_error_invalid_value);
  for (size_t row = 0; row < height; ++row)
    std::memmove(static_cast<char*>(destination) + row * destination_pitch,
                 static_cast<const char*>(source) + row * source_pitch, width);
  state.copies_2d.push_back({destination_pitch, source_pitch, width, height});
  return note("hipMemcpy2DAsync");
}

template <class T>
int fill(void* destination, T value, size_t count, const char* name) {
  for (size_t i = 0; i < count; ++i)
    std::memcpy(static_cast<char*>(destination) + i * sizeof(T), &value, sizeof(T));
  return note(name);
}

int memset_d8(void* destination, unsigned char value, size_t count, HipStream) {
  return fill(destination, value, count, "hipMemsetD8Async");
}
int memset_d16(void* destination, unsigned short value, size_t count, HipStream) {
  return fill(destination, value, count, "hipMemsetD16Async");
}
int memset_d32(void* destination, int value, size_t count, HipStream) {
  return fill(destination, value, count, "hipMemsetD32Async");
}

int stream_create(HipStream* stream, unsigned flags) {
  if (flags != hip_stream_non_blocking)
    return note("hipStreamCreateWithFlags", hip_error_invalid_value);
  *stream = &stream_tag;
  return note("hipStreamCreateWithFlags");
}
int stream_destroy(HipStream) { return note("hipStreamDestroy"); }
int stream_synchronize(HipStream) { return note("hipStreamSynchronize"); }
int stream_query(HipStream) { return hip_success; }
int stream_wait_event(HipStream, HipEvent event, unsigned) {
  return note("hipStreamWaitEvent", event == &event_tag ? hip_success : hip_error_invalid_handle);
}
int event_create(HipEvent* event, unsigned) {
  *event = &event_tag;
  return note("hipEventCreateWithFlags");
}
int event_record(HipEvent, HipStream) { return note("hipEventRecord"); }
int event_destroy(HipEvent) { return note("hipEventDestroy"); }

int launch_host_func(HipStream, void (*function)(void*), void* user_data) {
  function(user_data);
  return note("hipLaunchHostFunc");
}
int stream_add_callback(HipStream stream, void (*callback)(HipStream, int, void*), void* user_data,
                        unsigned) {
  callback(stream, hip_success, user_data);
  return note("hipStreamAddCallback");
}

// Reads no further than the ELF header, and that only behind ELF's magic: hipModuleLoadData
// gets no size, and the fake code object is shorter than a header.
bool record_amdgpu_elf(const void* image) {
  if (std::memcmp(image, ELFMAG, SELFMAG) != 0) return false;
  Elf64_Ehdr header;
  std::memcpy(&header, image, sizeof header);
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_machine != elf_machine_amdgpu)
    return false;
  state.elf_headers.push_back({header.e_machine, header.e_flags, header.e_ident[EI_ABIVERSION]});
  return true;
}

int module_load_data(HipModule* module, const void* image) {
  if (!record_amdgpu_elf(image) &&
      std::memcmp(image, code_object.c_str(), code_object.size() + 1) != 0)
    return note("hipModuleLoadData", hip_error_invalid_image);
  *module = &module_tag;
  return note("hipModuleLoadData");
}
int module_unload(HipModule) { return note("hipModuleUnload"); }
int module_get_function(HipFunction* function, HipModule, const char* name) {
  if (name != kernel_name) return note("hipModuleGetFunction", hip_error_not_found);
  *function = &kernel_tag;
  return note("hipModuleGetFunction");
}
int module_get_global(void** address, size_t* bytes, HipModule, const char* name) {
  if (name != global_name) return note("hipModuleGetGlobal", hip_error_not_found);
  *address = state.global_storage;
  *bytes = sizeof state.global_storage;
  return note("hipModuleGetGlobal");
}

// Reads the parameters the way HIP does: only from `extra`, in its tagged form.
int module_launch_kernel(HipFunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                         unsigned block_x, unsigned block_y, unsigned block_z,
                         unsigned shared_bytes, HipStream, void** parameters, void** extra) {
  if (function != &kernel_tag || parameters || !extra ||
      extra[0] != hip_launch_parameter_buffer_pointer ||
      extra[2] != hip_launch_parameter_buffer_size || extra[4] != hip_launch_parameter_end)
    return note("hipModuleLaunchKernel", hip_error_invalid_value);
  if (state.launch_result != hip_success) return note("hipModuleLaunchKernel", state.launch_result);
  Launch launch{{grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_bytes, false, {}, {}};
  const auto* buffer = static_cast<const uint8_t*>(extra[1]);
  launch.parameters.assign(buffer, buffer + *static_cast<size_t*>(extra[3]));
  state.launches.push_back(std::move(launch));
  return note("hipModuleLaunchKernel");
}

int module_launch_cooperative_kernel(HipFunction function, unsigned grid_x, unsigned grid_y,
                                     unsigned grid_z, unsigned block_x, unsigned block_y,
                                     unsigned block_z, unsigned shared_bytes, HipStream,
                                     void** parameters) {
  if (function != &kernel_tag || !parameters)
    return note("hipModuleLaunchCooperativeKernel", hip_error_invalid_value);
  if (state.launch_result != hip_success)
    return note("hipModuleLaunchCooperativeKernel", state.launch_result);
  Launch launch{{grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_bytes, true, {}, {}};
  for (size_t index = 0; index < kernel_argument_sizes.size(); ++index) {
    const auto* argument = static_cast<const uint8_t*>(parameters[index]);
    launch.arguments.emplace_back(argument, argument + kernel_argument_sizes[index]);
  }
  state.launches.push_back(std::move(launch));
  return note("hipModuleLaunchCooperativeKernel");
}

int occupancy(int* blocks, HipFunction function, int block_size, size_t dynamic_shared_bytes) {
  if (function != &kernel_tag)
    return note("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", hip_error_invalid_value);
  state.occupancy_queries.push_back({block_size, dynamic_shared_bytes});
  *blocks = state.blocks_per_compute_unit;
  return note("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor");
}

}  // namespace

FakeHip& reset_fake_hip() {
  for (auto& [pointer, bytes] : state.allocations) std::free(pointer);
  state = FakeHip{};
  state.devices = {
      {"AMD Instinct MI210",
       "gfx90a:sramecc+:xnack-",
       size_t{64} << 30,
       {{63, 104}, {87, 64}, {5, 1700000}, {56, 1024}, {74, 65536}, {16, 0}, {19, 8 << 20}}},
      {"AMD Radeon RX 7900 XTX",
       "gfx1100",
       size_t{24} << 30,
       {{63, 48}, {87, 32}, {5, 2500000}, {56, 1024}, {74, 65536}}},
  };
  return state;
}

FakeHip& fake_hip() { return state; }

bool was_called(const std::string& call) {
  return std::find(state.calls.begin(), state.calls.end(), call) != state.calls.end();
}

HipFunctions fake_hip_functions(bool rocm_6) {
  HipFunctions functions;
  functions.init = init;
  functions.get_device_count = get_device_count;
  functions.runtime_get_version = runtime_get_version;
  functions.get_error_name = get_error_name;
  functions.set_device = set_device;
  functions.device_get_attribute = device_get_attribute;
  functions.device_get_name = device_get_name;
  functions.device_total_mem = device_total_mem;
  functions.device_get_uuid = device_get_uuid;
  functions.get_device_properties = get_device_properties;
  functions.architecture_name_offset = architecture_name_offset;
  functions.malloc = allocate;
  functions.free = release;
  functions.memcpy = memcpy_sync;
  functions.memset = memset_sync;
  functions.memcpy_async = memcpy_async;
  functions.memset_d8_async = memset_d8;
  functions.memset_d16_async = memset_d16;
  functions.memset_d32_async = memset_d32;
  functions.memcpy_2d_async = memcpy_2d_async;
  functions.stream_create_with_flags = stream_create;
  functions.stream_destroy = stream_destroy;
  functions.stream_synchronize = stream_synchronize;
  functions.stream_query = stream_query;
  functions.stream_wait_event = stream_wait_event;
  functions.event_create_with_flags = event_create;
  functions.event_record = event_record;
  functions.event_destroy = event_destroy;
  if (rocm_6) {
    functions.launch_host_func = launch_host_func;
    functions.module_launch_cooperative_kernel = module_launch_cooperative_kernel;
  } else {
    functions.stream_add_callback = stream_add_callback;
  }
  functions.module_load_data = module_load_data;
  functions.module_unload = module_unload;
  functions.module_get_function = module_get_function;
  functions.module_get_global = module_get_global;
  functions.module_launch_kernel = module_launch_kernel;
  functions.module_occupancy_max_active_blocks_per_multiprocessor = occupancy;
  return functions;
}

}  // namespace xcuda::runtime::hip::fake
