// The layouts here are undocumented by NVIDIA. Each field was confirmed on CUDA 13.0.88 by
// hex-dumping the output of `nvcc -fatbin` (default, --compress-mode=speed/none, -G,
// -Xfatbin -compress-all, several -gencode archs incl. sm_90a, sm_100f, sm_120, lto_80),
// `fatbinary --create` (--32, -g, --ident, --cmdline, --compress=false, hand-edited .version),
// and the .nvFatBinSegment/.nv_fatbin/__nv_relfatbin sections of nvcc-linked executables
// (with and without -rdc). All integers are little-endian.
//
// Wrapper (cudart's __fatBinC_Wrapper_t, 24 bytes, in .nvFatBinSegment):
//   +0x00 u32 magic 0x466243B1
//   +0x04 u32 version: 1 for whole-program code, 2 with -rdc and for cudart's own fatbin
//   +0x08 u64 pointer to the fatbin (into .nv_fatbin, or __nv_relfatbin for -rdc objects)
//   +0x10 u64 pointer to a prelinked list, in .bss for version 2, else null
//
// Fatbin header (16 bytes); fatbins of several translation units lie back to back in
// .nv_fatbin, each starting right where the previous one's payload ends:
//   +0x00 u32 magic 0xBA55ED50
//   +0x04 u16 version, always 1
//   +0x06 u16 header size, always 16; the payload starts there
//   +0x08 u64 payload size, the bytes after the header
//
// Entry header, 0x40 bytes or more; entries tile the payload exactly and the next entry starts
// at header size + padded payload size:
//   +0x00 u16 kind: 1 PTX, 2 ELF (SASS), 8 LTO IR
//   +0x02 u16 version, always 0x0101
//   +0x04 u32 header size: 0x40 for ELF; 0x50 for PTX (room for the options block); more with
//             an identifier or options string; 0x70 for sm_100+/sm_120 ELF
//   +0x08 u64 padded payload size, a multiple of 8. Read as u64: the high half was always 0,
//             and reading it whole makes a stray high word an oversized-entry error rather than
//             a silently misplaced next entry.
//   +0x10 u32 stored payload size when compressed (0x164 of 0x168 padded); 0 when not
//             compressed, in which case the whole padded size is payload (PTX then ends in NULs)
//   +0x14 u32 offset, from the entry start, of an options block {u32 offset, u32 size} (also
//             entry-relative); 0 when absent. For PTX it holds the ptxas options (" -g
//             --dont-merge-basicblocks --return-at-end" with -G, "-O2 -v" from --cmdline;
//             size excludes the NUL); for sm_100+ ELF 36 bytes of binary data.
//   +0x18 u16 minor, +0x1a u16 major: for PTX the ISA version (9.0; 8.3 and 7.5 after editing
//             the .version line); 1.8 for ELF; 1.65 for LTO IR
//   +0x1c u32 arch: 75, 80, 90, 100, 120 (no a/f suffix: see the flags)
//   +0x20 u32 identifier offset, +0x24 u32 identifier size (entry-relative, size without NUL):
//             the source file with -G, the --ident of fatbinary; 0/0 otherwise
//   +0x28 u64 flags: 0x1 64-bit (gone with --32), 0x2 debug (-G, -g), 0x10 always set on Linux
//             builds, 0x2000 LZ4, 0x8000 zstd, 0x10000 LTO IR, 0x100000 arch-specific (sm_90a),
//             0x200000 family-specific (sm_100f), 0x1000000 on sm_100+/sm_120 ELF
//   +0x30 u64 0, except a hash-like value on LTO IR entries
//   +0x38 u64 uncompressed size when compressed (a PTX's includes its terminating NUL); else 0
//
// nvcc 13 zstd-compresses PTX by default (one frame, content size in the frame header); with
// --compress-mode=speed it writes one raw LZ4 block; --compress-mode=none and --no-compress
// store plain text; -Xfatbin -compress-all compresses the ELF too. LTO IR carries the zstd flag
// but is not a zstd frame (it is opaque to us and never extracted). PTX that nvcc embeds has its
// comment lines blanked, so it starts with newlines and then `.version`.
#include "runtime/fatbin_reader.h"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <memory>

