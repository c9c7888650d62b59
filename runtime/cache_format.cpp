#include "runtime/cache_format.h"

#include <algorithm>
#include <cstring>

#include "runtime/cache_hash.h"

namespace xcuda::runtime {
namespace {

constexpr char magic[8] = {'X', 'C', 'U', 'D', 'A', 'C', 'C', '\0'};
constexpr size_t checksum_offset = 24;

class Writer {
 public:
  void integer(uint64_t value, size_t bytes) {
    for (size_t index = 0; index < bytes; ++index) out_.push_back(uint8_t(value >> (8 * index)));
  }
  void u32(uint32_t value) { integer(value, 4); }
  void u64(uint64_t value) { integer(value, 8); }
  void bytes(std::span<const uint8_t> data) {
    u64(data.size());
    out_.insert(out_.end(), data.begin(), data.end());
  }
  void text(std::string_view data) {
    bytes({reinterpret_cast<const uint8_t*>(data.data()), data.size()});
  }
  std::vector<uint8_t>& result() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

// Reads the payload; the first failure sticks, so a caller checks once at the end and the
// message names the first field that did not fit.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> data) : data_(data) {}

  uint64_t integer(size_t bytes, std::string_view field) {
    if (!take(bytes, field)) return 0;
    uint64_t value = 0;
    for (size_t index = 0; index < bytes; ++index)
      value |= uint64_t(data_[position_ - bytes + index]) << (8 * index);
    return value;
  }
  uint32_t u32(std::string_view field) { return uint32_t(integer(4, field)); }
  uint64_t u64(std::string_view field) { return integer(8, field); }
  std::span<const uint8_t> bytes(std::string_view field) {
    uint64_t size = u64(field);
    if (!take(size, field)) return {};
    return data_.subspan(position_ - size, size);
  }
  std::string text(std::string_view field) {
    auto data = bytes(field);
    return {reinterpret_cast<const char*>(data.data()), data.size()};
  }
  // A count of records, each at least `minimum_record_bytes` long: bounds the reservation a
  // damaged count could otherwise blow up.
  uint64_t count(size_t minimum_record_bytes, std::string_view field) {
    uint64_t value = u64(field);
    if (failed() || value > (data_.size() - position_) / minimum_record_bytes) {
      fail(field);
      return 0;
    }
    return value;
  }
  bool failed() const { return !problem_.empty(); }
  bool at_end() const { return position_ == data_.size(); }
  size_t position() const { return position_; }
  const std::string& problem() const { return problem_; }

 private:
  bool take(uint64_t size, std::string_view field) {
    if (failed()) return false;
    if (size > data_.size() - position_) {
      fail(field);
      return false;
    }
    position_ += size;
    return true;
  }
  void fail(std::string_view field) {
    if (!failed())
      problem_ = std::string(field) + " at payload offset " + std::to_string(position_) +
                 " runs past the end";
  }

