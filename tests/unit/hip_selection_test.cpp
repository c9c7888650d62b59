// XCUDA_BACKEND's choice between HIP and the host, with loaders that fail or give the fake HIP.
#include <gtest/gtest.h>

#include "hip_fake_runtime.h"
#include "runtime/hip/hip_selection.h"

namespace xcuda::runtime::hip {
namespace {

Environment asking_for(BackendChoice choice) {
  Environment settings;
  settings.backend = choice;
  return settings;
}

Expected<HipFunctions> no_library() {
  return make_error(ErrorCode::not_found, "no usable HIP runtime: libamdhip64.so.7: not found");
}

Expected<HipFunctions> fake_library() { return fake::fake_hip_functions(); }

class HipSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override { fake::reset_fake_hip(); }
};

TEST_F(HipSelectionTest, AutoTakesHipWhereADeviceAnswers) {
  auto chosen = select_hip_backend(asking_for(BackendChoice::automatic), fake_library);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->name(), "hip");
  EXPECT_EQ(chosen->device_count(), 2);
}

TEST_F(HipSelectionTest, AutoFallsBackWithoutTheLibrary) {
  EXPECT_EQ(select_hip_backend(asking_for(BackendChoice::automatic), no_library), nullptr);
}

TEST_F(HipSelectionTest, AutoFallsBackWhenHipInitFails) {
  fake::fake_hip().init_result = hip_error_invalid_device;
  EXPECT_EQ(select_hip_backend(asking_for(BackendChoice::automatic), fake_library), nullptr);
}

TEST_F(HipSelectionTest, AutoFallsBackWithoutDevices) {
  fake::fake_hip().devices.clear();
  EXPECT_EQ(select_hip_backend(asking_for(BackendChoice::automatic), fake_library), nullptr);
}

TEST_F(HipSelectionTest, HostNeverLoadsHip) {
  bool loaded = false;
  auto chosen =
      select_hip_backend(asking_for(BackendChoice::host), [&]() -> Expected<HipFunctions> {
        loaded = true;
        return fake::fake_hip_functions();
      });
  EXPECT_EQ(chosen, nullptr);
  EXPECT_FALSE(loaded);
}

TEST_F(HipSelectionTest, HipWithoutAGpuGetsNoDevicesAndSaysSo) {
  fake::fake_hip().init_result = hip_error_invalid_device;
  testing::internal::CaptureStderr();
  auto chosen = select_hip_backend(asking_for(BackendChoice::hip), fake_library);
  std::string said = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->name(), "hip");
  EXPECT_EQ(chosen->device_count(), 0);
  EXPECT_NE(said.find("XCUDA_BACKEND=hip"), std::string::npos) << said;
  EXPECT_NE(said.find("hipInit"), std::string::npos) << said;
}

TEST_F(HipSelectionTest, HipWithoutTheLibraryGetsNoDevices) {
  testing::internal::CaptureStderr();
  auto chosen = select_hip_backend(asking_for(BackendChoice::hip), no_library);
  std::string said = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->device_count(), 0);
  EXPECT_NE(said.find("libamdhip64"), std::string::npos) << said;
}

TEST_F(HipSelectionTest, SettingsReachTheDevices) {
  Environment settings = asking_for(BackendChoice::hip);
  settings.compute_major = 9;
  settings.compute_minor = 0;
  settings.device_map = {1};
  auto chosen = select_hip_backend(settings, fake_library);
  ASSERT_TRUE(chosen);
  ASSERT_EQ(chosen->device_count(), 1);
  EXPECT_EQ(chosen->properties(0).name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(chosen->properties(0).compute_major, 9);
}

}  // namespace
}  // namespace xcuda::runtime::hip
