// Shared helpers for the test programs that call the Driver API (cuda.h): the plain C++ clients
// (no cudart) and the CUDA programs that mix in Driver API calls (through check.h).
//
// FAIL() reports a wrong result and exits 1. CHECK_CU() and EXPECT_RESULT() stop at the first
// wrong answer; EXPECT_CODE(), EXPECT_OK() and EXPECT_TRUE() count it in `failures` and go on,
// so that one run (on NVIDIA's driver, say) lists every difference.
#pragma once

#include <cuda.h>

#include <cstdio>
#include <cstdlib>

#define FAIL(...)                                                \
  do {                                                           \
    std::fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
    std::fprintf(stderr, __VA_ARGS__);                           \
    std::fprintf(stderr, "\n");                                  \
    std::exit(1);                                                \
  } while (0)

// The name of a result, for messages.
inline const char* result_name(CUresult result) {
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  return name ? name : "?";
}

#define CHECK_CU(call)                                                                   \
  do {                                                                                   \
    CUresult check_res_ = (call);                                                        \
    if (check_res_ != CUDA_SUCCESS) {                                                    \
      const char* check_str_ = nullptr;                                                  \
      cuGetErrorString(check_res_, &check_str_);                                         \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s, %d)\n", __FILE__, __LINE__, #call, \
                   check_str_ ? check_str_ : "?", result_name(check_res_),               \
                   static_cast<int>(check_res_));                                        \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

#define EXPECT_RESULT(call, want)                                                     \
  do {                                                                                \
    CUresult expect_res_ = (call);                                                    \
    if (expect_res_ != (want))                                                        \
      FAIL("%s: expected %s (%d), got %s (%d)", #call, #want, static_cast<int>(want), \
           result_name(expect_res_), static_cast<int>(expect_res_));                  \
  } while (0)

inline int failures = 0;

#define EXPECT_CODE(call, expected)                                                              \
  do {                                                                                           \
    CUresult got_ = (call);                                                                      \
    if (got_ != (expected)) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s answered %d (%s), expected %d (%s)\n", __FILE__, __LINE__, \
                   #call, static_cast<int>(got_), result_name(got_), static_cast<int>(expected), \
                   result_name(expected));                                                       \
      ++failures;                                                                                \
    }                                                                                            \
  } while (0)
#define EXPECT_OK(call) EXPECT_CODE(call, CUDA_SUCCESS)
#define EXPECT_TRUE(condition, ...)                                        \
  do {                                                                     \
    if (!(condition)) {                                                    \
      std::fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #condition); \
      std::fprintf(stderr, __VA_ARGS__);                                   \
      std::fprintf(stderr, "\n");                                          \
      ++failures;                                                          \
    }                                                                      \
  } while (0)
