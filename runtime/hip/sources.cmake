# The HIP (AMD GPU) backend, compiled into xcuda_runtime; paths are relative to runtime/.
set(XCUDA_HIP_BACKEND_SOURCES
  hip/hip_backend.cpp
  hip/hip_errors.cpp
  hip/hip_library.cpp
  hip/hip_module.cpp
  hip/hip_properties.cpp
  hip/hip_queue.cpp
  hip/hip_selection.cpp
  hip/hip_texture.cpp
)
