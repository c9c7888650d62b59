// The real HIP runtime (Debian's libamdhip64-5 on machines without an AMD GPU): it must load, and
// where it finds no GPU, `auto` must run on the host and `hip` must fail cleanly. Fails, never
// skips, when the library is missing: CI installs it so this path stays tested.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runtime/backend.h"
#include "runtime/hip/hip_library.h"
#include "runtime/hip/hip_selection.h"

namespace xcuda::runtime::hip {
namespace {

// How many devices HIP itself reports here: 0 on machines without an AMD GPU.
int hip_device_count(const HipFunctions& functions) {
  if (functions.init(0) != hip_success) return 0;
  int count = 0;
  return functions.get_device_count(&count) == hip_success ? count : 0;
}

Environment asking_for(BackendChoice choice) {
  Environment settings;
  settings.backend = choice;
  return settings;
}

class HipRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Expected<HipFunctions> loaded = load_hip_library();
    ASSERT_TRUE(loaded.ok()) << loaded.error().message
                             << " (install Debian's libamdhip64-5 for this test)";
    functions_ = std::move(*loaded);
    devices_ = hip_device_count(functions_);
  }

  HipFunctions functions_;
  int devices_ = 0;
};

TEST_F(HipRuntimeTest, ResolvesEveryFunctionWeCall) {
  EXPECT_FALSE(functions_.library.empty());
  EXPECT_TRUE(functions_.launch_host_func || functions_.stream_add_callback);
  EXPECT_TRUE(functions_.memcpy && functions_.memset && functions_.memcpy_2d_async);
  EXPECT_TRUE(functions_.module_occupancy_max_active_blocks_per_multiprocessor);
  EXPECT_GT(functions_.architecture_name_offset, 0u);
  int version = 0;
  EXPECT_EQ(functions_.runtime_get_version(&version), hip_success);
  EXPECT_GE(version, 50000000);  // ROCm 5 at the oldest
  EXPECT_STREQ(functions_.get_error_name(hip_error_no_device), "hipErrorNoDevice");
}

TEST_F(HipRuntimeTest, AutoTakesHipOnlyWhereHipHasDevices) {
  auto chosen = select_hip_backend(asking_for(BackendChoice::automatic), load_hip_library);
  if (devices_ == 0) {
    EXPECT_EQ(chosen, nullptr);
  } else {
    ASSERT_TRUE(chosen);
    EXPECT_EQ(chosen->device_count(), devices_);
  }
}

TEST_F(HipRuntimeTest, HipWithoutADeviceFailsCleanly) {
  testing::internal::CaptureStderr();
  auto chosen = select_hip_backend(asking_for(BackendChoice::hip), load_hip_library);
  std::string said = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->name(), "hip");
  EXPECT_EQ(chosen->device_count(), devices_);
  if (devices_ == 0) {
    EXPECT_NE(said.find("no usable AMD GPU"), std::string::npos) << said;
  }
}

// The process-wide choice, in a fresh process per setting (it is made once per process).
void expect_process_backend(const char* setting, const char* name, int devices) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("XCUDA_BACKEND", setting, 1);
        unsetenv("XCUDA_HOST_DEVICES");
        unsetenv("XCUDA_DEVICE_MAP");
        Backend& chosen = backend();
        std::exit(chosen.name() == name && chosen.device_count() == devices ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "XCUDA_BACKEND=" << setting;
}

TEST_F(HipRuntimeTest, AutoProcessRunsOnTheHostUnlessHipHasDevices) {
  if (devices_ == 0)
    expect_process_backend("auto", "host", 1);
  else
    expect_process_backend("auto", "hip", devices_);
}

TEST_F(HipRuntimeTest, HipProcessHasOnlyHipsDevices) {
  expect_process_backend("hip", "hip", devices_);
}

}  // namespace
}  // namespace xcuda::runtime::hip
