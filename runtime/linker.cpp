#include "runtime/linker.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "ptx/parse/lexer.h"

namespace xcuda::runtime {

namespace {

using ptx::Token;
using ptx::TokenKind;

enum class StatementKind { function, variable, other };

// One module-scope statement of an input: a declaration, a definition, a .pragma or .alias.
struct Statement {
  size_t begin = 0;  // token indices, [begin, end)
  size_t end = 0;
  StatementKind kind = StatementKind::other;
  bool is_visible = false;
  bool is_extern = false;
  bool is_weak = false;
  bool is_entry = false;
  bool is_shared = false;
  bool has_body = false;  // a function with a body, or a variable that is not .extern
  std::vector<std::string_view> names;

  // Whether other inputs may refer to what this statement defines.
  bool exports() const { return has_body && (is_visible || is_weak || is_entry); }
  // Defined here and seen only here: the name may be renamed freely.
  bool is_internal() const { return has_body && !exports(); }
};

struct ParsedInput {
  const LinkInput* input = nullptr;
  std::vector<Token> tokens;
  std::vector<Statement> statements;
  std::pair<int, int> version{0, 0};
  int target_arch = 0;          // the sm_NN of .target, 0 when it names none
  size_t target_begin = 0;      // the .target list, token indices [begin, end)
  size_t target_end = 0;
};

// Functions NVIDIA's driver supplies to every module, which no input defines.
bool is_system_function(std::string_view name) {
  return name == "vprintf" || name == "__assertfail" || name == "malloc" || name == "free";
}

size_t offset_of(const ParsedInput& parsed, const Token& token) {
  return static_cast<size_t>(token.text.data() - parsed.input->ptx.data());
}

std::pair<int, int> parse_version(std::string_view text) {
  std::pair<int, int> version{0, 0};
  size_t dot = text.find('.');
  std::from_chars(text.data(), text.data() + std::min(dot, text.size()), version.first);
  if (dot != std::string_view::npos)
    std::from_chars(text.data() + dot + 1, text.data() + text.size(), version.second);
  return version;
}

// The index just past the token that closes the bracket opened at `open`.
size_t skip_balanced(const std::vector<Token>& tokens, size_t open, char opening, char closing) {
  int depth = 0;
  for (size_t index = open; index + 1 < tokens.size(); ++index) {
    if (tokens[index].is_punctuation(opening)) ++depth;
    if (tokens[index].is_punctuation(closing) && --depth == 0) return index + 1;
  }
  return tokens.size() - 1;
}

// From `begin`: linkage words, then a .entry/.func (to its ';' or its body's '}') or a variable
// declaration (to its ';').
Statement read_statement(const std::vector<Token>& tokens, size_t begin) {
  Statement statement;
  statement.begin = begin;
  size_t index = begin;
  for (;; ++index) {
    const Token& token = tokens[index];
    if (token.is(TokenKind::dot_word, ".visible")) statement.is_visible = true;
    else if (token.is(TokenKind::dot_word, ".extern")) statement.is_extern = true;
    else if (token.is(TokenKind::dot_word, ".weak") || token.is(TokenKind::dot_word, ".common"))
      statement.is_weak = true;
    else break;
  }
  const Token& head = tokens[index];
  if (head.is(TokenKind::dot_word, ".entry") || head.is(TokenKind::dot_word, ".func")) {
    statement.kind = StatementKind::function;
    statement.is_entry = head.text == ".entry";
    size_t name = index + 1;
    if (tokens[name].is_punctuation('(')) name = skip_balanced(tokens, name, '(', ')');
    if (tokens[name].kind == TokenKind::identifier) statement.names.push_back(tokens[name].text);
  } else if (head.kind == TokenKind::dot_word &&
             (head.text == ".global" || head.text == ".const" || head.text == ".shared")) {
    statement.kind = StatementKind::variable;
    statement.is_shared = head.text == ".shared";
    statement.has_body = !statement.is_extern;
  }
  int depth = 0;
  bool after_comma = false;
  for (; index + 1 < tokens.size(); ++index) {
    const Token& token = tokens[index];
    if (token.kind == TokenKind::punctuation) {
      char symbol = token.text[0];
      if (symbol == '{' && depth == 0 && statement.kind == StatementKind::function)
        statement.has_body = true;
      if (symbol == '{' || symbol == '(' || symbol == '[') ++depth;
      if (symbol == '}' || symbol == ')' || symbol == ']') --depth;
      if (depth == 0 && (symbol == ';' || (symbol == '}' && statement.has_body &&
                                           statement.kind == StatementKind::function))) {
        statement.end = index + 1;
        return statement;
      }
      after_comma = depth == 0 && symbol == ',';
      continue;
    }
    // A variable statement names its variables first and after each top-level comma.
    if (statement.kind == StatementKind::variable && depth == 0 &&
        token.kind == TokenKind::identifier && (statement.names.empty() || after_comma))
      statement.names.push_back(token.text);
    after_comma = false;
  }
  statement.end = tokens.size() - 1;
  return statement;
}

ParsedInput parse_input(const LinkInput& input) {
  ParsedInput parsed;
  parsed.input = &input;
  parsed.tokens = ptx::tokenize(input.ptx);
  const std::vector<Token>& tokens = parsed.tokens;
  size_t index = 0;
  while (index + 1 < tokens.size()) {
    const Token& token = tokens[index];
    if (token.is_punctuation(';')) {
      ++index;
    } else if (token.is(TokenKind::dot_word, ".version")) {
      parsed.version = parse_version(tokens[index + 1].text);
      index += 2;
    } else if (token.is(TokenKind::dot_word, ".address_size")) {
      index += 2;
    } else if (token.is(TokenKind::dot_word, ".target")) {
      parsed.target_begin = ++index;
      while (index + 1 < tokens.size() && tokens[index].kind == TokenKind::identifier) {
        std::string_view name = tokens[index].text;
        if (name.starts_with("sm_"))
          std::from_chars(name.data() + 3, name.data() + name.size(), parsed.target_arch);
        if (!tokens[++index].is_punctuation(',')) break;
        ++index;
      }
      parsed.target_end = index;
    } else if (token.is(TokenKind::dot_word, ".file")) {
      // Debug file names are numbered per input and would clash; line info is not kept.
      while (index + 1 < tokens.size() && tokens[index].location.line == token.location.line)
        ++index;
    } else if (token.is(TokenKind::dot_word, ".section")) {
      while (index + 1 < tokens.size() && !tokens[index].is_punctuation('{')) ++index;
      index = skip_balanced(tokens, index, '{', '}');
    } else {
      Statement statement = read_statement(tokens, index);
      index = statement.end;
      parsed.statements.push_back(std::move(statement));
    }
  }
  return parsed;
}

// Appends the statement's source, with `renames` applied to its identifiers.
void render(const ParsedInput& parsed, size_t begin, size_t end,
            const std::map<std::string_view, std::string>& renames, std::string& out) {
  if (begin >= end) return;
  const std::string& text = parsed.input->ptx;
  size_t position = offset_of(parsed, parsed.tokens[begin]);
  for (size_t index = begin; index < end; ++index) {
    const Token& token = parsed.tokens[index];
    size_t start = offset_of(parsed, token);
    out.append(text, position, start - position);
    auto renamed = token.kind == TokenKind::identifier ? renames.find(token.text) : renames.end();
    out += renamed != renames.end() ? std::string_view(renamed->second) : token.text;
    position = start + token.text.size();
  }
}

}  // namespace

Expected<std::string> link_ptx(std::span<const LinkInput> inputs) {
  if (inputs.empty()) return make_error(ErrorCode::invalid_value, "nothing to link");
  std::vector<ParsedInput> parsed;
  for (const LinkInput& input : inputs) parsed.push_back(parse_input(input));

  // Which input defines each exported name, strong definitions over .weak ones.
  struct Definition {
    size_t input = 0;
    const Statement* statement = nullptr;
  };
  std::map<std::string_view, Definition> exported;
  std::map<std::string_view, std::set<size_t>> users;  // every input naming it at module scope
  std::string problems;  // one line each
  for (size_t input = 0; input < parsed.size(); ++input) {
    for (const Statement& statement : parsed[input].statements) {
      for (std::string_view name : statement.names) {
        users[name].insert(input);
        if (!statement.exports()) continue;
        auto [found, inserted] = exported.try_emplace(name, Definition{input, &statement});
        if (inserted || statement.is_weak) continue;
        if (!found->second.statement->is_weak) {
          problems += fmt::format("{}'{}' is defined in both '{}' and '{}'",
                                  problems.empty() ? "" : "\n", name,
                                  inputs[found->second.input].name, inputs[input].name);
          continue;
        }
        found->second = Definition{input, &statement};
      }
    }
  }
  if (!problems.empty())
    return make_error(ErrorCode::invalid_ptx, problems);

  std::string linked;
  const ParsedInput* newest = &parsed.front();
  for (const ParsedInput& input : parsed)
    if (input.target_arch > newest->target_arch) newest = &input;
  std::pair<int, int> version = newest->version;
  for (const ParsedInput& input : parsed) version = std::max(version, input.version);
  linked += fmt::format(".version {}.{}\n.target ", version.first, version.second);
  render(*newest, newest->target_begin, newest->target_end, {}, linked);
  linked += "\n.address_size 64\n";

  std::set<std::string_view> shared_declared;
  for (size_t input = 0; input < parsed.size(); ++input) {
    std::map<std::string_view, std::string> renames;
    for (const Statement& statement : parsed[input].statements)
      for (std::string_view name : statement.names)
        if (statement.is_internal() && users[name].size() > 1)
          renames.try_emplace(name, fmt::format("{}$link{}", name, input));
    linked += fmt::format("\n// {}\n", inputs[input].name);
    for (const Statement& statement : parsed[input].statements) {
      std::string_view name = statement.names.empty() ? std::string_view() : statement.names[0];
      auto definition = exported.find(name);
      bool defined = definition != exported.end();
      if (statement.exports() && defined && definition->second.statement != &statement)
        continue;  // a .weak definition another input also makes
      if (statement.is_extern && !statement.has_body) {
        if (statement.is_shared && !shared_declared.insert(name).second) continue;
        if (!statement.is_shared && !defined &&
            !(statement.kind == StatementKind::function && is_system_function(name))) {
          problems += fmt::format("{}undefined reference to '{}' in '{}'",
                                  problems.empty() ? "" : "\n", name, inputs[input].name);
          continue;
        }
        // The definition stands in for a variable's declaration; functions keep theirs as
        // prototypes.
        if (statement.kind == StatementKind::variable && !statement.is_shared) continue;
      }
      render(parsed[input], statement.begin, statement.end, renames, linked);
      linked += '\n';
    }
  }
  if (!problems.empty())
    return make_error(ErrorCode::invalid_source, problems);
  return linked;
}

Expected<LoadedPtx> load_linked_ptx(const void* image, int target_arch, size_t size_bound) {
  Expected<LoadedPtx> direct = load_ptx(image, target_arch, size_bound);
  if (direct || direct.error().code != ErrorCode::no_binary_for_gpu ||
      classify_image(image, size_bound) != ImageKind::fatbin_wrapper)
    return direct;
  Expected<FatbinWrapper> wrapper = read_wrapper(image);
  if (!wrapper || wrapper->version != 2 || !wrapper->prelinked_list) return direct;
  // A null-terminated array of fatbin pointers, one per translation unit (crt/link.stub).
  constexpr size_t most_units = 1 << 16;
  const auto* units = static_cast<const void* const*>(wrapper->prelinked_list);
  std::vector<LinkInput> inputs;
  uint32_t arch = 0;
  for (size_t index = 0; units[index]; ++index) {
    if (index == most_units)
      return make_error(ErrorCode::invalid_image, "device-linked image: the list of "
                                                  "translation units has no end");
    Expected<LoadedPtx> unit = load_ptx(units[index], target_arch);
    if (!unit)
      return Error{unit.error().code,
                   fmt::format("device-linked image, translation unit {}: {}", index,
                               unit.error().message)};
    arch = std::max(arch, unit->arch);
    inputs.push_back({std::move(unit->text), fmt::format("translation unit {}", index)});
  }
  if (inputs.empty()) return direct;
  Expected<std::string> linked = link_ptx(inputs);
  if (!linked) return linked.error();
  return LoadedPtx{std::move(*linked), arch};
}

}  // namespace xcuda::runtime
