// CUDA IPC between two processes of one machine: the parent exports a cudaMalloc buffer and an
// interprocess event, runs itself again as a child that opens both, and sees the child's kernel
// writes in its own buffer. The parent's expected error codes are what NVIDIA's driver answered
// on an H200 (CUDA 13, driver 580); the child's follow the CUDA documentation and await a run
// there.
#include "check.h"

#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

constexpr unsigned element_count = 1 << 16;

__global__ void write_pattern(unsigned* values, unsigned count) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) values[i] = 3 * i + 1;
}

static std::string to_hex(const void* bytes, size_t size) {
  std::string text;
  for (size_t i = 0; i < size; ++i) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02x", static_cast<const unsigned char*>(bytes)[i]);
    text += pair;
  }
  return text;
}

static void from_hex(const char* text, void* bytes, size_t size) {
  if (std::strlen(text) != 2 * size) FAIL("handle text has %zu digits", std::strlen(text));
  for (size_t i = 0; i < size; ++i) {
    unsigned value = 0;
    std::sscanf(text + 2 * i, "%2x", &value);
    static_cast<unsigned char*>(bytes)[i] = static_cast<unsigned char>(value);
  }
}

// The child: opens what the parent exported, writes the pattern with a kernel, and waits on the
// parent's event.
static int run_child(const char* memory_text, const char* event_text) {
  CHECK(cudaFree(nullptr));
  CUipcMemHandle memory_handle;
  CUipcEventHandle event_handle;
  from_hex(memory_text, &memory_handle, sizeof memory_handle);
  from_hex(event_text, &event_handle, sizeof event_handle);

  CUdeviceptr shared = 0;
  EXPECT_CODE(cuIpcOpenMemHandle(&shared, memory_handle, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuIpcOpenMemHandle(&shared, memory_handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
  if (!shared) return 1;
  CUdeviceptr base = 0;
  size_t size = 0;
  EXPECT_OK(cuMemGetAddressRange(&base, &size, shared + 8));
  if (base != shared || size < element_count * sizeof(unsigned))
    FAIL("opened range %#llx +%zu", static_cast<unsigned long long>(base), size);

  CUevent event = nullptr;
  EXPECT_OK(cuIpcOpenEventHandle(&event, event_handle));
  if (event) {
    EXPECT_OK(cuStreamWaitEvent(nullptr, event, 0));
    EXPECT_OK(cuEventSynchronize(event));
    float elapsed = 0;
    EXPECT_CODE(cuEventElapsedTime(&elapsed, event, event), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_OK(cuEventDestroy(event));
  }

  write_pattern<<<element_count / 256, 256>>>(reinterpret_cast<unsigned*>(shared), element_count);
  CHECK_LAUNCH();
  EXPECT_OK(cuIpcCloseMemHandle(shared));
  EXPECT_CODE(cuIpcCloseMemHandle(shared), CUDA_ERROR_INVALID_VALUE);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "child") == 0) return run_child(argv[2], argv[3]);

  CHECK(cudaFree(nullptr));
  unsigned* buffer = nullptr;
  CHECK(cudaMalloc(&buffer, element_count * sizeof(unsigned)));
  CHECK(cudaMemset(buffer, 0, element_count * sizeof(unsigned)));
  CUdeviceptr address = reinterpret_cast<CUdeviceptr>(buffer);

  CUipcMemHandle memory_handle;
  EXPECT_CODE(cuIpcGetMemHandle(nullptr, address), CUDA_ERROR_INVALID_VALUE);
  std::vector<unsigned> host_memory(16);
  EXPECT_CODE(cuIpcGetMemHandle(&memory_handle, reinterpret_cast<CUdeviceptr>(host_memory.data())),
              CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuIpcGetMemHandle(&memory_handle, address));
  // A process cannot open its own handle.
  CUdeviceptr opened = 0;
  EXPECT_CODE(cuIpcOpenMemHandle(&opened, memory_handle, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CODE(cuIpcOpenMemHandle(&opened, memory_handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
              CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CODE(cuIpcCloseMemHandle(address), CUDA_ERROR_INVALID_VALUE);

  CUevent timed = nullptr, interprocess = nullptr;
  CUipcEventHandle event_handle;
  EXPECT_OK(cuEventCreate(&timed, CU_EVENT_DEFAULT));
  EXPECT_CODE(cuIpcGetEventHandle(&event_handle, timed), CUDA_ERROR_INVALID_HANDLE);
  EXPECT_OK(cuEventCreate(&interprocess, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  EXPECT_CODE(cuIpcGetEventHandle(nullptr, interprocess), CUDA_ERROR_INVALID_VALUE);
  EXPECT_OK(cuIpcGetEventHandle(&event_handle, interprocess));
  CUevent reopened = nullptr;
  EXPECT_CODE(cuIpcOpenEventHandle(&reopened, event_handle), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_OK(cuEventRecord(interprocess, nullptr));
  if (failures) return 1;

  std::string memory_text = to_hex(&memory_handle, sizeof memory_handle);
  std::string event_text = to_hex(&event_handle, sizeof event_handle);
  pid_t child = fork();
  if (child < 0) FAIL("fork failed");
  if (child == 0) {
    execl("/proc/self/exe", argv[0], "child", memory_text.c_str(), event_text.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) FAIL("waitpid failed");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) FAIL("child failed (status %#x)", status);

  std::vector<unsigned> seen(element_count);
  CHECK(cudaMemcpy(seen.data(), buffer, element_count * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (unsigned i = 0; i < element_count; ++i)
    if (seen[i] != 3 * i + 1) FAIL("element %u: expected %u, got %u", i, 3 * i + 1, seen[i]);

  EXPECT_OK(cuEventDestroy(interprocess));
  EXPECT_OK(cuEventDestroy(timed));
  CHECK(cudaFree(buffer));
  if (failures) return 1;
  std::printf("ipc: the child's writes reached the parent\n");
  return 0;
}
