// ABI conformance of include/xcuda/cuda.h against the CUDA toolkit's cuda.h.
//
// Both headers are compiled into this one translation unit: ours inside
// namespace `ours`, the toolkit's at global scope. abi_checks.inc (generated
// from our header by generate_checks.py, with the toolkit's names added) is
// included three times around them; almost every check is a static_assert, so
// a mismatch fails the build and names the offending enumerator, field, macro
// or prototype.
//
// The same file is compiled in three modes (see CMakeLists.txt):
//   XCUDA_ABI_MODE 0  public toolkit mode: everything, current prototypes;
//   XCUDA_ABI_MODE 1  CUDA_API_PER_THREAD_DEFAULT_STREAM: plain-name mappings;
//   XCUDA_ABI_MODE 2  toolkit with __CUDA_API_VERSION_INTERNAL, ours with
//                     XCUDA_EXPORTED_NAMES_ONLY: every exported symbol by name,
//                     including the legacy revisions, and the legacy structs.

#include <stddef.h>
#include <stdint.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#ifndef XCUDA_ABI_MODE
#define XCUDA_ABI_MODE 0
#endif

#if XCUDA_ABI_MODE == 0
#define XCUDA_ABI_CHECK_FUNCS 1
#define XCUDA_ABI_CHECK_MAPPINGS 1
#define XCUDA_ABI_CHECK_LEGACY 0
#define XCUDA_ABI_SUITE AbiConformance
#elif XCUDA_ABI_MODE == 1
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#define XCUDA_ABI_CHECK_FUNCS 0
#define XCUDA_ABI_CHECK_MAPPINGS 1
#define XCUDA_ABI_CHECK_LEGACY 0
#define XCUDA_ABI_SUITE AbiConformancePerThreadStream
#elif XCUDA_ABI_MODE == 2
#define XCUDA_EXPORTED_NAMES_ONLY 1
#define XCUDA_ABI_CHECK_FUNCS 2
#define XCUDA_ABI_CHECK_MAPPINGS 0
#define XCUDA_ABI_CHECK_LEGACY 1
#define XCUDA_ABI_SUITE AbiConformanceExportedSymbols
#else
#error "unknown XCUDA_ABI_MODE"
#endif

#define XCUDA_ABI_STR2(...) #__VA_ARGS__
#define XCUDA_ABI_STR(x) XCUDA_ABI_STR2(x)

// Stage 1: rename our prototypes (or drop them) so they cannot clash with the
// toolkit's extern "C" declarations of the same symbols.
#define XCUDA_ABI_STAGE 1
#include "abi_checks.inc"
#undef XCUDA_ABI_STAGE

namespace ours {
#include "xcuda/cuda.h"
}  // namespace ours

// Stage 2: capture the values of our macros, then #undef them.
#define XCUDA_ABI_STAGE 2
#include "abi_checks.inc"
#undef XCUDA_ABI_STAGE

// Deprecated entry points are checked too; keep the toolkit from tagging them.
#define CUDA_ENABLE_DEPRECATED 1
#if XCUDA_ABI_MODE == 2
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#ifdef XCUDA_ABI_TOOLKIT_CUDA_H
#include XCUDA_ABI_TOOLKIT_CUDA_H  // the build names the toolkit header by path
#else
#include <cuda.h>
#endif

