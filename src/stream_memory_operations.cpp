// Stream memory operations: waits on and writes of 32- and 64-bit values in device-visible
// memory, ordered with the rest of the stream's work (cuStreamWaitValue*, cuStreamWriteValue*,
// cuStreamBatchMemOp). On the host backend the stream's own thread carries them out.
#include "src/api.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/memory.h"

using namespace xcuda;
using runtime::Stream;

namespace {

struct MemoryOperation {
  CUstreamBatchMemOpType type;
  uint64_t* address64;  // for the 64-bit forms
  uint32_t* address32;  // for the 32-bit forms
  uint64_t value;
  unsigned flags;
};

template <class T>
bool condition_holds(T current, T value, unsigned flags) {
  using Signed = std::make_signed_t<T>;
  switch (flags & ~CU_STREAM_WAIT_VALUE_FLUSH) {
    // The documented cyclic comparison: wrap-around is ignored.
    case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<Signed>(current - value) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return current == value;
    case CU_STREAM_WAIT_VALUE_AND: return (current & value) != 0;
    default: return static_cast<T>(~(current | value)) != 0;  // CU_STREAM_WAIT_VALUE_NOR
  }
}

template <class T>
void wait_for_value(T* address, T value, unsigned flags) {
  std::atomic_ref<T> word(*address);
  // Spin briefly for a writer that is about to come, then back off so that a long wait (on a
  // kernel, or on the host) leaves the cores to the work it waits for.
  for (unsigned round = 0; !condition_holds(word.load(std::memory_order_acquire), value, flags);
       ++round) {
    if (round < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

template <class T>
void write_value(T* address, T value, unsigned flags) {
  std::atomic_ref<T>(*address).store(value, (flags & CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)
                                                ? std::memory_order_relaxed
                                                : std::memory_order_release);
}

void run_operations(void* data) {
  std::unique_ptr<std::vector<MemoryOperation>> operations(
      static_cast<std::vector<MemoryOperation>*>(data));
  for (const MemoryOperation& operation : *operations) {
    switch (operation.type) {
      case CU_STREAM_MEM_OP_WAIT_VALUE_32:
        wait_for_value(operation.address32, static_cast<uint32_t>(operation.value),
                       operation.flags);
        break;
      case CU_STREAM_MEM_OP_WAIT_VALUE_64:
        wait_for_value(operation.address64, operation.value, operation.flags);
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_32:
        write_value(operation.address32, static_cast<uint32_t>(operation.value), operation.flags);
        break;
      case CU_STREAM_MEM_OP_WRITE_VALUE_64:
        write_value(operation.address64, operation.value, operation.flags);
        break;
      default:  // barriers and flushes: host memory is coherent, a fence is all they need
        std::atomic_thread_fence(std::memory_order_seq_cst);
        break;
    }
  }
}

// Checks one operation as the driver does and converts it; the error names the operation.
CUresult prepare(const char* function, const CUstreamBatchMemOpParams& parameters, size_t index,
                 MemoryOperation& prepared) {
  prepared = {parameters.operation, nullptr, nullptr, 0, 0};
  switch (parameters.operation) {
    case CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES:
      return CUDA_SUCCESS;
    case CU_STREAM_MEM_OP_BARRIER:
      XCUDA_REQUIRE(parameters.memoryBarrier.flags <= CU_STREAM_MEMORY_BARRIER_TYPE_GPU,
                    CUDA_ERROR_INVALID_VALUE,
                    fmt::format("operation {}: unknown barrier scope", index));
      return CUDA_SUCCESS;
    case CU_STREAM_MEM_OP_WAIT_VALUE_32:
    case CU_STREAM_MEM_OP_WAIT_VALUE_64:
      XCUDA_REQUIRE((parameters.waitValue.flags & ~CU_STREAM_WAIT_VALUE_FLUSH) <=
                        CU_STREAM_WAIT_VALUE_NOR,
                    CUDA_ERROR_INVALID_VALUE,
                    fmt::format("operation {}: unknown wait flags {:#x}", index,
                                parameters.waitValue.flags));
      break;
    case CU_STREAM_MEM_OP_WRITE_VALUE_32:
    case CU_STREAM_MEM_OP_WRITE_VALUE_64:
      XCUDA_REQUIRE((parameters.writeValue.flags & ~CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) == 0,
                    CUDA_ERROR_INVALID_VALUE,
                    fmt::format("operation {}: unknown write flags {:#x}", index,
                                parameters.writeValue.flags));
      break;
    default:
      return api::fail(function, CUDA_ERROR_INVALID_VALUE,
                       fmt::format("operation {}: unknown type {}", index,
                                   static_cast<int>(parameters.operation)));
  }
  // waitValue and writeValue share their layout up to the flags.
  const bool wide = parameters.operation == CU_STREAM_MEM_OP_WAIT_VALUE_64 ||
                    parameters.operation == CU_STREAM_MEM_OP_WRITE_VALUE_64;
  const size_t bytes = wide ? 8 : 4;
  const CUdeviceptr address = parameters.waitValue.address;
  XCUDA_REQUIRE(address % bytes == 0, CUDA_ERROR_INVALID_VALUE,
                fmt::format("operation {}: address {:#x} is not {}-byte aligned", index, address,
                            bytes));
  auto allocation = runtime::memory_registry().find(address);
  XCUDA_REQUIRE(allocation && address + bytes <= allocation->base + allocation->size,
                CUDA_ERROR_INVALID_VALUE,
                fmt::format("operation {}: address {:#x} is not in memory the device can reach",
                            index, address));
  prepared.flags = parameters.waitValue.flags;
  prepared.value = wide ? parameters.waitValue.value64 : parameters.waitValue.value;
  if (wide)
    prepared.address64 = reinterpret_cast<uint64_t*>(address);
  else
    prepared.address32 = reinterpret_cast<uint32_t*>(address);
  return CUDA_SUCCESS;
}

CUresult batch(const char* function, CUstream handle, unsigned count,
               const CUstreamBatchMemOpParams* parameters, unsigned flags, bool per_thread) {
  XCUDA_REQUIRE(flags == 0, CUDA_ERROR_INVALID_VALUE, "flags must be 0");
  XCUDA_REQUIRE(count == 0 || parameters, CUDA_ERROR_INVALID_VALUE, "operations are null");
  // The driver's documented maximum batch size.
  XCUDA_REQUIRE(count <= 256, CUDA_ERROR_INVALID_VALUE,
                fmt::format("{} operations, more than the 256 a batch may hold", count));
  auto operations = std::make_unique<std::vector<MemoryOperation>>(count);
  for (unsigned index = 0; index < count; ++index)
    if (CUresult status = prepare(function, parameters[index], index, (*operations)[index]);
        status != CUDA_SUCCESS)
      return status;
  CUresult status;
  Stream* stream = api::resolve_stream(function, handle, per_thread, status);
  if (!stream) return status;
  if (count > 0) stream->order_for_new_work().host_function(run_operations, operations.release());
  return CUDA_SUCCESS;
}

CUresult single(const char* function, CUstream stream, CUstreamBatchMemOpType type,
                CUdeviceptr address, uint64_t value, unsigned flags, bool per_thread) {
  CUstreamBatchMemOpParams parameters{};
  parameters.waitValue.operation = type;
  parameters.waitValue.address = address;
  if (type == CU_STREAM_MEM_OP_WAIT_VALUE_64 || type == CU_STREAM_MEM_OP_WRITE_VALUE_64)
    parameters.waitValue.value64 = value;
  else
    parameters.waitValue.value = static_cast<cuuint32_t>(value);
  parameters.waitValue.flags = flags;
  return batch(function, stream, 1, &parameters, 0, per_thread);
}

}  // namespace

// The _v2 forms (CUDA 11.7) kept the signatures; the first forms behave the same here.
#define XCUDA_MEMORY_OPERATION(name, type, value_type)                                      \
  XCUDA_EXPORT CUresult name(CUstream stream, CUdeviceptr address, value_type value,        \
                             unsigned int flags) {                                          \
    return single(__func__, stream, type, address, value, flags, false);                    \
  }                                                                                         \
  XCUDA_EXPORT CUresult name##_ptsz(CUstream stream, CUdeviceptr address, value_type value, \
                                    unsigned int flags) {                                   \
    return single(__func__, stream, type, address, value, flags, true);                     \
  }                                                                                         \
  XCUDA_EXPORT CUresult name##_v2(CUstream stream, CUdeviceptr address, value_type value,   \
                                  unsigned int flags) {                                     \
    return single(__func__, stream, type, address, value, flags, false);                    \
  }                                                                                         \
  XCUDA_EXPORT CUresult name##_v2_ptsz(CUstream stream, CUdeviceptr address,                \
                                       value_type value, unsigned int flags) {              \
    return single(__func__, stream, type, address, value, flags, true);                     \
  }

