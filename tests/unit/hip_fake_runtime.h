// A HIP runtime in miniature for the HIP backend's tests: devices whose memory is host memory and
// whose streams do their work at once, recording every call so tests can check what the backend
// asked HIP to do. Plain function pointers cannot carry state, so there is one fake per process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/hip/hip_library.h"

namespace xcuda::runtime::hip::fake {

// The images hipModuleLoadData accepts, this or an AMDGPU ELF; anything else is an invalid image.
inline const std::string code_object = "fake AMDGPU code object";
constexpr uint16_t elf_machine_amdgpu = 224;  // EM_AMDGPU
// The one kernel and the one global the fake module defines.
inline const std::string kernel_name = "scale";
inline const std::string global_name = "table";

struct FakeDevice {
  std::string name;
  std::string architecture_name;
  size_t total_memory = 0;
  std::map<int, int> attributes;  // attributes missing here are refused
};

// The arguments the fake kernel's code object lists, in bytes: its two parameters (8 and 4) and
// the grid-workspace word of a module that reads %envreg. hipModuleLaunchCooperativeKernel reads
// one pointer per argument, as HIP does by the metadata.
inline const std::vector<size_t> kernel_argument_sizes = {8, 4, 8};

struct Launch {
  unsigned grid[3] = {};
  unsigned block[3] = {};
  unsigned shared_bytes = 0;
  bool cooperative = false;
  // The `extra` buffer of an ordinary launch; each argument in turn of a cooperative one.
  std::vector<uint8_t> parameters;
  std::vector<std::vector<uint8_t>> arguments;
};

struct Copy2D {
  size_t destination_pitch = 0, source_pitch = 0, width = 0, height = 0;
};

struct OccupancyQuery {
  int block_size = 0;
  size_t dynamic_shared_bytes = 0;
};

// What an AMDGPU ELF's header says it was built for.
struct ElfHeader {
  uint16_t machine = 0;
  uint32_t flags = 0;       // EF_AMDGPU_MACH_* in the low byte
  uint8_t abi_version = 0;  // 2 for code object v4, 3 for v5
};

struct FakeHip {
  int runtime_version = 60000000;  // hipRuntimeGetVersion: ROCm 6.0
  int init_result = hip_success;
  int malloc_result = hip_success;
  int memcpy_result = hip_success;  // of hipMemcpy, the synchronous one
  int memset_result = hip_success;
  int launch_result = hip_success;
  int blocks_per_compute_unit = 4;  // what hipModuleOccupancyMaxActiveBlocksPerMultiprocessor says
  std::vector<FakeDevice> devices;
  int current_device = 0;
  std::vector<std::string> calls;       // "hipMalloc 1" and the like: name and current device
  std::map<void*, size_t> allocations;  // hipMalloc fills them with garbage_byte, as HIP may
  std::vector<Launch> launches;
  std::vector<Copy2D> copies_2d;
  std::vector<OccupancyQuery> occupancy_queries;
  std::vector<ElfHeader> elf_headers;  // of every ELF hipModuleLoadData took, in order
  uint8_t global_storage[16] = {};
};

// What fresh allocations hold, so that tests see what the backend zeroes.
constexpr uint8_t garbage_byte = 0xa5;

// Two devices: 0 a CDNA gfx90a (wave64), 1 an RDNA gfx1100 (wave32). Clears every record.
FakeHip& reset_fake_hip();
FakeHip& fake_hip();

// Every entry point, or as ROCm 5.2 has them: hipStreamAddCallback instead of hipLaunchHostFunc,
// and no hipModuleLaunchCooperativeKernel.
HipFunctions fake_hip_functions(bool rocm_6 = true);

bool was_called(const std::string& call);

}  // namespace xcuda::runtime::hip::fake
