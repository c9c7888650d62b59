// A code object's AMDGPU metadata (the NT_AMDGPU_METADATA note), read through comgr exactly as
// the HIP runtime reads it, turned into a plain tree for assertions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xcuda::amdgpu_test {

struct MetadataNode {
  std::string text;  // a string or a number, as comgr gives both
  std::vector<MetadataNode> list;
  std::map<std::string, MetadataNode> map;

  // The value under `key`; an empty node where there is none.
  const MetadataNode& operator[](const std::string& key) const;
  uint64_t number() const { return text.empty() ? UINT64_MAX : std::stoull(text); }
};

// Fills `metadata` and returns an empty string, or says what comgr refused.
std::string read_metadata(const std::vector<uint8_t>& code_object, MetadataNode& metadata);

}  // namespace xcuda::amdgpu_test
