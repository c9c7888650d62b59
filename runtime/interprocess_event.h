// CUDA IPC of events (CU_EVENT_INTERPROCESS, cuIpcGetEventHandle, cuIpcOpenEventHandle): such an
// event keeps its generations in a small memfd from creation on, and its handle names that file
// as /proc/<pid>/fd/<n>, as interprocess_memory.h does for memory. An event opened from the
// handle in another process records and waits on the same generations.
#pragma once

#include <array>

#include "runtime/event.h"
#include "runtime/status.h"

namespace xcuda::runtime {

// The 64 opaque bytes of a CUipcEventHandle.
using IpcEventHandle = std::array<char, 64>;

// Gives a new CU_EVENT_INTERPROCESS event its shared generations.
Status make_interprocess(Event& event);
// invalid_handle for an event created without CU_EVENT_INTERPROCESS.
Expected<IpcEventHandle> export_ipc_event(const Event& event);
// A new event of `context`, the caller's to destroy, sharing the exporter's generations.
Expected<Event*> open_ipc_event(const IpcEventHandle& handle, Context& context);

}  // namespace xcuda::runtime
