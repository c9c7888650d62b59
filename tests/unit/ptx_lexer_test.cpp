#include <gtest/gtest.h>

#include "parse/lexer.h"

namespace xcuda::ptx {
namespace {

struct Expected {
  TokenKind kind;
  std::string_view text;
  uint32_t line;
  uint32_t column;
};

void expect_tokens(std::string_view source, const std::vector<Expected>& expected) {
  std::vector<Token> tokens = tokenize(source);
  ASSERT_EQ(tokens.size(), expected.size() + 1) << source;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tokens[i].kind, expected[i].kind) << i;
    EXPECT_EQ(tokens[i].text, expected[i].text) << i;
    EXPECT_EQ(tokens[i].location.line, expected[i].line) << i;
    EXPECT_EQ(tokens[i].location.column, expected[i].column) << i;
  }
  EXPECT_EQ(tokens.back().kind, TokenKind::end_of_file);
}

TEST(PtxLexer, InstructionWithGuardModifiersAndAddress) {
  expect_tokens("\t@!%p1 ld.global.v2.f32 {%f1, %f2}, [%rd4+-8];",
                {{TokenKind::punctuation, "@", 1, 2},      {TokenKind::punctuation, "!", 1, 3},
                 {TokenKind::identifier, "%p1", 1, 4},     {TokenKind::identifier, "ld", 1, 8},
                 {TokenKind::dot_word, ".global", 1, 10},  {TokenKind::dot_word, ".v2", 1, 17},
                 {TokenKind::dot_word, ".f32", 1, 20},     {TokenKind::punctuation, "{", 1, 25},
                 {TokenKind::identifier, "%f1", 1, 26},    {TokenKind::punctuation, ",", 1, 29},
                 {TokenKind::identifier, "%f2", 1, 31},    {TokenKind::punctuation, "}", 1, 34},
                 {TokenKind::punctuation, ",", 1, 35},     {TokenKind::punctuation, "[", 1, 37},
                 {TokenKind::identifier, "%rd4", 1, 38},   {TokenKind::punctuation, "+", 1, 42},
                 {TokenKind::punctuation, "-", 1, 43},     {TokenKind::integer, "8", 1, 44},
                 {TokenKind::punctuation, "]", 1, 45},     {TokenKind::punctuation, ";", 1, 46}});
}

TEST(PtxLexer, NumbersOfEveryForm) {
  expect_tokens("0f3F800000 0d4000000000000000 1.5 2e3 42 0x2A 052 0b101 7U",
                {{TokenKind::float_literal, "0f3F800000", 1, 1},
                 {TokenKind::float_literal, "0d4000000000000000", 1, 12},
                 {TokenKind::float_literal, "1.5", 1, 31},
                 {TokenKind::float_literal, "2e3", 1, 35},
                 {TokenKind::integer, "42", 1, 39},
                 {TokenKind::integer, "0x2A", 1, 42},
                 {TokenKind::integer, "052", 1, 47},
                 {TokenKind::integer, "0b101", 1, 51},
                 {TokenKind::integer, "7U", 1, 57}});
}

TEST(PtxLexer, CommentsAndDebugLinesAreSkippedButCounted) {
  expect_tokens("// one\n/* two\nthree */ ret; @@DWARF .b8 1\n  $L__BB0_1:",
                {{TokenKind::identifier, "ret", 3, 10},
                 {TokenKind::punctuation, ";", 3, 13},
                 {TokenKind::identifier, "$L__BB0_1", 4, 3},
                 {TokenKind::punctuation, ":", 4, 12}});
}

TEST(PtxLexer, ScopedModifiersAreOneWord) {
  expect_tokens("ld.shared::cta.L2::evict_last.u32",
                {{TokenKind::identifier, "ld", 1, 1},
                 {TokenKind::dot_word, ".shared::cta", 1, 3},
                 {TokenKind::dot_word, ".L2::evict_last", 1, 15},
                 {TokenKind::dot_word, ".u32", 1, 30}});
}

TEST(PtxLexer, StringsKeepTheirQuotes) {
  expect_tokens(".pragma \"nounroll\";", {{TokenKind::dot_word, ".pragma", 1, 1},
                                          {TokenKind::string, "\"nounroll\"", 1, 9},
                                          {TokenKind::punctuation, ";", 1, 19}});
}

TEST(PtxLexer, BadInputBecomesInvalidTokens) {
  expect_tokens("# \"open\n/* never closed", {{TokenKind::invalid, "#", 1, 1},
                                                {TokenKind::invalid, "\"open", 1, 3},
                                                {TokenKind::invalid, "/*", 2, 1}});
}

}  // namespace
}  // namespace xcuda::ptx
