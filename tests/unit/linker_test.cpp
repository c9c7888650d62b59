// The PTX linker behind cuLink* and nvcc -rdc=true images: what it resolves, renames, keeps
// once and rejects; and the device code it takes from archives (CU_JIT_INPUT_LIBRARY). Every
// linked text must pass the compiler's front end as one module.
#include "runtime/linker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "ptx/compiler.h"
#include "runtime/device_code_archive.h"

namespace {

using xcuda::ErrorCode;
using xcuda::runtime::link_ptx;
using xcuda::runtime::LinkInput;

constexpr const char* header = ".version 7.0\n.target sm_80\n.address_size 64\n";

LinkInput input(std::string body, std::string name) {
  return {header + body, std::move(name)};
}

const char* user_body = R"(
.extern .func (.param .b32 result) scale(.param .b32 x);
.extern .global .align 4 .u32 offset;
.global .align 4 .u32 local_value = 1;
.visible .entry fill(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  {
    .param .b32 argument;
    .param .b32 answer;
    st.param.b32 [argument], 5;
    call.uni (answer), scale, (argument);
    ld.param.b32 %r1, [answer];
  }
  ld.global.u32 %r2, [offset];
  ld.global.u32 %r3, [local_value];
  st.global.u32 [%rd1], %r2;
  ret;
}
)";

const char* definer_body = R"(
.visible .global .align 4 .u32 offset = 7;
.global .align 4 .u32 local_value = 2;
.visible .func (.param .b32 result) scale(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  ld.global.u32 %r2, [local_value];
  st.param.b32 [result], %r1;
  ret;
}
)";

xcuda::ptx::ModuleInfo scan(const std::string& text) {
  xcuda::ptx::CompileResult scanned = xcuda::ptx::scan(text, {});
  for (const auto& diagnostic : scanned.diagnostics) ADD_FAILURE() << diagnostic.to_string();
  return scanned.module;
}

TEST(Linker, ResolvesExternFunctionsAndVariablesAcrossInputs) {
  std::vector<LinkInput> inputs = {input(user_body, "user.ptx"), input(definer_body, "lib.ptx")};
  auto linked = link_ptx(inputs);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  xcuda::ptx::ModuleInfo module = scan(*linked);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].name, "fill");
  // offset once (its definition), and each input's own local_value.
  std::vector<std::string> globals;
  for (const auto& global : module.globals) globals.push_back(global.name);
  EXPECT_EQ(globals.size(), 3u);
  EXPECT_EQ(std::count(globals.begin(), globals.end(), "offset"), 1);
  EXPECT_NE(linked->find("local_value$link0"), std::string::npos);
  EXPECT_NE(linked->find("local_value$link1"), std::string::npos);
}

TEST(Linker, TheOrderOfInputsDoesNotMatter) {
  std::vector<LinkInput> inputs = {input(definer_body, "lib.ptx"), input(user_body, "user.ptx")};
  auto linked = link_ptx(inputs);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_EQ(scan(*linked).kernels.size(), 1u);
}

TEST(Linker, UndefinedReferencesAreNamedWithTheirInput) {
  std::vector<LinkInput> inputs = {input(user_body, "user.ptx")};
  auto linked = link_ptx(inputs);
  ASSERT_FALSE(linked.ok());
  EXPECT_EQ(linked.error().code, ErrorCode::invalid_source);
  EXPECT_NE(linked.error().message.find("undefined reference to 'scale' in 'user.ptx'"),
            std::string::npos)
      << linked.error().message;
  EXPECT_NE(linked.error().message.find("'offset'"), std::string::npos);
}

TEST(Linker, StrongDefinitionsClashButWeakOnesAreKeptOnce) {
  std::vector<LinkInput> twice = {input(definer_body, "a.ptx"), input(definer_body, "b.ptx")};
  auto clash = link_ptx(twice);
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().code, ErrorCode::invalid_ptx);
  EXPECT_NE(clash.error().message.find("'scale' is defined in both 'a.ptx' and 'b.ptx'"),
            std::string::npos)
      << clash.error().message;

  // nvcc -rdc emits inline functions used in several translation units as .weak in each.
  std::string weak = R"(