namespace xcuda::runtime {
namespace {

constexpr size_t wrapper_size = 24;
constexpr size_t fatbin_header_size = 16;
constexpr size_t entry_header_min_size = 0x40;

// The magics 0x466243B1, 0xBA55ED50 and "\x7FELF" as they lie in memory. All their bytes are
// non-zero, so matching byte by byte stops at the terminator of a short PTX string instead of
// reading past it.
constexpr std::array<uint8_t, 4> wrapper_magic_bytes = {0xB1, 0x43, 0x62, 0x46};
constexpr std::array<uint8_t, 4> fatbin_magic_bytes = {0x50, 0xED, 0x55, 0xBA};
constexpr std::array<uint8_t, 4> elf_magic_bytes = {0x7F, 'E', 'L', 'F'};

template <class T>
T load(const uint8_t* bytes) {
  T value;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

std::string hex(uint64_t value) {
  std::array<char, 20> digits{};
  auto result = std::to_chars(digits.data(), digits.data() + digits.size(), value, 16);
  return "0x" + std::string(digits.data(), result.ptr);
}

Error image_error(std::string message) {
  return make_error(ErrorCode::invalid_image, std::move(message));
}

bool starts_with_bytes(const uint8_t* image, size_t size_bound, std::span<const uint8_t> magic) {
  for (size_t i = 0; i < magic.size(); ++i) {
    if (i >= size_bound || image[i] != magic[i]) return false;
  }
  return true;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Skips whitespace and // or /* */ comments, then expects the `.version` directive the PTX
// grammar requires first. Reads a byte only after the previous one proved non-NUL.
bool looks_like_ptx(const char* text, size_t size_bound) {
  auto at = [&](size_t i) { return i < size_bound ? text[i] : '\0'; };
  size_t i = 0;
  while (true) {
    while (is_space(at(i))) ++i;
    if (at(i) != '/') break;
    if (at(i + 1) == '/') {
      while (at(i) != '\0' && at(i) != '\n') ++i;
    } else if (at(i + 1) == '*') {
      i += 2;
      while (at(i) != '\0' && !(at(i) == '*' && at(i + 1) == '/')) ++i;
      if (at(i) == '\0') return false;
      i += 2;
    } else {
      return false;
    }
  }
  constexpr std::string_view directive = ".version";
  for (size_t k = 0; k < directive.size(); ++k) {
    if (at(i + k) != directive[k]) return false;
  }
  return true;
}

bool all_zero(std::span<const uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

// A sub-range [offset, offset + size) of an entry header, or an error naming the field.
Expected<std::string_view> header_string(std::span<const uint8_t> header, uint64_t offset,
                                         uint64_t size, std::string_view field,
                                         const std::string& where) {
  if (size == 0) return std::string_view{};
  if (offset > header.size() || size > header.size() - offset) {
    return image_error(where + ": " + std::string(field) + " at " + hex(offset) + " size " +
                       std::to_string(size) + " lies outside the " + std::to_string(header.size()) +
                       "-byte entry header");
  }
  return std::string_view(reinterpret_cast<const char*>(header.data() + offset), size);
}

struct ParsedEntry {
  FatbinEntry entry;
  size_t extent = 0;  // header plus padded payload: where the next entry starts
};

// Parses the entry at `entry_offset` of `fatbin` (which starts with its 16-byte header).
Expected<ParsedEntry> parse_entry(std::span<const uint8_t> fatbin, size_t entry_offset,
                                  size_t index, const std::string& fatbin_where) {
  const std::string where =
      fatbin_where + ": entry " + std::to_string(index) + " at offset " + hex(entry_offset);
  const std::span<const uint8_t> rest = fatbin.subspan(entry_offset);
  if (rest.size() < entry_header_min_size) {
    return image_error(where + ": " + std::to_string(rest.size()) + " bytes left, fewer than a " +
                       std::to_string(entry_header_min_size) + "-byte entry header");
  }
  const uint8_t* raw = rest.data();
  const uint32_t header_size = load<uint32_t>(raw + 0x04);
  const uint64_t padded_size = load<uint64_t>(raw + 0x08);
  const uint32_t stored_size = load<uint32_t>(raw + 0x10);
  const uint32_t options_ref = load<uint32_t>(raw + 0x14);
  const uint64_t flags = load<uint64_t>(raw + 0x28);

  if (header_size < entry_header_min_size) {
    return image_error(where + ": header size " + std::to_string(header_size) + " smaller than " +
                       std::to_string(entry_header_min_size));
  }
  if (header_size > rest.size()) {
    return image_error(where + ": header size " + std::to_string(header_size) + " exceeds the " +
                       std::to_string(rest.size()) + " bytes left in the fatbin");
  }
  if (padded_size > rest.size() - header_size) {
    return image_error(where + ": payload size " + std::to_string(padded_size) + " exceeds the " +
                       std::to_string(rest.size() - header_size) + " bytes left in the fatbin");
  }

  FatbinEntry entry;
  entry.kind = static_cast<FatbinEntryKind>(load<uint16_t>(raw + 0x00));
  entry.format_version = load<uint16_t>(raw + 0x02);
  entry.code_version_minor = load<uint16_t>(raw + 0x18);
  entry.code_version_major = load<uint16_t>(raw + 0x1a);
  entry.arch = load<uint32_t>(raw + 0x1c);
  entry.flags = flags;
  entry.offset = entry_offset;
  entry.index = index;

  const bool lz4 = (flags & fatbin_flags::lz4) != 0;
  const bool zstd = (flags & fatbin_flags::zstd) != 0;
  if (lz4 && zstd) {
    return image_error(where + ": flags " + hex(flags) + " claim both LZ4 and zstd");
  }
  entry.compression = lz4 ? Compression::lz4 : zstd ? Compression::zstd : Compression::none;

  const uint8_t* payload_start = raw + header_size;
  if (entry.compression == Compression::none) {
    entry.payload = {payload_start, static_cast<size_t>(padded_size)};
    entry.uncompressed_size = padded_size;
  } else {
    if (stored_size == 0 || stored_size > padded_size) {
      return image_error(where + ": compressed size " + std::to_string(stored_size) +
                         " is not within the padded size " + std::to_string(padded_size));
    }
    entry.uncompressed_size = load<uint64_t>(raw + 0x38);
    if (entry.uncompressed_size == 0 || entry.uncompressed_size > max_image_bytes) {
      return image_error(where + ": uncompressed size " + std::to_string(entry.uncompressed_size) +
                         " is not in 1.." + std::to_string(max_image_bytes));
    }
    entry.payload = {payload_start, stored_size};
  }

  const std::span<const uint8_t> header = rest.first(header_size);
  auto identifier = header_string(header, load<uint32_t>(raw + 0x20), load<uint32_t>(raw + 0x24),
                                  "identifier", where);
  if (!identifier) return identifier.error();
  entry.identifier = *identifier;

  if (options_ref != 0) {
    if (options_ref > header_size || header_size - options_ref < 8) {
      return image_error(where + ": options block at " + hex(options_ref) + " lies outside the " +
                         std::to_string(header_size) + "-byte entry header");
    }
    auto options = header_string(header, load<uint32_t>(raw + options_ref),
                                 load<uint32_t>(raw + options_ref + 4), "options", where);
    if (!options) return options.error();
    entry.options = *options;
  }
  return ParsedEntry{std::move(entry), static_cast<size_t>(header_size + padded_size)};
}

std::string join(const std::vector<std::string>& parts) {
  std::string result;
  for (const std::string& part : parts) {
    if (!result.empty()) result += ", ";
    result += part;
  }
  return result;
}

bool ptx_fits(const FatbinEntry& entry, uint32_t target) {
  if (!entry.is_ptx() || !entry.is_64_bit() || entry.arch > target) return false;
  if ((entry.flags & fatbin_flags::arch_specific) != 0 && entry.arch != target) return false;
  // Families share the major version: compute_100f also runs on sm_103, compute_120f on sm_121.
  if ((entry.flags & fatbin_flags::family_specific) != 0 && entry.arch / 10 != target / 10) {
    return false;
  }
  return true;
}

bool is_generic(const FatbinEntry& entry) {
  return (entry.flags & (fatbin_flags::arch_specific | fatbin_flags::family_specific)) == 0;
}

Error no_ptx_error(std::span<const FatbinEntry> entries, int target_arch) {
  const std::string target = "sm_" + std::to_string(target_arch);
  if (entries.empty()) {
    return make_error(ErrorCode::no_binary_for_gpu, "no PTX for " + target + ": no entries");
  }
  std::vector<std::string> ptx;
  std::vector<std::string> others;
  bool only_elf = true;
  for (const FatbinEntry& entry : entries) {
    if (entry.is_ptx()) {
      ptx.push_back(entry.name() + (entry.is_64_bit() ? "" : " (32-bit)"));
    } else {
      others.push_back(entry.name());
      only_elf = only_elf && entry.is_elf();
    }
  }
  if (ptx.empty()) {
    return make_error(ErrorCode::no_binary_for_gpu, only_elf
                                                        ? "no PTX: only SASS for " + join(others)
                                                        : "no PTX: only " + join(others));
  }
  return make_error(ErrorCode::no_binary_for_gpu,
                    "no PTX usable on " + target + ": only " + join(ptx) +
                        " (newer, 32-bit, or for another architecture)");
}

Expected<std::string> decompress_zstd(const FatbinEntry& entry, const std::string& where) {
  // Check the frames' own content sizes first so a corrupted declared size cannot make us
  // allocate up to max_image_bytes for nothing.
  std::span<const uint8_t> frames = entry.payload;
  uint64_t content_total = 0;
  bool sizes_known = true;
  while (!frames.empty() && sizes_known) {
    const size_t frame_size = ZSTD_findFrameCompressedSize(frames.data(), frames.size());
    const unsigned long long content = ZSTD_getFrameContentSize(frames.data(), frames.size());
    if (ZSTD_isError(frame_size) || content == ZSTD_CONTENTSIZE_ERROR) {
      return image_error(where + ": payload is not valid zstd data");
    }
    sizes_known = content != ZSTD_CONTENTSIZE_UNKNOWN;
    content_total += content;
    frames = frames.subspan(frame_size);
  }
  if (sizes_known && content_total != entry.uncompressed_size) {
    return image_error(where + ": zstd frames hold " + std::to_string(content_total) +
                       " bytes, the entry declares " + std::to_string(entry.uncompressed_size));
  }

  // Stream into a buffer that grows with what the frames really produce: a frame without a
  // content size could otherwise make a lying entry cost its whole declared size up front.
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (stream == nullptr) return image_error(where + ": zstd: out of memory");
  std::string output;
  ZSTD_inBuffer input{entry.payload.data(), entry.payload.size(), 0};
  size_t produced = 0;
  // Non-zero while a frame is unfinished: the decoder may hold output it has not flushed yet.
  size_t unfinished = 0;
  while (input.pos < input.size || unfinished != 0) {
    if (produced == output.size() && output.size() < entry.uncompressed_size) {
      output.resize(std::min<uint64_t>(entry.uncompressed_size, std::max<uint64_t>(2 * output.size(), 1 << 16)));
    }
    const size_t consumed_before = input.pos;
    ZSTD_outBuffer out{output.data(), output.size(), produced};
    unfinished = ZSTD_decompressStream(stream.get(), &out, &input);
    if (ZSTD_isError(unfinished)) return image_error(where + ": zstd: " + ZSTD_getErrorName(unfinished));
    if (out.pos == produced && input.pos == consumed_before) {
      return image_error(where + (produced == entry.uncompressed_size
                                      ? ": zstd data holds more than the " + std::to_string(produced) + " bytes the entry declares"
                                      : std::string(": zstd data is truncated")));
    }
    produced = out.pos;
  }
  if (produced != entry.uncompressed_size) {
    return image_error(where + ": zstd gave " + std::to_string(produced) + " bytes, the entry declares " +
                       std::to_string(entry.uncompressed_size));
  }
  return output;
}

Expected<std::string> decompress_lz4(const FatbinEntry& entry, const std::string& where) {
  // One LZ4 sequence byte expands to at most 255 bytes, so a larger declared size is a lie;
  // rejecting it avoids a large pointless allocation.
  const uint64_t expansion_limit = (uint64_t{entry.payload.size()} + 1) * 255;
  if (entry.payload.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      entry.uncompressed_size > expansion_limit) {
    return image_error(where + ": LZ4 payload of " + std::to_string(entry.payload.size()) +
                       " bytes cannot expand to " + std::to_string(entry.uncompressed_size));
  }
  std::string output(entry.uncompressed_size, '\0');
  const int produced =
      LZ4_decompress_safe(reinterpret_cast<const char*>(entry.payload.data()), output.data(),
                          static_cast<int>(entry.payload.size()), static_cast<int>(output.size()));
  if (produced < 0) return image_error(where + ": LZ4 payload is corrupted");
  if (static_cast<uint64_t>(produced) != output.size()) {
    return image_error(where + ": LZ4 gave " + std::to_string(produced) +
                       " bytes, the entry declares " + std::to_string(output.size()));
  }
  return output;
}

}  // namespace

std::string_view to_string(ImageKind kind) {
  switch (kind) {
    case ImageKind::fatbin_wrapper: return "fatbin wrapper";
    case ImageKind::fatbin: return "fatbin";
    case ImageKind::ptx_text: return "PTX text";
    case ImageKind::elf: return "ELF";
    case ImageKind::unknown: break;
  }
  return "unknown";
}

ImageKind classify_image(const void* image, size_t size_bound) {
  if (image == nullptr || size_bound == 0) return ImageKind::unknown;
  const auto* bytes = static_cast<const uint8_t*>(image);
  if (starts_with_bytes(bytes, size_bound, fatbin_magic_bytes)) return ImageKind::fatbin;
  // An image known to be shorter than a wrapper cannot be one (a fuzz finding: read_wrapper
  // then read past its end).
  if (size_bound >= wrapper_size && starts_with_bytes(bytes, size_bound, wrapper_magic_bytes)) {
    return ImageKind::fatbin_wrapper;
  }
  if (starts_with_bytes(bytes, size_bound, elf_magic_bytes)) return ImageKind::elf;
  if (looks_like_ptx(static_cast<const char*>(image), size_bound)) return ImageKind::ptx_text;
  return ImageKind::unknown;
}

Expected<FatbinWrapper> read_wrapper(const void* image) {
  if (image == nullptr) return make_error(ErrorCode::invalid_value, "fatbin wrapper is null");
  const auto* bytes = static_cast<const uint8_t*>(image);
  if (!starts_with_bytes(bytes, wrapper_size, wrapper_magic_bytes)) {
    return image_error("fatbin wrapper: bad magic");
  }
  FatbinWrapper wrapper;
  wrapper.version = load<uint32_t>(bytes + 0x04);
  wrapper.fatbin = reinterpret_cast<const void*>(load<uintptr_t>(bytes + 0x08));
  wrapper.prelinked_list = reinterpret_cast<const void*>(load<uintptr_t>(bytes + 0x10));
  if (wrapper.version != 1 && wrapper.version != 2) {
    return image_error("fatbin wrapper: unknown version " + std::to_string(wrapper.version));
  }
  if (wrapper.fatbin == nullptr) return image_error("fatbin wrapper: null fatbin pointer");
  return wrapper;
}

std::string FatbinEntry::name() const {
  const char* suffix = (flags & fatbin_flags::arch_specific)     ? "a"
                       : (flags & fatbin_flags::family_specific) ? "f"
                                                                 : "";
  const std::string number = std::to_string(arch) + suffix;
  switch (kind) {
    case FatbinEntryKind::ptx: return "compute_" + number;
    case FatbinEntryKind::elf: return "sm_" + number;
    case FatbinEntryKind::lto_ir: return "lto_" + number;
  }
  return "kind " + std::to_string(static_cast<uint16_t>(kind)) + " arch " + number;
}

Expected<Fatbin> parse_fatbin(const void* data, size_t size_bound) {
  if (data == nullptr) return make_error(ErrorCode::invalid_value, "fatbin pointer is null");
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (size_bound < fatbin_header_size) {
    return image_error("fatbin: " + std::to_string(size_bound) + " bytes, fewer than the " +
                       std::to_string(fatbin_header_size) + "-byte header");
  }
  if (!starts_with_bytes(bytes, size_bound, fatbin_magic_bytes)) {
    return image_error("fatbin: bad magic");
  }
  const uint16_t version = load<uint16_t>(bytes + 0x04);
  const uint16_t header_size = load<uint16_t>(bytes + 0x06);
  const uint64_t payload_size = load<uint64_t>(bytes + 0x08);
  if (version != 1) return image_error("fatbin: unknown version " + std::to_string(version));
  if (header_size < fatbin_header_size) {
    return image_error("fatbin: header size " + std::to_string(header_size) + " smaller than " +
                       std::to_string(fatbin_header_size));
  }
  if (payload_size > max_image_bytes) {
    return image_error("fatbin: payload size " + std::to_string(payload_size) + " exceeds the " +
                       std::to_string(max_image_bytes) + "-byte limit");
  }
  const uint64_t total_size = header_size + payload_size;
  if (size_bound != unknown_size && total_size > size_bound) {
    return image_error("fatbin: header declares " + std::to_string(total_size) + " bytes, only " +
                       std::to_string(size_bound) + " available");
  }

  Fatbin fatbin;
  fatbin.total_size = static_cast<size_t>(total_size);
  const std::span<const uint8_t> whole(bytes, fatbin.total_size);
  size_t offset = header_size;
  while (offset < whole.size()) {
    const std::span<const uint8_t> rest = whole.subspan(offset);
    // Tolerate zero padding after the last entry; nvcc never writes any, but it is harmless.
    if (rest.size() < entry_header_min_size && all_zero(rest)) break;
    auto parsed = parse_entry(whole, offset, fatbin.entries.size(), "fatbin");
    if (!parsed) return parsed.error();
    offset += parsed->extent;
    fatbin.entries.push_back(std::move(parsed->entry));
  }
  return fatbin;
}

Expected<std::vector<Fatbin>> parse_fatbin_section(std::span<const uint8_t> section) {
  std::vector<Fatbin> fatbins;
  size_t offset = 0;
  while (true) {
    while (offset < section.size() && section[offset] == 0) ++offset;  // alignment padding
    if (offset == section.size()) break;
    auto fatbin = parse_fatbin(section.data() + offset, section.size() - offset);
    if (!fatbin) {
      Error error = fatbin.error();
      error.message = "section offset " + hex(offset) + ": " + error.message;
      return error;
    }
    fatbin->offset = offset;
    offset += fatbin->total_size;
    fatbins.push_back(std::move(*fatbin));
  }
  return fatbins;
}

Expected<const FatbinEntry*> select_ptx(std::span<const FatbinEntry> entries, int target_arch) {
  if (target_arch <= 0) {
    return make_error(ErrorCode::invalid_value,
                      "target architecture " + std::to_string(target_arch) + " is not positive");
  }
  const auto target = static_cast<uint32_t>(target_arch);
  const FatbinEntry* best = nullptr;
  for (const FatbinEntry& entry : entries) {
    if (!ptx_fits(entry, target)) continue;
    // At equal arch prefer generic PTX over sm_XXa/f: it avoids the architecture-only
    // instructions our CPU compiler is least likely to support.
    if (best == nullptr || entry.arch > best->arch ||
        (entry.arch == best->arch && is_generic(entry) && !is_generic(*best))) {
      best = &entry;
    }
  }
  if (best == nullptr) return no_ptx_error(entries, target_arch);
  return best;
}

Expected<std::string> extract_payload(const FatbinEntry& entry) {
  const std::string where = "entry " + std::to_string(entry.index) + " (" + entry.name() + ")";
  if (entry.uncompressed_size > max_image_bytes) {
    return image_error(where + ": uncompressed size " + std::to_string(entry.uncompressed_size) +
                       " exceeds the " + std::to_string(max_image_bytes) + "-byte limit");
  }
  switch (entry.compression) {
    case Compression::zstd: return decompress_zstd(entry, where);
    case Compression::lz4: return decompress_lz4(entry, where);
    case Compression::none: break;
  }
  return std::string(reinterpret_cast<const char*>(entry.payload.data()), entry.payload.size());
}

Expected<std::string> extract_ptx(const FatbinEntry& entry) {
  if (!entry.is_ptx()) {
    return make_error(ErrorCode::invalid_value, "entry " + std::to_string(entry.index) + " (" +
                                                    entry.name() + ") is not PTX");
  }
  auto text = extract_payload(entry);
  if (!text) return text.error();
  text->resize(std::min(text->size(), text->find('\0')));
  if (!looks_like_ptx(text->c_str(), text->size())) {
    return make_error(ErrorCode::invalid_ptx, "entry " + std::to_string(entry.index) + " (" +
                                                  entry.name() + "): payload is not PTX text");
  }
  return std::move(*text);
}

namespace {

Expected<LoadedPtx> load_from_fatbin(const void* data, int target_arch, size_t size_bound) {
  auto fatbin = parse_fatbin(data, size_bound);
  if (!fatbin) return fatbin.error();
  auto entry = select_ptx(fatbin->entries, target_arch);
  if (!entry) return entry.error();
  auto text = extract_ptx(**entry);
  if (!text) return text.error();
  return LoadedPtx{std::move(*text), (*entry)->arch};
}

}  // namespace

Expected<LoadedPtx> load_ptx(const void* image, int target_arch, size_t size_bound) {
  if (image == nullptr) return make_error(ErrorCode::invalid_value, "image is null");
  switch (classify_image(image, size_bound)) {
    case ImageKind::fatbin_wrapper: {
      auto wrapper = read_wrapper(image);
      if (!wrapper) return wrapper.error();
      // The wrapper says nothing about the fatbin's size; its own header is all there is.
      return load_from_fatbin(wrapper->fatbin, target_arch, unknown_size);
    }
    case ImageKind::fatbin: return load_from_fatbin(image, target_arch, size_bound);
    case ImageKind::ptx_text: {
      const char* text = static_cast<const char*>(image);
      return LoadedPtx{std::string(text, strnlen(text, size_bound)), 0};
    }
    case ImageKind::elf: {
      // A cubin is a 64-bit little-endian ELF for machine EM_CUDA (190). Anything else with the
      // ELF magic is a damaged image, which NVIDIA's driver also reports as such (measured).
      const auto* header = static_cast<const uint8_t*>(image);
      bool cubin = size_bound >= 20 && header[4] == 2 && header[5] == 1 && header[18] == 190 &&
                   header[19] == 0;
      if (!cubin) return image_error("image has the ELF magic but is not a CUDA cubin");
      return make_error(ErrorCode::no_binary_for_gpu,
                        "image is an ELF cubin (SASS); xcuda can only run PTX");
    }
    case ImageKind::unknown: break;
  }
  return image_error("image is neither PTX text, a fatbin, a fatbin wrapper nor ELF");
}

}  // namespace xcuda::runtime
