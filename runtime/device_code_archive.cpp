#include "runtime/device_code_archive.h"

#include <charconv>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "runtime/fatbin_reader.h"

namespace xcuda::runtime {
namespace {

template <class Integer>
Integer read_little_endian(std::span<const uint8_t> bytes, size_t offset) {
  Integer value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);  // x86-64 and ELF64LE agree
  return value;
}

Error damaged(std::string_view name, std::string_view what) {
  return make_error(ErrorCode::invalid_image, fmt::format("{}: {}", name, what));
}

// ELF64 header and section header fields (the System V gABI).
constexpr uint8_t elf_magic[4] = {0x7f, 'E', 'L', 'F'};
constexpr uint8_t elf_class_64 = 2;
constexpr uint8_t elf_little_endian = 1;
constexpr size_t elf_header_bytes = 64;
constexpr size_t section_header_bytes = 64;
constexpr uint32_t section_without_data = 8;  // SHT_NOBITS

// Sections where nvcc puts a host object's device code.
bool is_device_code_section(std::string_view name) {
  return name == "__nv_relfatbin" || name == ".nv_fatbin";
}

Expected<std::vector<LinkInput>> section_device_code(std::span<const uint8_t> section,
                                                     int target_arch, std::string_view name) {
  auto fatbins = parse_fatbin_section(section);
  if (!fatbins) return damaged(name, fatbins.error().message);
  std::vector<LinkInput> inputs;
  for (const Fatbin& fatbin : *fatbins) {
    auto entry = select_ptx(fatbin.entries, target_arch);
    if (!entry)
      return make_error(entry.error().code, fmt::format("{}: {}", name, entry.error().message));
    auto text = extract_ptx(**entry);
    if (!text) return damaged(name, text.error().message);
    inputs.push_back({std::move(*text), std::string(name)});
  }
  return inputs;
}

bool is_elf(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof elf_magic && std::memcmp(bytes.data(), elf_magic, 4) == 0;
}

// An archive member: fatbin, PTX text, or ELF host object.
Expected<std::vector<LinkInput>> member_device_code(std::span<const uint8_t> member,
                                                    int target_arch, std::string_view name) {
  if (is_elf(member)) return object_device_code(member, target_arch, name);
  switch (classify_image(member.data(), member.size())) {
    case ImageKind::fatbin: {
      auto loaded = load_ptx(member.data(), target_arch, member.size());
      if (!loaded)
        return make_error(loaded.error().code, fmt::format("{}: {}", name, loaded.error().message));
      return std::vector<LinkInput>{{std::move(loaded->text), std::string(name)}};
    }
    case ImageKind::ptx_text: {
      const char* text = reinterpret_cast<const char*>(member.data());
      return std::vector<LinkInput>{
          {std::string(text, strnlen(text, member.size())), std::string(name)}};
    }
    default: return std::vector<LinkInput>{};  // no device code (a plain host object's data, say)
  }
}

}  // namespace

Expected<std::vector<LinkInput>> object_device_code(std::span<const uint8_t> object,
                                                    int target_arch, std::string_view name) {
  if (object.size() < elf_header_bytes || !is_elf(object) || object[4] != elf_class_64 ||
      object[5] != elf_little_endian)
    return damaged(name, "not a 64-bit little-endian ELF object");
  auto section_table = read_little_endian<uint64_t>(object, 0x28);
  auto entry_bytes = read_little_endian<uint16_t>(object, 0x3a);
  auto section_count = read_little_endian<uint16_t>(object, 0x3c);
  auto names_index = read_little_endian<uint16_t>(object, 0x3e);
  if (entry_bytes != section_header_bytes || section_table > object.size() ||
      uint64_t{section_count} * section_header_bytes > object.size() - section_table ||
      names_index >= section_count)
    return damaged(name, "the section header table lies outside the object");
  // Each section's [offset, offset + size), checked to lie inside the object.
  auto section = [&](size_t index) -> Expected<std::span<const uint8_t>> {
    size_t header = section_table + index * section_header_bytes;
    auto type = read_little_endian<uint32_t>(object, header + 4);
    auto offset = read_little_endian<uint64_t>(object, header + 0x18);
    auto size = read_little_endian<uint64_t>(object, header + 0x20);
    if (type == section_without_data) return std::span<const uint8_t>{};
    if (offset > object.size() || size > object.size() - offset)
      return damaged(name, fmt::format("section {} lies outside the object", index));
    return object.subspan(offset, size);
  };
  auto names = section(names_index);
  if (!names) return names.error();
  std::vector<LinkInput> inputs;
  for (size_t index = 0; index < section_count; ++index) {
    size_t header = section_table + index * section_header_bytes;
    auto name_offset = read_little_endian<uint32_t>(object, header);
    if (name_offset >= names->size()) return damaged(name, "a section name lies outside its table");
    const char* section_name = reinterpret_cast<const char*>(names->data()) + name_offset;
    if (!is_device_code_section(
            std::string_view(section_name, strnlen(section_name, names->size() - name_offset))))
      continue;
    auto data = section(index);
    if (!data) return data.error();
    auto found = section_device_code(*data, target_arch, name);
    if (!found) return found.error();
    for (LinkInput& input : *found) inputs.push_back(std::move(input));
  }
  return inputs;
}