.weak .func (.param .b32 result) twice(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [result], %r2;
  ret;
}
)";
  std::vector<LinkInput> inputs = {input(weak + ".visible .entry a() { ret; }", "a.ptx"),
                                   input(weak + ".visible .entry b() { ret; }", "b.ptx")};
  auto linked = link_ptx(inputs);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_EQ(scan(*linked).kernels.size(), 2u);
  size_t first = linked->find(".weak .func");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(linked->find(".weak .func", first + 1), std::string::npos) << *linked;
}

TEST(Linker, DriverFunctionsNeedNoDefinition) {
  std::string body = R"(
.extern .func (.param .b32 result) vprintf(.param .b64 format, .param .b64 arguments);
.global .align 1 .b8 $str[3] = {104, 105, 0};
.visible .entry hello()
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  mov.u64 %rd1, $str;
  cvta.global.u64 %rd2, %rd1;
  {
    .param .b64 format;
    .param .b64 arguments;
    .param .b32 result;
    st.param.b64 [format], %rd2;
    st.param.b64 [arguments], 0;
    call.uni (result), vprintf, (format, arguments);
    ld.param.b32 %r1, [result];
  }
  ret;
}
)";
  std::string other = body;
  other.replace(other.find("hello"), 5, "hello_again");
  // Each translation unit has its own $str: both stay, renamed apart.
  std::vector<LinkInput> inputs = {input(body, "a.ptx"), input(other, "b.ptx")};
  auto linked = link_ptx(inputs);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_EQ(scan(*linked).kernels.size(), 2u);
}

}  // namespace

// An ar archive as GNU ar writes it: members with a "//" table of long names, padded to even.
struct Archive {
  std::string bytes = "!<arch>\n";
  void add(std::string name, const std::string& data) {
    char header[61];
    std::snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0",
                  "0", "0", "644", data.size());
    bytes += std::string(header, 60) + data;
    if (data.size() % 2) bytes += '\n';
  }
  std::span<const uint8_t> view() const {
    return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
  }
};

TEST(DeviceCodeArchive, MembersWithDeviceCodeBecomeInputs) {
  Archive archive;
  archive.add("/", std::string(8, '\0'));  // the symbol table, skipped
  archive.add("//", "a_rather_long_member_name.ptx/\n");
  archive.add("/0", input(user_body, "").ptx);
  archive.add("notes.txt/", "no device code here");
  archive.add("library.ptx/", input(definer_body, "").ptx);
  auto inputs = xcuda::runtime::archive_device_code(archive.view(), 80, "libdevice.a");
  ASSERT_TRUE(inputs.ok()) << inputs.error().message;
  ASSERT_EQ(inputs->size(), 2u);
  EXPECT_EQ((*inputs)[0].name, "libdevice.a(a_rather_long_member_name.ptx)");
  EXPECT_EQ((*inputs)[1].name, "libdevice.a(library.ptx)");
  auto linked = link_ptx(*inputs);
  ASSERT_TRUE(linked.ok()) << linked.error().message;
  EXPECT_EQ(scan(*linked).kernels.size(), 1u);
}

TEST(DeviceCodeArchive, DamagedArchivesAndObjectsAreRefused) {
  auto refused = [](const std::string& bytes) {
    std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    auto inputs = xcuda::runtime::archive_device_code(view, 80, "broken.a");
    return !inputs.ok() && inputs.error().code == ErrorCode::invalid_image;
  };
  EXPECT_TRUE(refused("not an archive"));
  Archive truncated;
  truncated.add("kernel.ptx/", input(user_body, "").ptx);
  EXPECT_TRUE(refused(truncated.bytes.substr(0, truncated.bytes.size() - 10)));
  Archive bad_name;
  bad_name.add("/999", "x");
  EXPECT_TRUE(refused(bad_name.bytes));
  // An ELF member whose section table lies past its end.
  std::string elf(64, '\0');
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2, elf[5] = 1;
  elf[0x28] = 0x7f;  // section table offset
  elf[0x3a] = 64;    // section header size
  elf[0x3c] = 1;     // one section
  Archive with_object;
  with_object.add("object.o/", elf);
  EXPECT_TRUE(refused(with_object.bytes));
}
