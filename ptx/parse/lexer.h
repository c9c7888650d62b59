// Splits PTX text into tokens that remember where they start, so every later diagnostic can
// point at a line and column.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace xcuda::ptx {

struct SourceLocation {
  uint32_t line = 1;
  uint32_t column = 1;
};

enum class TokenKind {
  identifier,      // name, %register, $label; letters, digits, '_', '$', '%'
  dot_word,        // .entry, .f32, .x: a directive, modifier, type or vector component
  integer,         // 42, 0x2A, 052, 0b101, optionally with a U suffix
  float_literal,   // 0f3F800000, 0d4000000000000000, 1.5, 2e3
  string,          // "nounroll" (the text keeps its quotes)
  punctuation,     // one of ; , : [ ] { } ( ) < > + - ! | @ = * / & ^ ~ ?
  invalid,         // a byte no PTX token starts with, or an unterminated string or comment
  end_of_file,
};

struct Token {
  TokenKind kind = TokenKind::end_of_file;
  std::string_view text;  // points into the source text, which must outlive the tokens
  SourceLocation location;

  bool is(TokenKind expected, std::string_view expected_text) const {
    return kind == expected && text == expected_text;
  }
  bool is_punctuation(char symbol) const {
    return kind == TokenKind::punctuation && text.size() == 1 && text[0] == symbol;
  }
};

// Debug sections (@@DWARF lines) are dropped here: they carry nothing we compile.
// The result always ends with one end_of_file token.
std::vector<Token> tokenize(std::string_view source);

}  // namespace xcuda::ptx
