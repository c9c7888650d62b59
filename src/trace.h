// XCUDA_TRACE=1: every Driver API call an application makes through cuGetProcAddress (which is
// how cudart reaches the driver) is logged with its arguments and result. The wrappers are
// generated at build time from entry_points.def and the prototypes in include/xcuda/cuda.h
// (src/trace_wrappers.py), so a new entry point is traced without anyone writing code for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "xcuda/cuda.h"

namespace xcuda::trace {

struct TracedEntry {
  void* original;
  void* traced;
};
// Generated: one row per traced symbol.
extern const TracedEntry traced_entries[];
extern const size_t traced_entry_count;

// What cuGetProcAddress hands out for `function`: its wrapper when XCUDA_TRACE=1 and one was
// generated, else `function` itself.
void* traced(void* function);

// Pointers print as addresses, not what they point at: most are output parameters or device
// addresses, so reading through them could fault. C strings in the API are names, NUL-terminated
// by contract, and worth seeing.
template <class T>
std::string format_argument(const T& value) {
  if constexpr (std::is_same_v<T, const char*>)
    return value ? fmt::format("\"{}\"", value) : "null";
  else if constexpr (std::is_pointer_v<T>)
    return fmt::format("{:#x}", reinterpret_cast<uintptr_t>(value));
  else if constexpr (std::is_enum_v<T>)
    return std::to_string(static_cast<std::underlying_type_t<T>>(value));
  else if constexpr (std::is_arithmetic_v<T>)
    return fmt::format("{}", value);
  else
    return "{...}";  // a structure passed by value
}

void write_call(std::string_view symbol, CUresult result, std::string_view arguments);

template <class... Arguments>
void log_call(std::string_view symbol, CUresult result, const Arguments&... arguments) {
  std::string text;
  auto append = [&text](const char* name, const auto& value) {
    if (!text.empty()) text += ", ";
    text += name;
    text += '=';
    text += format_argument(value);
  };
  // Arguments come as name, value pairs.
  auto pairs = [&append](auto& self, const char* name, const auto& value, const auto&... rest) {
    append(name, value);
    if constexpr (sizeof...(rest) > 0) self(self, rest...);
  };
  if constexpr (sizeof...(arguments) > 0) pairs(pairs, arguments...);
  write_call(symbol, result, text);
}

}  // namespace xcuda::trace
