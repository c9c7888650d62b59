// CUDA IPC between processes of one machine: device memory from cuMemAlloc and events created
// with CU_EVENT_INTERPROCESS. The error codes are those NVIDIA's driver answers
// (tests/cuda/ipc.cu records them).
#include <cstring>

#include "src/api.h"

#include "runtime/event.h"
#include "runtime/interprocess_event.h"
#include "runtime/interprocess_memory.h"
#include "runtime/memory.h"

using namespace xcuda;

XCUDA_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle* pHandle, CUdeviceptr dptr) {
  XCUDA_REQUIRE(pHandle, CUDA_ERROR_INVALID_VALUE, "handle output pointer is null");
  CUresult status;
  if (!api::current_context(__func__, status)) return status;
  auto found = runtime::memory_registry().find(dptr);
  XCUDA_REQUIRE(found, CUDA_ERROR_INVALID_VALUE, "address is not inside a live allocation");
  auto handle = runtime::export_ipc_memory(*found);
  XCUDA_CHECK_STATUS(handle);
  static_assert(sizeof pHandle->reserved == std::tuple_size_v<runtime::IpcMemoryHandle>);
  std::memcpy(pHandle->reserved, handle->data(), handle->size());
  return CUDA_SUCCESS;
}

// cuIpcOpenMemHandle is the same function under its CUDA 4.0 and 11.0 names.
XCUDA_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                            unsigned int Flags) {
  XCUDA_REQUIRE(pdptr, CUDA_ERROR_INVALID_VALUE, "address output pointer is null");
  // NVIDIA's driver insists on the flag, though peers need no enabling here.
  XCUDA_REQUIRE(Flags == CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, CUDA_ERROR_INVALID_VALUE,
                "flags must be CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS");
  CUresult status;
  runtime::Context* context = api::current_context(__func__, status);
  if (!context) return status;
  runtime::IpcMemoryHandle contents;
  std::memcpy(contents.data(), handle.reserved, contents.size());
  auto opened = runtime::opened_ipc_memory().open(contents, context);
  XCUDA_CHECK_STATUS(opened);
  *pdptr = *opened;
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr* pdptr, CUipcMemHandle handle,
                                         unsigned int Flags) {
  return cuIpcOpenMemHandle_v2(pdptr, handle, Flags);
}

XCUDA_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr) {
  XCUDA_REQUIRE(api::initialized(), CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  if (runtime::Context* context = runtime::current_context()) (void)context->synchronize();
  XCUDA_CHECK_STATUS(runtime::opened_ipc_memory().close(dptr));
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle* pHandle, CUevent event) {
  XCUDA_REQUIRE(pHandle, CUDA_ERROR_INVALID_VALUE, "handle output pointer is null");
  XCUDA_REQUIRE(runtime::live_events().contains(event), CUDA_ERROR_INVALID_HANDLE,
                "not a live event");
  auto handle = runtime::export_ipc_event(*reinterpret_cast<runtime::Event*>(event));
  XCUDA_CHECK_STATUS(handle);
  static_assert(sizeof pHandle->reserved == std::tuple_size_v<runtime::IpcEventHandle>);
  std::memcpy(pHandle->reserved, handle->data(), handle->size());
  return CUDA_SUCCESS;
}

XCUDA_EXPORT CUresult cuIpcOpenEventHandle(CUevent* phEvent, CUipcEventHandle handle) {
  XCUDA_REQUIRE(phEvent, CUDA_ERROR_INVALID_VALUE, "event output pointer is null");
  CUresult status;
  runtime::Context* context = api::current_context(__func__, status);
  if (!context) return status;
  runtime::IpcEventHandle contents;
  std::memcpy(contents.data(), handle.reserved, contents.size());
  auto opened = runtime::open_ipc_event(contents, *context);
  XCUDA_CHECK_STATUS(opened);
  runtime::live_events().add(*opened);
  *phEvent = reinterpret_cast<CUevent>(*opened);
  return CUDA_SUCCESS;
}