  std::span<const uint8_t> data_;
  size_t position_ = 0;
  std::string problem_;
};

void write_kernel(Writer& out, const ptx::KernelInfo& kernel) {
  out.text(kernel.name);
  out.u64(kernel.parameters.size());
  for (const ptx::ParameterInfo& parameter : kernel.parameters) {
    out.u32(parameter.offset);
    out.u32(parameter.size);
    out.u32(parameter.alignment);
  }
  out.u32(kernel.parameter_buffer_size);
  out.u32(kernel.static_shared_bytes);
  out.u32(kernel.local_bytes_per_thread);
  out.u32(kernel.max_threads_per_block);
  for (uint32_t extent : kernel.required_block) out.u32(extent);
  out.u32(kernel.host_stack_bytes_per_thread);
  out.u32(kernel.uses_dynamic_stack);
  out.u32(kernel.whole_warps_only);
}

ptx::KernelInfo read_kernel(Reader& in) {
  ptx::KernelInfo kernel;
  kernel.name = in.text("kernel name");
  kernel.parameters.resize(in.count(12, "parameter count"));
  for (ptx::ParameterInfo& parameter : kernel.parameters) {
    parameter.offset = in.u32("parameter offset");
    parameter.size = in.u32("parameter size");
    parameter.alignment = in.u32("parameter alignment");
  }
  kernel.parameter_buffer_size = in.u32("parameter buffer size");
  kernel.static_shared_bytes = in.u32("static shared bytes");
  kernel.local_bytes_per_thread = in.u32("local bytes");
  kernel.max_threads_per_block = in.u32("max threads per block");
  for (uint32_t& extent : kernel.required_block) extent = in.u32("required block");
  kernel.host_stack_bytes_per_thread = in.u32("host stack bytes");
  kernel.uses_dynamic_stack = in.u32("uses dynamic stack") != 0;
  kernel.whole_warps_only = in.u32("whole warps only") != 0;
  return kernel;
}

Error damaged(std::string message) {
  return make_error(ErrorCode::invalid_image, std::move(message));
}

}  // namespace

std::vector<uint8_t> serialize_entry(std::string_view key, const ptx::CompileResult& compiled) {
  Writer payload;
  payload.text(key);
  payload.bytes(compiled.object);
  payload.u64(compiled.module.kernels.size());
  for (const ptx::KernelInfo& kernel : compiled.module.kernels) write_kernel(payload, kernel);
  payload.u64(compiled.module.globals.size());
  for (const ptx::GlobalInfo& global : compiled.module.globals) {
    payload.text(global.name);
    payload.u64(global.size);
    payload.u32(global.is_constant ? 1 : global.is_managed ? 2 : 0);
  }

  Writer entry;
  for (char byte : magic) entry.integer(uint8_t(byte), 1);
  entry.u32(entry_format_version);
  entry.u32(0);
  entry.u64(payload.result().size());
  for (uint8_t byte : sha256(payload.result())) entry.integer(byte, 1);
  std::vector<uint8_t>& result = entry.result();
  result.insert(result.end(), payload.result().begin(), payload.result().end());
  return std::move(result);
}

Expected<ptx::CompileResult> parse_entry(std::span<const uint8_t> bytes, std::string_view key) {
  if (bytes.size() < entry_header_bytes)
    return damaged("truncated header: " + std::to_string(bytes.size()) + " bytes");
  if (std::memcmp(bytes.data(), magic, sizeof magic) != 0) return damaged("bad magic number");
  Reader header(bytes.subspan(sizeof magic, entry_header_bytes - sizeof magic));
  uint32_t version = header.u32("version");
  uint32_t reserved = header.u32("reserved");
  uint64_t payload_size = header.u64("payload size");
  if (version != entry_format_version)
    return damaged("format version " + std::to_string(version) + ", expected " +
                   std::to_string(entry_format_version));
  if (reserved != 0) return damaged("reserved header field is not zero");
  std::span<const uint8_t> payload = bytes.subspan(entry_header_bytes);
  if (payload_size != payload.size())
    return damaged("header says " + std::to_string(payload_size) + " payload bytes, file has " +
                   std::to_string(payload.size()));
  Digest checksum = sha256(payload);
  if (!std::equal(checksum.begin(), checksum.end(), bytes.begin() + checksum_offset))
    return damaged("checksum mismatch");

  Reader in(payload);
  if (in.text("key") != key && !in.failed()) return damaged("entry belongs to another key");
  ptx::CompileResult compiled;
  auto object = in.bytes("object");
  compiled.object.assign(object.begin(), object.end());
  // The smallest kernel record is its name's length plus fixed fields: 8 + 8 + 4 * 8.
  compiled.module.kernels.resize(in.count(48, "kernel count"));
  for (ptx::KernelInfo& kernel : compiled.module.kernels) kernel = read_kernel(in);
  compiled.module.globals.resize(in.count(20, "global count"));
  for (ptx::GlobalInfo& global : compiled.module.globals) {
    global.name = in.text("global name");
    global.size = in.u64("global size");
    uint32_t kind = in.u32("global kind");
    if (kind > 2) return damaged("global kind " + std::to_string(kind) + ", expected 0 (.global), 1 (.const) or 2 (managed)");
    global.is_constant = kind == 1;
    global.is_managed = kind == 2;
  }
  if (in.failed()) return damaged(in.problem());
  if (!in.at_end())
    return damaged("trailing bytes after payload offset " + std::to_string(in.position()));
  return compiled;
}

}  // namespace xcuda::runtime
