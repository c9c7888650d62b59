// xcuda's one logger. Silent unless XCUDA_LOG asks for more; XCUDA_LOG_FILE sends it to a file
// instead of stderr, so an application's own output stays clean.
#pragma once

#include <spdlog/spdlog.h>

namespace xcuda::runtime {

spdlog::logger& logger();

}  // namespace xcuda::runtime
