// The text a compile for a choice of kernels parses (parse/excerpt.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "compiler.h"
#include "parse/excerpt.h"

namespace xcuda::ptx {
namespace {

const std::string module_text = R"(.version 8.0
.target sm_80
.address_size 64
.global .u64 table[1] = {from_table};
.func from_table()
{
  ret;
}
.func called()
{
  // a comment naming unused and a brace }
  ret;
}
.func unused()
{
  ret;
}
.visible .entry first()
{
  .pragma "nounroll } \" {";
  call.uni called, ();
  ret;
}
.visible .entry second()
{
  call.uni unused, ();
  ret;
}
)";

size_t lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

// The line and column `needle` starts at.
std::pair<size_t, size_t> place(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  if (at == std::string::npos) return {0, 0};
  size_t line_start = text.rfind('\n', at);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  return {lines(text.substr(0, at)) + 1, at - line_start + 1};
}

TEST(Excerpt, KeepsWhatTheKernelReachesWhereItWas) {
  auto excerpt = excerpt_for_kernels(module_text, std::vector<std::string>{"first"});
  ASSERT_TRUE(excerpt);
  EXPECT_EQ(lines(*excerpt), lines(module_text));
  for (const char* kept : {".visible .entry first()", "call.uni called", ".func called()", ".func from_table()", ".global .u64 table"})
    EXPECT_EQ(place(*excerpt, kept), place(module_text, kept)) << kept;
  // The comment's brace and name, and the string's braces and quote, are not read as code.
  EXPECT_EQ(excerpt->find(".func unused()"), std::string::npos);
  EXPECT_EQ(excerpt->find(".visible .entry second()"), std::string::npos);
}

TEST(Excerpt, FollowsCallsFromEachKernel) {
  auto excerpt = excerpt_for_kernels(module_text, std::vector<std::string>{"second"});
  ASSERT_TRUE(excerpt);
  EXPECT_NE(excerpt->find(".func unused()"), std::string::npos);
  EXPECT_EQ(excerpt->find(".func called()"), std::string::npos);
  EXPECT_EQ(excerpt->find(".visible .entry first()"), std::string::npos);
}

TEST(Excerpt, GivesUpOnTextItCannotBeSureOf) {
  EXPECT_FALSE(excerpt_for_kernels(module_text, std::vector<std::string>{"third"}));
  EXPECT_FALSE(excerpt_for_kernels(module_text + "}", std::vector<std::string>{"first"}));
  EXPECT_FALSE(excerpt_for_kernels(module_text + ".func open() {", std::vector<std::string>{"first"}));
  EXPECT_FALSE(excerpt_for_kernels(module_text + "/* open", std::vector<std::string>{"first"}));
  EXPECT_FALSE(excerpt_for_kernels(module_text + "\"open", std::vector<std::string>{"first"}));
  EXPECT_TRUE(excerpt_for_kernels(module_text + "// a last line without its line break", std::vector<std::string>{"first"}));
}

// A compile of one kernel reports a problem where the whole text has it.
TEST(Excerpt, ProblemsKeepTheirPlace) {
  std::string text = module_text + ".visible .entry broken()\n{\n  add.u32 %r1, %r1, 1;\n  ret;\n}\n";
  CompileOptions options;
  options.file_name = "test.ptx";
  options.kernels = {"broken"};
  CompileResult result = compile(text, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.diagnostics.front().line, lines(module_text) + 3);
  EXPECT_EQ(result.diagnostics.front().column, 11u) << result.diagnostics.front().to_string();
}

}  // namespace
}  // namespace xcuda::ptx
