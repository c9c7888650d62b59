// HIP's error codes become the errors CUDA applications expect, with HIP's name in the message.
#include <gtest/gtest.h>

#include "hip_fake_runtime.h"
#include "runtime/hip/hip_errors.h"

namespace xcuda::runtime::hip {
namespace {

TEST(HipErrorsTest, MapsEachCodeToItsCudaMeaning) {
  const std::pair<int, ErrorCode> expected[] = {
      {hip_error_invalid_value, ErrorCode::invalid_value},
      {hip_error_out_of_memory, ErrorCode::out_of_memory},
      {hip_error_not_initialized, ErrorCode::not_initialized},
      {hip_error_invalid_device, ErrorCode::invalid_value},
      {hip_error_invalid_device_function, ErrorCode::not_found},
      {hip_error_invalid_image, ErrorCode::invalid_image},
      {hip_error_invalid_kernel_file, ErrorCode::invalid_image},
      {hip_error_invalid_context, ErrorCode::invalid_context},
      {hip_error_no_binary_for_gpu, ErrorCode::no_binary_for_gpu},
      {hip_error_invalid_handle, ErrorCode::invalid_handle},
      {hip_error_not_found, ErrorCode::not_found},
      {hip_error_not_ready, ErrorCode::not_ready},
      {hip_error_illegal_address, ErrorCode::illegal_address},
      {hip_error_launch_out_of_resources, ErrorCode::launch_out_of_resources},
      {hip_error_cooperative_launch_too_large, ErrorCode::cooperative_launch_too_large},
      {hip_error_assert, ErrorCode::assertion_failed},
      {hip_error_launch_failure, ErrorCode::launch_failed},
      {hip_error_not_supported, ErrorCode::not_supported},
  };
  for (auto [hip, ours] : expected) EXPECT_EQ(translate_hip_error(hip), ours) << hip;
}

TEST(HipErrorsTest, UnknownCodesAreUnknown) {
  for (int code : {-1, 4, 999, 1000, 100000})
    EXPECT_EQ(translate_hip_error(code), ErrorCode::unknown);
}

TEST(HipErrorsTest, MessageNamesTheCallAndHipsError) {
  HipFunctions functions = fake::fake_hip_functions();
  Error error = hip_error(functions, hip_error_out_of_memory, "hipMalloc of 64 bytes");
  EXPECT_EQ(error.code, ErrorCode::out_of_memory);
  EXPECT_EQ(error.message, "hipMalloc of 64 bytes failed: hipErrorOutOfMemory (2)");
}

TEST(HipErrorsTest, MessageWithoutHipStillHasTheCode) {
  Error error = hip_error(HipFunctions{}, 12345, "hipInit");
  EXPECT_EQ(error.message, "hipInit failed: hipError 12345 (12345)");
}

TEST(HipErrorsTest, SuccessIsNoError) {
  EXPECT_TRUE(check_hip(HipFunctions{}, hip_success, "hipInit").ok());
  EXPECT_FALSE(check_hip(HipFunctions{}, hip_error_no_device, "hipInit").ok());
}

}  // namespace
}  // namespace xcuda::runtime::hip