XCUDA_MEMORY_OPERATION(cuStreamWaitValue32, CU_STREAM_MEM_OP_WAIT_VALUE_32, cuuint32_t)
XCUDA_MEMORY_OPERATION(cuStreamWaitValue64, CU_STREAM_MEM_OP_WAIT_VALUE_64, cuuint64_t)
XCUDA_MEMORY_OPERATION(cuStreamWriteValue32, CU_STREAM_MEM_OP_WRITE_VALUE_32, cuuint32_t)
XCUDA_MEMORY_OPERATION(cuStreamWriteValue64, CU_STREAM_MEM_OP_WRITE_VALUE_64, cuuint64_t)

XCUDA_EXPORT CUresult cuStreamBatchMemOp(CUstream stream, unsigned int count,
                                         CUstreamBatchMemOpParams* operations, unsigned int flags) {
  return batch(__func__, stream, count, operations, flags, false);
}
XCUDA_EXPORT CUresult cuStreamBatchMemOp_ptsz(CUstream stream, unsigned int count,
                                              CUstreamBatchMemOpParams* operations,
                                              unsigned int flags) {
  return batch(__func__, stream, count, operations, flags, true);
}
XCUDA_EXPORT CUresult cuStreamBatchMemOp_v2(CUstream stream, unsigned int count,
                                            CUstreamBatchMemOpParams* operations,
                                            unsigned int flags) {
  return batch(__func__, stream, count, operations, flags, false);
}
XCUDA_EXPORT CUresult cuStreamBatchMemOp_v2_ptsz(CUstream stream, unsigned int count,
                                                 CUstreamBatchMemOpParams* operations,
                                                 unsigned int flags) {
  return batch(__func__, stream, count, operations, flags, true);
}
