#include "runtime/host/device_printf.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "runtime/host/worker_pool.h"
#include "runtime/log.h"

namespace xcuda::runtime::host {
namespace {

constexpr int max_printf_arguments = 32;

std::mutex pending_output_mutex;
std::string pending_output;  // guarded by pending_output_mutex

// Reads the packed argument buffer front to back.
class ArgumentReader {
 public:
  explicit ArgumentReader(const void* arguments)
      : arguments_(static_cast<const std::byte*>(arguments)) {}

  // False when no argument is left to read.
  bool available() const { return arguments_ && count_ < max_printf_arguments; }
  int count() const { return count_; }

  template <class T>
  T next() {
    offset_ = (offset_ + alignof(T) - 1) / alignof(T) * alignof(T);
    T value;
    std::memcpy(&value, arguments_ + offset_, sizeof(T));
    offset_ += sizeof(T);
    ++count_;
    return value;
  }

 private:
  const std::byte* arguments_;
  size_t offset_ = 0;
  int count_ = 0;
};

template <class... Values>
void append_formatted(std::string& output, const char* specification, Values... values) {
  char buffer[128];
  int length = std::snprintf(buffer, sizeof buffer, specification, values...);
  if (length < 0) return;
  if (static_cast<size_t>(length) < sizeof buffer) {
    output.append(buffer, static_cast<size_t>(length));
    return;
  }
  size_t start = output.size();
  output.resize(start + static_cast<size_t>(length) + 1);
  std::snprintf(output.data() + start, static_cast<size_t>(length) + 1, specification, values...);
  output.resize(start + static_cast<size_t>(length));
}

enum class Length { plain, char_, short_, long_, long_long, intmax, size, ptrdiff, long_double };

const char* parse_length(const char* cursor, Length& length) {
  switch (*cursor) {
    case 'h':
      if (cursor[1] == 'h') {
        length = Length::char_;
        return cursor + 2;
      }
      length = Length::short_;
      return cursor + 1;
    case 'l':
      if (cursor[1] == 'l') {
        length = Length::long_long;
        return cursor + 2;
      }
      length = Length::long_;
      return cursor + 1;
    case 'j': length = Length::intmax; return cursor + 1;
    case 'z': length = Length::size; return cursor + 1;
    case 't': length = Length::ptrdiff; return cursor + 1;
    case 'L':
    case 'q': length = Length::long_double; return cursor + 1;
    default: length = Length::plain; return cursor;
  }
}

bool is_eight_byte_integer(Length length) {
  return length != Length::plain && length != Length::char_ && length != Length::short_;
}

}  // namespace

int format_device_printf(const char* format, const void* arguments, std::string& output) {
  if (!format) return -1;
  ArgumentReader reader(arguments);
  const char* cursor = format;
  while (*cursor) {
    if (*cursor != '%') {
      const char* next = std::strchr(cursor, '%');
      if (!next) next = cursor + std::strlen(cursor);
      output.append(cursor, static_cast<size_t>(next - cursor));
      cursor = next;
      continue;
    }
    if (cursor[1] == '%') {
      output += '%';
      cursor += 2;
      continue;
    }

    // %[flags][width][.precision][length]conversion
    const char* start = cursor++;
    while (*cursor && std::strchr("-+ #0'", *cursor)) ++cursor;
    bool width_from_argument = false;
    if (*cursor == '*') {
      width_from_argument = true;
      ++cursor;
    } else {
      while (*cursor >= '0' && *cursor <= '9') ++cursor;
    }
    bool precision_from_argument = false;
    if (*cursor == '.') {
      ++cursor;
      if (*cursor == '*') {
        precision_from_argument = true;
        ++cursor;
      } else {
        while (*cursor >= '0' && *cursor <= '9') ++cursor;
      }
    }
    std::string specification(start, cursor);
    Length length;
    cursor = parse_length(cursor, length);
    char conversion = *cursor;
    if (!conversion) {
      output.append(start);
      break;
    }
    ++cursor;

    int needed = 1 + width_from_argument + precision_from_argument;
    bool known = std::strchr("diouxXcspneEfFgGaA", conversion) != nullptr;
    if (!known || !reader.available() || reader.count() + needed > max_printf_arguments) {
      output.append(start, cursor);
      continue;
    }
    int width = width_from_argument ? reader.next<int>() : 0;
    int precision = precision_from_argument ? reader.next<int>() : 0;
    // The host's snprintf gets the value as the C type the conversion names, with a length
    // modifier that matches how the value was stored, not necessarily the one written.
    auto emit = [&](const char* length_modifier, auto value) {
      std::string host_specification = specification + length_modifier + conversion;
      const char* text = host_specification.c_str();
      if (width_from_argument && precision_from_argument)
        append_formatted(output, text, width, precision, value);
      else if (width_from_argument)
        append_formatted(output, text, width, value);
      else if (precision_from_argument)
        append_formatted(output, text, precision, value);
      else
        append_formatted(output, text, value);
    };
    switch (conversion) {
      case 'd':
      case 'i':
        if (is_eight_byte_integer(length))
          emit("ll", reader.next<long long>());
        else
          emit(length == Length::char_    ? "hh"
               : length == Length::short_ ? "h"
                                          : "",
               reader.next<int>());
        break;
      case 'o':
      case 'u':
      case 'x':
      case 'X':
        if (is_eight_byte_integer(length))
          emit("ll", reader.next<unsigned long long>());
        else
          emit(length == Length::char_    ? "hh"
               : length == Length::short_ ? "h"
                                          : "",
               reader.next<unsigned>());
        break;
      case 'c': emit("", reader.next<int>()); break;
      case 's': emit("", reader.next<const char*>()); break;
      case 'p': emit("", reader.next<const void*>()); break;
      case 'n':
        // Writing a count through a device pointer is never what a kernel author wants; the
        // argument is consumed and nothing is printed.
        reader.next<const void*>();
        break;
      default: emit("", reader.next<double>()); break;
    }
  }
  return reader.count();
}

int device_vprintf(const char* format, const void* arguments) {
  // Formatting happens outside the lock: a bad %s pointer faults while no lock is held.
  thread_local std::string formatted;
  formatted.clear();
  int result = format_device_printf(format, arguments, formatted);
  std::lock_guard lock(pending_output_mutex);
  pending_output += formatted;
  return result;
}

void device_assert_fail(const char* message, const char* file, uint32_t line, const char* function,
                        uint64_t) {
  const ptx::host_abi::BlockFrame* frame = current_block_frame();
  if (frame) {
    std::fprintf(stderr, "%s:%u: %s: block: [%u,%u,%u] Assertion `%s` failed.\n", file, line,
                 function, frame->block_index[0], frame->block_index[1], frame->block_index[2],
                 message);
  } else {
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s` failed.\n", file, line, function, message);
  }
  std::fflush(stderr);
  abandon_current_block(ErrorCode::assertion_failed, "device-side assertion failed");
}

void device_trap(const ptx::host_abi::BlockFrame*) {
  abandon_current_block(ErrorCode::launch_failed, "trap");
}

void device_illegal_instruction(const ptx::host_abi::BlockFrame*) {
  abandon_current_block(ErrorCode::illegal_instruction, "an instruction the GPU refuses as written");
}

void device_stack_overflow(const ptx::host_abi::BlockFrame* frame, uint64_t bytes) {
  logger().error("alloca of {} bytes does not fit a thread's stack of {} bytes; cuCtxSetLimit(CU_LIMIT_STACK_SIZE) "
                 "sets its size",
                 bytes, frame->dynamic_stack_bytes - ptx::host_abi::dynamic_stack_header_bytes);
  abandon_current_block(ErrorCode::illegal_address, "stack overflow in alloca");
}

void flush_device_output() {
  std::string output;
  {
    std::lock_guard lock(pending_output_mutex);
    output.swap(pending_output);
  }
  if (output.empty()) return;
  std::fwrite(output.data(), 1, output.size(), stdout);
  std::fflush(stdout);
}

}  // namespace xcuda::runtime::host
