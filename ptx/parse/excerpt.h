// Before parsing for a choice of kernels: the module's text cut down to what they need, so that a
// kernel of a large module compiles without parsing its hundred neighbours. Lazy loading compiles
// one kernel at a time; for a 1.8 MB module, parsing all of it cost twice the kernel's compile.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace xcuda::ptx {

// The text with every function definition that `kernels` cannot reach (through names in the
// bodies they reach, or in module-scope directives such as variables' initialisers) blanked to its
// line breaks, so that every line and column stays where it was. What is reached is
// over-estimated, never under: a name mentioned anywhere in a reached body counts. Nothing when
// the text is not one the cut can be sure of (unbalanced braces, an unterminated comment or
// string, a kernel not found): the full text then goes to the parser, which reports what it finds.
std::optional<std::string> excerpt_for_kernels(std::string_view text, std::span<const std::string> kernels);

}  // namespace xcuda::ptx
