#include "src/entry_points.h"

// Only the symbols' addresses matter here, so each is declared with the same dummy type; the
// ABI header is deliberately not included (its real prototypes would clash with these).
#define ENTRY(name, version, symbol) extern "C" void symbol();
#define ENTRY_PER_THREAD ENTRY
#include "src/entry_points.def"
#undef ENTRY
#undef ENTRY_PER_THREAD

namespace xcuda::api {
namespace {

const EntryPoint table[] = {
#define ENTRY(name, version, symbol) {#name, version, false, reinterpret_cast<void*>(&symbol)},
#define ENTRY_PER_THREAD(name, version, symbol) \
  {#name, version, true, reinterpret_cast<void*>(&symbol)},
#include "src/entry_points.def"
#undef ENTRY
#undef ENTRY_PER_THREAD
};

}  // namespace

std::span<const EntryPoint> entry_points() { return table; }

}  // namespace xcuda::api
