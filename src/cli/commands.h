// The xcuda command's subcommands; each takes the arguments after its own name.
#pragma once

#include <string_view>

namespace xcuda::cli {

int fail_usage(std::string_view message);  // prints the message and the usage; returns 2
int info();
int dump(int argc, char** argv);
int precompile(int argc, char** argv);

}  // namespace xcuda::cli
