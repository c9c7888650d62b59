// Shared helpers for the end-to-end CUDA programs in tests/cuda/.
// Every CUDA runtime call goes through CHECK(): on failure it prints the error name, its
// description and the call site, and exits 1. FAIL() (driver_check.h, with the Driver API's
// helpers) reports a wrong result and exits 1.
#pragma once

#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "driver_check.h"

#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t check_err_ = (call);                                                         \
    if (check_err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s, %d)\n", __FILE__, __LINE__, #call,     \
                   cudaGetErrorString(check_err_), cudaGetErrorName(check_err_),             \
                   static_cast<int>(check_err_));                                            \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// Expects a runtime call to answer exactly `expected`; a wrong answer is counted in `failures`
// (driver_check.h) and the program goes on. Clears the error, so that a later CHECK_LAUNCH
// does not see it.
#define EXPECT_ERROR(call, expected)                                                       \
  do {                                                                                     \
    cudaError_t got_ = (call);                                                             \
    (void)cudaGetLastError();                                                              \
    if (got_ != (expected)) {                                                              \
      std::fprintf(stderr, "%s:%d: %s answered %d (%s), expected %d (%s)\n", __FILE__,     \
                   __LINE__, #call, static_cast<int>(got_), cudaGetErrorName(got_),        \
                   static_cast<int>(expected), cudaGetErrorName(expected));                \
      ++failures;                                                                          \
    }                                                                                      \
  } while (0)

// Checks the launch itself (cudaGetLastError) and then its execution (cudaDeviceSynchronize).
#define CHECK_LAUNCH()                  \
  do {                                  \
    CHECK(cudaGetLastError());          \
    CHECK(cudaDeviceSynchronize());     \
  } while (0)

// Compares got[0..n) with want[0..n) exactly and fails at the first mismatch.
template <typename T>
static void expect_equal(const char* what, const T* got, const T* want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!(got[i] == want[i])) {
      FAIL("%s: mismatch at index %zu: expected %.17g, got %.17g", what, i,
           static_cast<double>(want[i]), static_cast<double>(got[i]));
    }
  }
}

// Relative-or-absolute tolerance compare for floating-point results where the device may
// legitimately differ in the last bits (fused multiply-add contraction).
template <typename T>
static void expect_near(const char* what, const T* got, const T* want, size_t n, double tol) {
  for (size_t i = 0; i < n; ++i) {
    double g = static_cast<double>(got[i]);
    double w = static_cast<double>(want[i]);
    double err = g > w ? g - w : w - g;
    double scale = w < 0 ? -w : w;
    if (!(err <= tol * (scale > 1.0 ? scale : 1.0))) {
      FAIL("%s: mismatch at index %zu: expected %.17g, got %.17g (tolerance %g)", what, i, w, g,
           tol);
    }
  }
}

// Runs `run` in a child process and answers whether it returned 0. A kernel fault is sticky, so
// each fault a program provokes needs a process of its own; and a CUDA context does not survive
// fork, so the parent calls this before it touches CUDA.
template <typename Run>
static bool succeeds_in_child(Run run) {
  std::fflush(stdout);
  pid_t child = fork();
  if (child < 0) FAIL("fork: %s", std::strerror(errno));
  if (child == 0) std::exit(run());
  int status = 0;
  if (waitpid(child, &status, 0) != child) FAIL("waitpid: %s", std::strerror(errno));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// Results recorded on NVIDIA hardware in bulk are kept as FNV-1a hashes of their 32-bit words,
// low byte first: start from kFnvStart and add each word with fnv1a().
constexpr uint32_t kFnvStart = 2166136261u;
inline uint32_t fnv1a(uint32_t hash, uint32_t word) {
  for (int byte = 0; byte < 4; ++byte) hash = (hash ^ ((word >> (8 * byte)) & 0xFF)) * 16777619u;
  return hash;
}

// A 32-bit integer hash (an avalanche of xor-shifts and multiplies): programs make their random
// inputs on the device from it, so that any implementation running them sees the same.
__host__ __device__ inline uint32_t mix_bits(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352d;
  x ^= x >> 15;
  x *= 0x846ca68b;
  x ^= x >> 16;
  return x;
}

// The device's results of `forms` forms, `per_form` words each: written to `record_file` when
// one is named (on an NVIDIA GPU, the program records), then each form's FNV-1a hash printed and
// compared with `expected`, whose source `whose` names; each difference counts in `failures`.
inline void compare_form_hashes(const uint32_t* device_results, size_t per_form, int forms, const char* const names[],
                                const uint32_t expected[], const char* whose, const char* record_file) {
  const size_t words = per_form * forms;
  uint32_t* host = static_cast<uint32_t*>(std::malloc(words * 4));
  if (host == nullptr) FAIL("out of memory for %zu results", words);
  CHECK(cudaMemcpy(host, device_results, words * 4, cudaMemcpyDeviceToHost));
  if (record_file != nullptr) {
    FILE* file = std::fopen(record_file, "wb");
    if (file == nullptr || std::fwrite(host, 4, words, file) != words || std::fclose(file) != 0) FAIL("cannot write %s", record_file);
  }
  for (int form = 0; form < forms; ++form) {
    uint32_t hash = kFnvStart;
    for (size_t index = form * per_form; index < (form + 1) * per_form; ++index) hash = fnv1a(hash, host[index]);
    std::printf("%-36s %08x%s%s\n", names[form], hash, hash == expected[form] ? "" : "  differs from the ", hash == expected[form] ? "" : whose);
    if (hash != expected[form]) ++failures;
  }
  std::free(host);
}
