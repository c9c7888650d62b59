#include "runtime/cache_dump.h"

#include <filesystem>
#include <fstream>

#include "runtime/environment.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

void write(const std::string& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
  out.close();
  if (!out) logger().warn("XCUDA_DUMP_DIR: cannot write {}", path);
}

}  // namespace

std::string dump_prefix(std::string_view module_key, std::optional<size_t> kernel_index) {
  const std::string& directory = environment().dump_directory;
  if (directory.empty()) return {};
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  std::string prefix = (std::filesystem::path(directory) / std::string(module_key)).string();
  if (kernel_index) prefix += "." + std::to_string(*kernel_index);
  return prefix;
}

void dump_ptx(std::string_view module_key, std::string_view ptx_text) {
  std::string prefix = dump_prefix(module_key, std::nullopt);
  if (!prefix.empty()) write(prefix + ".ptx", ptx_text.data(), ptx_text.size());
}

void dump_object(const std::string& prefix, const ptx::CompileResult& compiled) {
  if (!prefix.empty()) write(prefix + ".o", compiled.object.data(), compiled.object.size());
}

}  // namespace xcuda::runtime