Expected<std::vector<LinkInput>> archive_device_code(std::span<const uint8_t> archive,
                                                     int target_arch, std::string_view name) {
  // The common ar format: a magic line, then members, each a 60-byte text header (name, dates,
  // owner, mode, decimal size, "`\n") and its data padded to an even size. GNU ar keeps long
  // names in the member "//" and refers to them as "/offset"; "/" and "/SYM64/" are symbol
  // tables; BSD ar writes "#1/length" and puts the name before the data.
  constexpr std::string_view magic = "!<arch>\n";
  constexpr size_t header_bytes = 60;
  if (archive.size() < magic.size() || std::memcmp(archive.data(), magic.data(), magic.size()) != 0)
    return damaged(name, "not an ar archive");
  std::string_view long_names;
  std::vector<LinkInput> inputs;
  size_t at = magic.size();
  while (at + header_bytes <= archive.size()) {
    std::string_view header(reinterpret_cast<const char*>(archive.data() + at), header_bytes);
    if (header.substr(58, 2) != "`\n")
      return damaged(name, fmt::format("no member header at byte {}", at));
    std::string_view size_field = header.substr(48, 10);
    uint64_t size = 0;
    auto parsed = std::from_chars(size_field.data(), size_field.data() + size_field.size(), size);
    if (parsed.ec != std::errc{} || size > archive.size() - at - header_bytes)
      return damaged(name, fmt::format("the member at byte {} has a bad size", at));
    auto data = archive.subspan(at + header_bytes, size);
    at += header_bytes + size + (size & 1);
    std::string_view member = header.substr(0, 16);
    member = member.substr(0, member.find_last_not_of(' ') + 1);
    if (member == "/" || member == "/SYM64/" || member == "__.SYMDEF" ||
        member == "__.SYMDEF SORTED")
      continue;
    if (member == "//") {
      long_names = std::string_view(reinterpret_cast<const char*>(data.data()), data.size());
      continue;
    }
    if (member.starts_with("#1/")) {
      size_t name_bytes = 0;
      std::from_chars(member.data() + 3, member.data() + member.size(), name_bytes);
      if (name_bytes > data.size()) return damaged(name, "a member name lies outside the member");
      member = std::string_view(reinterpret_cast<const char*>(data.data()), name_bytes);
      member = member.substr(0, member.find('\0'));
      data = data.subspan(name_bytes);
    } else if (member.size() > 1 && member.front() == '/') {
      size_t offset = 0;
      std::from_chars(member.data() + 1, member.data() + member.size(), offset);
      if (offset >= long_names.size())
        return damaged(name, "a long member name lies outside its table");
      member = long_names.substr(offset, long_names.find('\n', offset) - offset);
    }
    if (member.ends_with('/')) member.remove_suffix(1);
    auto found = member_device_code(data, target_arch, fmt::format("{}({})", name, member));
    if (!found) return found.error();
    for (LinkInput& input : *found) inputs.push_back(std::move(input));
  }
  return inputs;
}

}  // namespace xcuda::runtime
