// CUDA IPC of device memory between processes of one machine (cuIpcGetMemHandle,
// cuIpcOpenMemHandle, cuIpcCloseMemHandle). The exporting process's backend turns the
// allocation into a shared file in place (Backend::share); the handle names that file as
// /proc/<pid>/fd/<n>, which the importing process opens and maps. A file, unlike pidfd_getfd,
// needs no ptrace rights over the exporter, only the same user.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "runtime/memory.h"
#include "runtime/status.h"

namespace xcuda::runtime {

class Context;

// The 64 opaque bytes of a CUipcMemHandle.
using IpcMemoryHandle = std::array<char, 64>;

// A handle for the whole allocation containing `allocation.base`.
Expected<IpcMemoryHandle> export_ipc_memory(const Allocation& allocation);

class OpenedIpcMemory {
 public:
  // The address the handle's memory is mapped at in this process, registered as device memory
  // of `context`. Opening a handle already open maps nothing new: the address is counted
  // again. A handle this process exported answers invalid_context, as on NVIDIA's driver.
  Expected<uintptr_t> open(const IpcMemoryHandle& handle, Context* context);
  // Undoes one open of the memory at `address`.
  Status close(uintptr_t address);

 private:
  struct Opened {
    std::pair<int, uint64_t> source;  // exporting process and inode of its file
    size_t mapped_bytes = 0;
    unsigned references = 0;
  };

  std::mutex mutex_;
  std::map<uintptr_t, Opened> opened_;  // by address
};

OpenedIpcMemory& opened_ipc_memory();

}  // namespace xcuda::runtime
