// Which functions a choice of kernels needs, and how to share a module's kernels out among
// threads (CompileOptions::kernels and CompileOptions::threads).
#pragma once

#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "parse/ast.h"

namespace xcuda::ptx {

// The functions `kernels` reach through calls, taken addresses and aliases, and those the module's
// variables name (a table of function pointers), by name.
std::unordered_set<std::string> reachable_functions(const Module& module, std::span<const std::string> kernels);

// The module's kernels in shares for `threads` threads to compile, of about equal estimated cost,
// largest first into the lightest share, in their order in the module within each share; the
// heaviest share first. One share when threads would gain nothing, a small module or one thread,
// or when the module's code or variables take a function's address (each share compiles its own
// copy of the functions it reaches, and the copies' addresses would differ).
std::vector<std::vector<std::string>> share_out_kernels(const Module& module, unsigned threads);

}  // namespace xcuda::ptx
