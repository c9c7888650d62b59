// XCUDA_DEVICE_MAP's syntax: "cuda:hip" pairs, CUDA ordinals 0…n-1 each once, HIP ordinals
// distinct.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/environment.h"

namespace xcuda::runtime {
namespace {

std::vector<int> parsed(const std::string& text) {
  std::vector<int> map = {-7};
  EXPECT_TRUE(parse_device_map(text, map)) << text;
  return map;
}

TEST(HipDeviceMapTest, ReadsPairsInAnyOrder) {
  EXPECT_EQ(parsed("0:1,1:0"), (std::vector<int>{1, 0}));
  EXPECT_EQ(parsed("1:0,0:1"), (std::vector<int>{1, 0}));
  EXPECT_EQ(parsed("0:3"), (std::vector<int>{3}));
  EXPECT_EQ(parsed("0:2,1:0,2:1"), (std::vector<int>{2, 0, 1}));
}

TEST(HipDeviceMapTest, RefusesMalformedMapsAndLeavesTheResultAlone) {
  for (const char* text : {"",         ",",   "0",       "0:",      ":1",      "0:1,",   ",0:1",
                           "0:1,,1:0", "a:b", "0:-1",    "-1:0",    "0:1:2",   "0 :1",   "0:1,0:2",
                           "0:1,1:1",  "1:0", "0:0,2:1", "0:99999", "99999:0", "0:1;1:0"}) {
    std::vector<int> map = {-7};
    EXPECT_FALSE(parse_device_map(text, map)) << text;
    EXPECT_EQ(map, std::vector<int>{-7}) << text;
  }
}

}  // namespace
}  // namespace xcuda::runtime