namespace xcuda_abi {

// xtr<T>: the toolkit type corresponding to one of our types (specialized for
// every enum, struct, union and handle tag by stage 3, and propagated through
// pointers, arrays, cv-qualifiers and function types here).
template <class T> struct xtr { using type = T; };
template <class T> using xtr_t = typename xtr<T>::type;
template <class T> struct xtr<T *> { using type = xtr_t<T> *; };
template <class T> struct xtr<const T> { using type = const xtr_t<T>; };
template <class T, size_t N> struct xtr<T[N]> { using type = xtr_t<T>[N]; };
template <class T, size_t N> struct xtr<const T[N]> { using type = const xtr_t<T>[N]; };
template <class R, class... A> struct xtr<R(A...)> { using type = xtr_t<R>(xtr_t<A>...); };

constexpr bool streq(const char *a, const char *b) {
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

template <class T> constexpr long long as_ll(T v) { return static_cast<long long>(v); }

}  // namespace xcuda_abi

// Enumerator N of enum E: same value, and both belong to corresponding enums.
#define XCUDA_ABI_ENUMERATOR(E, N)                                                                     \
    static_assert(xcuda_abi::as_ll(ours::N) == xcuda_abi::as_ll(::N), "value of enumerator " #N);     \
    static_assert(std::is_same_v<decltype(ours::N), ours::E> && std::is_same_v<decltype(::N), ::E>,    \
                  "enumerator " #N " is not in enum " #E);                                             \
    static_assert(std::is_same_v<xcuda_abi::xtr_t<decltype(ours::N)>, decltype(::N)>, "enum of " #N)

#define XCUDA_ABI_TYPEDEF(T) \
    static_assert(std::is_same_v<xcuda_abi::xtr_t<ours::T>, ::T>, "typedef " #T " names a different type")

// Struct/union tag T: size, alignment, kind and tag correspondence.
#define XCUDA_ABI_RECORD(T)                                                                  \
    static_assert(sizeof(ours::T) == sizeof(::T), "sizeof " #T);                             \
    static_assert(alignof(ours::T) == alignof(::T), "alignof " #T);                          \
    static_assert(std::is_union_v<ours::T> == std::is_union_v<::T>, "struct/union " #T);     \
    static_assert(std::is_same_v<xcuda_abi::xtr_t<ours::T>, ::T>, "tag " #T)

// Member path P of T (e.g. res.linear.devPtr): offset and declared type.
#define XCUDA_ABI_FIELD(T, P)                                                                      \
    static_assert(offsetof(ours::T, P) == offsetof(::T, P), "offsetof " #T "." #P);                \
    static_assert(std::is_same_v<xcuda_abi::xtr_t<decltype(std::declval<ours::T &>().P)>,         \
                                 decltype(std::declval<::T &>().P)>,                               \
                  "type of " #T "." #P)

// Member of an unnamed struct/union type: offset and size (its members are
// checked individually).
#define XCUDA_ABI_FIELD_LAYOUT(T, P)                                                               \
    static_assert(offsetof(ours::T, P) == offsetof(::T, P), "offsetof " #T "." #P);                \
    static_assert(sizeof(std::declval<ours::T &>().P) == sizeof(std::declval<::T &>().P), "sizeof " #T "." #P)

#define XCUDA_ABI_MACRO_INT(M)                                                                         \
    static_assert(xcuda_abi::as_ll(xcuda_abi_ours_macros::v_##M) == xcuda_abi::as_ll(M), "value of macro " #M); \
    static_assert(std::is_same_v<xcuda_abi::xtr_t<std::remove_cv_t<decltype(xcuda_abi_ours_macros::v_##M)>>, \
                                 std::remove_cv_t<decltype(M)>>,                                       \
                  "type of macro " #M)

#define XCUDA_ABI_MACRO_STR(M) \
    static_assert(xcuda_abi::streq(xcuda_abi_ours_macros::s_##M, XCUDA_ABI_STR(M)), "expansion of macro " #M)

#define XCUDA_ABI_MAPPING(N)                                                              \
    static_assert(xcuda_abi::streq(xcuda_abi_ours_macros::m_##N, XCUDA_ABI_STR(N)), \
                  "plain name " #N " maps to a different symbol")

#define XCUDA_ABI_FUNCTION(OURS, THEIRS)                                                               \
    static_assert(std::is_same_v<xcuda_abi::xtr_t<decltype(ours::xcuda_abi_ours_##OURS)>, decltype(::THEIRS)>, \
                  "prototype of " #OURS)

// Stage 3: the checks.
#define XCUDA_ABI_STAGE 3
#include "abi_checks.inc"
#undef XCUDA_ABI_STAGE

static_assert(xcuda_abi_ours_macros::v_CUDA_VERSION == 13000, "xcuda/cuda.h describes CUDA 13.0");
static_assert(CUDA_VERSION == 13000, "the toolkit header is not CUDA 13.0");

TEST(XCUDA_ABI_SUITE, StaticChecksCompiled) {
    using C = xcuda_abi::Counts;
    // The work happened at compile time; make sure the generator did not come
    // up empty (e.g. because it failed to parse the header).
    EXPECT_GE(C::enums, 100);
    EXPECT_GE(C::enumerators, 800);
    EXPECT_GE(C::records, 80);
    EXPECT_GE(C::fields, 500);
    EXPECT_GE(C::typedefs, 250);
    EXPECT_GE(C::macros, 70);
#if XCUDA_ABI_CHECK_FUNCS
    EXPECT_GE(C::functions, 440);
#endif
    RecordProperty("enumerators", C::enumerators);
    RecordProperty("fields", C::fields);
    RecordProperty("functions", C::functions);
}

TEST(XCUDA_ABI_SUITE, PointerMacros) {
    std::vector<std::string> bad;
    xcuda_abi::check_pointer_macros(bad);
    for (const auto &name : bad) {
        ADD_FAILURE() << name << " differs from the toolkit";
    }
    EXPECT_TRUE(bad.empty());
}
