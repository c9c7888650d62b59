# The host (CPU) backend, compiled into xcuda_runtime; paths are relative to runtime/.
set(XCUDA_HOST_BACKEND_SOURCES
  host/device_printf.cpp
  host/fault_guard.cpp
  host/fiber.cpp
  host/host_backend.cpp
  host/host_loader.cpp
  host/host_properties.cpp
  host/host_queue.cpp
  host/worker_pool.cpp
  host/texture_sampling.cpp
  host/tensor_copy.cpp
)
