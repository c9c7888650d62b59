#include "runtime/cache_dump.h"

#include <filesystem>
#include <fstream>

#include "runtime/environment.h"
#include "runtime/log.h"

namespace xcuda::runtime {
namespace {

void write(const std::filesystem::path& path, const void* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), std::streamsize(size));
  out.close();
  if (!out) logger().warn("XCUDA_DUMP_DIR: cannot write {}", path.string());
}

}  // namespace

void dump_module(std::string_view key, std::string_view ptx_text,
                 const ptx::CompileResult& compiled) {
  const std::string& directory = environment().dump_directory;
  if (directory.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  std::filesystem::path base = std::filesystem::path(directory) / std::string(key);
  write(base.string() + ".ptx", ptx_text.data(), ptx_text.size());
  write(base.string() + ".o", compiled.object.data(), compiled.object.size());
}

}  // namespace xcuda::runtime
