// Collects the problems every stage finds, each pinned to a place in the PTX source.
#pragma once

#include <string>
#include <vector>

#include "compiler.h"
#include "parse/lexer.h"

namespace xcuda::ptx {

class DiagnosticSink {
 public:
  explicit DiagnosticSink(std::string file_name) : file_name_(std::move(file_name)) {}

  void error(SourceLocation location, std::string message) {
    diagnostics_.push_back(Diagnostic{file_name_, location.line, location.column, std::move(message)});
  }
  // One found by another compile (a share of the module on another thread).
  void add(Diagnostic diagnostic) { diagnostics_.push_back(std::move(diagnostic)); }
  bool has_errors() const { return !diagnostics_.empty(); }
  std::vector<Diagnostic> take() { return std::move(diagnostics_); }

 private:
  std::string file_name_;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace xcuda::ptx
