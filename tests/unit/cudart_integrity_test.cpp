// The integrity digest cudart checks: MD2 against RFC 1319's test suite, and the whole keyed
// digest against the worked example published by earlier clean-room work.
#include "src/cudart_integrity.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace {

std::string hex(const xcuda::api::Digest& digest, bool reversed = false) {
  std::string text;
  for (int index = 0; index < 16; ++index) {
    char byte[3];
    std::snprintf(byte, sizeof byte, "%02x", digest.bytes[reversed ? 15 - index : index]);
    text += byte;
  }
  return text;
}

std::string md2_of(std::string_view text) {
  return hex(xcuda::api::md2({reinterpret_cast<const uint8_t*>(text.data()), text.size()}));
}

TEST(Md2, Rfc1319TestSuite) {
  EXPECT_EQ(md2_of(""), "8350e5a3e24c153df2275c9f80692773");
  EXPECT_EQ(md2_of("a"), "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  EXPECT_EQ(md2_of("abc"), "da853b0d3f88d99b30283a69e6ded6bb");
  EXPECT_EQ(md2_of("message digest"), "ab4f496bfb2a530b219ff33031fe06b0");
  EXPECT_EQ(md2_of("abcdefghijklmnopqrstuvwxyz"), "4e8ddff3650292ab5a4108c3aa47940b");
  EXPECT_EQ(md2_of("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "d5976f79d83d3a0dc9806c3c66f3efd8");
}

TEST(IntegrityDigest, WorkedExample) {
  xcuda::api::IntegrityRecord record{12020,
                                     0x2B4A,
                                     0x4D08,
                                     0x2B78,
                                     reinterpret_cast<const void*>(0x7FF8C80717F0),
                                     reinterpret_cast<const void*>(0x7FF8C825E4B0),
                                     reinterpret_cast<const void*>(0x7FF8C7DD0AD0),
                                     0x64A365EE};
  xcuda::api::IntegrityDeviceRecord device{{0x67, 0x22, 0xCB, 0xCF, 0xC6, 0x61, 0xF2, 0x92, 0x74,
                                            0xD6, 0xED, 0x23, 0x2A, 0x32, 0x13, 0x1C},
                                           0, 4, 0};
  // The example states the digest as a little-endian 128-bit number.
  EXPECT_EQ(hex(xcuda::api::integrity_digest(record, {&device, 1}), true),
            "eaf1313342bfcd84a7c34628f214707a");
}

TEST(IntegrityDigest, FixedAnswersForVersionsEndingInZeroAndOne) {
  xcuda::api::IntegrityRecord record{};
  record.runtime_version = 13000;
  EXPECT_EQ(hex(xcuda::api::integrity_digest(record, {}), true),
            "8ed383aa1f4cd1e83341181c03cb675c");
  record.runtime_version = 13001;
  EXPECT_EQ(hex(xcuda::api::integrity_digest(record, {}), true),
            "8ed383aa1f4cd1e81841181c03cb675c");
}

}  // namespace
