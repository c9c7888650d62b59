// What kernel launches share with kernel graph nodes: cuLaunchKernel's checks and its packing of
// the arguments into the kernel's .param buffer.
#pragma once

#include <cstdint>
#include <vector>

#include "src/api.h"

namespace xcuda::api {

// Checks `shape` against the function and its device, gives it the stack size of the function's
// context, and packs `arguments` (kernelParams) or `extra` into `parameters`, reporting failures
// under `function_name`.
CUresult prepare_launch(const char* function_name, runtime::Function& function,
                        runtime::LaunchShape& shape, void** arguments, void** extra,
                        bool cooperative, std::vector<uint8_t>& parameters);

}  // namespace xcuda::api
