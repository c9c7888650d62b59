// The one interface every execution target implements: the host CPU (runtime/host/) and AMD
// GPUs through HIP (runtime/hip/). Contexts, streams and modules above it are
// target-neutral; everything that touches a real device or machine code sits below it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ptx/compiler.h"
#include "runtime/device_properties.h"
#include "runtime/status.h"

namespace xcuda::runtime {

struct StridedCopy;
struct StridedFill;
struct TextureDescriptor;

// What NVIDIA's driver gives each thread as stack unless cuCtxSetLimit says otherwise.
inline constexpr uint64_t default_stack_bytes = 1024;

struct LaunchShape {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
  // Every block must run at once (cuLaunchCooperativeKernel): grid-wide barriers wait for all.
  bool cooperative = false;
  // Each thread's stack for run-time allocations (PTX alloca): the context's CU_LIMIT_STACK_SIZE.
  uint64_t stack_bytes = default_stack_bytes;
};

// A kernel ready to run. Owned by its LoadedModule.
class LoadedKernel {
 public:
  virtual ~LoadedKernel() = default;
  virtual const ptx::KernelInfo& info() const = 0;
  // Runs `better`'s machine code from now on, in launches already queued and in blocks of a
  // running launch not yet started: `better` is this kernel compiled again, optimised, and
  // outlives this one. False where the backend cannot switch code.
  virtual bool adopt_code(const LoadedKernel& /*better*/) { return false; }
};

// Machine code for one module, linked and resident on a device.
class LoadedModule {
 public:
  virtual ~LoadedModule() = default;
  virtual Expected<LoadedKernel*> kernel(std::string_view name) = 0;
  // Device address of a module-scope .global/.const variable.
  virtual Expected<void*> global(std::string_view name) = 0;
};

// An in-order queue of work, asynchronous to the host: a CUDA stream's backend half.
// Errors met while running queued work (a kernel's wild access, say) surface from synchronize()
// and from every later call, because a real device's faults are sticky too.
class Queue {
 public:
  virtual ~Queue() = default;
  virtual void copy(void* destination, const void* source, size_t bytes) = 0;
  // Repeats a 1-, 2- or 4-byte pattern `count` times.
  virtual void fill(void* destination, uint32_t pattern, uint32_t pattern_bytes, size_t count) = 0;
  // Rectangular copies and fills (strided_copy.h), each ONE piece of work however many rows it
  // has. By default a host function copies with the CPU, which only suits a backend whose device
  // memory is host memory (strided_copy.cpp).
  virtual void copy_region(const StridedCopy& copy);
  virtual void fill_region(const StridedFill& fill);
  // `parameters` is the kernel's packed .param buffer, laid out as its KernelInfo says.
  virtual void launch(LoadedKernel& kernel, const LaunchShape& shape,
                      std::vector<uint8_t> parameters) = 0;
  virtual void host_function(void (*function)(void*), void* user_data) = 0;
  // Work enqueued after this call waits until `other` has finished what it holds now.
  virtual void wait_for(Queue& other) = 0;
  virtual Status synchronize() = 0;
  virtual bool idle() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual int device_count() const = 0;
  virtual const DeviceProperties& properties(int device) const = 0;

  virtual Expected<void*> allocate(int device, size_t bytes) = 0;
  virtual Status release(int device, void* pointer) = 0;
  // Zeroed memory where this backend's kernels can read and write it, for the texels of a CUDA
  // array (rows back to back, as runtime::Array lays them out); release() frees it. A backend
  // whose device memory is host memory needs nothing more than allocate().
  virtual Expected<void*> allocate_zeroed(int device, size_t bytes) {
    Expected<void*> pointer = allocate(device, bytes);
    if (pointer) std::memset(*pointer, 0, bytes);
    return pointer;
  }
  // The 64-bit CUtexObject/CUsurfObject through which kernels on `device` read `texture`, whose
  // images lie in memory from allocate() or allocate_zeroed(); `texture` outlives the object.
  // Host code reads the TextureDescriptor itself.
  virtual Expected<uint64_t> create_texture_object(int /*device*/,
                                                   const TextureDescriptor& texture) {
    return reinterpret_cast<uint64_t>(&texture);
  }
  virtual Status destroy_texture_object(int /*device*/, uint64_t /*object*/) { return {}; }
  // Makes the allocation at `pointer` mappable by other processes (CUDA IPC), keeping its
  // address and contents: the file behind it, which the backend keeps open until the allocation
  // is released, and that file's size.
  struct SharedMemory {
    int descriptor = -1;
    size_t size = 0;
  };
  virtual Expected<SharedMemory> share(int /*device*/, void* /*pointer*/) {
    return make_error(ErrorCode::not_supported,
                      "this backend cannot share memory between processes");
  }

  virtual std::unique_ptr<Queue> create_queue(int device) = 0;
  // Takes a compiled module (the object for this backend's target plus its description).
  virtual Expected<std::unique_ptr<LoadedModule>> load_module(int device,
                                                              ptx::CompileResult compiled) = 0;
  virtual ptx::Target compile_target() const = 0;
  // What every compile of a module for `device` starts from; the code cache keys on all of it.
  // A GPU backend names the device's processor and the code object its runtime reads.
  virtual ptx::CompileOptions compile_options(int /*device*/) const {
    ptx::CompileOptions options;
    options.target = compile_target();
    return options;
  }
};

// The backend chosen by XCUDA_BACKEND (auto: HIP where an AMD GPU answers, else host).
Backend& backend();

}  // namespace xcuda::runtime
