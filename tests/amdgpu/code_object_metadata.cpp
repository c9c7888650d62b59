#include "code_object_metadata.h"

#include <amd_comgr.h>

namespace xcuda::amdgpu_test {
namespace {

bool convert(amd_comgr_metadata_node_t node, MetadataNode& into);

amd_comgr_status_t convert_entry(amd_comgr_metadata_node_t key, amd_comgr_metadata_node_t value, void* user_data) {
  auto& map = *static_cast<MetadataNode*>(user_data);
  MetadataNode name;
  if (!convert(key, name)) return AMD_COMGR_STATUS_ERROR;
  return convert(value, map.map[name.text]) ? AMD_COMGR_STATUS_SUCCESS : AMD_COMGR_STATUS_ERROR;
}

bool convert(amd_comgr_metadata_node_t node, MetadataNode& into) {
  amd_comgr_metadata_kind_t kind;
  if (amd_comgr_get_metadata_kind(node, &kind) != AMD_COMGR_STATUS_SUCCESS) return false;
  if (kind == AMD_COMGR_METADATA_KIND_STRING) {
    size_t size = 0;
    if (amd_comgr_get_metadata_string(node, &size, nullptr) != AMD_COMGR_STATUS_SUCCESS) return false;
    std::string text(size, '\0');
    if (amd_comgr_get_metadata_string(node, &size, text.data()) != AMD_COMGR_STATUS_SUCCESS) return false;
    if (!text.empty() && text.back() == '\0') text.pop_back();
    into.text = std::move(text);
    return true;
  }
  if (kind == AMD_COMGR_METADATA_KIND_MAP)
    return amd_comgr_iterate_map_metadata(node, convert_entry, &into) == AMD_COMGR_STATUS_SUCCESS;
  if (kind == AMD_COMGR_METADATA_KIND_LIST) {
    size_t size = 0;
    if (amd_comgr_get_metadata_list_size(node, &size) != AMD_COMGR_STATUS_SUCCESS) return false;
    into.list.resize(size);
    for (size_t index = 0; index < size; ++index) {
      amd_comgr_metadata_node_t element;
      if (amd_comgr_index_list_metadata(node, index, &element) != AMD_COMGR_STATUS_SUCCESS) return false;
      bool converted = convert(element, into.list[index]);
      amd_comgr_destroy_metadata(element);
      if (!converted) return false;
    }
    return true;
  }
  return true;  // null
}

}  // namespace

const MetadataNode& MetadataNode::operator[](const std::string& key) const {
  static const MetadataNode none;
  auto found = map.find(key);
  return found == map.end() ? none : found->second;
}

std::string read_metadata(const std::vector<uint8_t>& code_object, MetadataNode& metadata) {
  amd_comgr_data_t data;
  if (amd_comgr_create_data(AMD_COMGR_DATA_KIND_EXECUTABLE, &data) != AMD_COMGR_STATUS_SUCCESS) return "amd_comgr_create_data failed";
  std::string problem;
  amd_comgr_metadata_node_t root;
  if (amd_comgr_set_data(data, code_object.size(), reinterpret_cast<const char*>(code_object.data())) != AMD_COMGR_STATUS_SUCCESS)
    problem = "amd_comgr_set_data failed";
  else if (amd_comgr_get_data_metadata(data, &root) != AMD_COMGR_STATUS_SUCCESS)
    problem = "amd_comgr_get_data_metadata found no metadata";
  else {
    if (!convert(root, metadata)) problem = "comgr could not walk the metadata";
    amd_comgr_destroy_metadata(root);
  }
  amd_comgr_release_data(data);
  return problem;
}

}  // namespace xcuda::amdgpu_test
