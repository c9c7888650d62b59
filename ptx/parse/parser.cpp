#include "parse/parser.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>

namespace xcuda::ptx {
namespace {

// Thrown after the diagnostic is recorded; the statement loop catches it and resynchronises.
struct StatementAbandoned {};

constexpr int max_nesting = 64;

class Parser {
 public:
  Parser(std::string_view source, DiagnosticSink& diagnostics)
      : tokens_(tokenize(source)), diagnostics_(diagnostics) {}

  Module run() {
    while (!at_end()) {
      size_t start = position_;
      try {
        module_statement();
      } catch (const StatementAbandoned&) {
        skip_past_statement();
        // The body of a function whose header was broken: its error is already reported.
        if (peek().is_punctuation('{')) skip_braced_section();
      }
      if (position_ == start) next();  // always make progress, whatever the input
    }
    return std::move(module_);
  }

 private:
  // ---- token access -------------------------------------------------------------------------

  const Token& peek(size_t ahead = 0) const {
    size_t index = std::min(position_ + ahead, tokens_.size() - 1);
    return tokens_[index];
  }
  bool at_end() const { return peek().kind == TokenKind::end_of_file; }
  const Token& next() {
    const Token& token = peek();
    if (!at_end()) ++position_;
    return token;
  }
  bool accept_punctuation(char symbol) {
    if (!peek().is_punctuation(symbol)) return false;
    next();
    return true;
  }
  bool accept_word(std::string_view word) {
    if (!peek().is(TokenKind::dot_word, word)) return false;
    next();
    return true;
  }

  std::string describe(const Token& token) const {
    switch (token.kind) {
      case TokenKind::end_of_file: return "end of file";
      case TokenKind::invalid: return "invalid character '" + std::string(token.text.substr(0, 1)) + "'";
      default: return "'" + std::string(token.text) + "'";
    }
  }

  [[noreturn]] void fail(SourceLocation location, std::string message) {
    diagnostics_.error(location, std::move(message));
    throw StatementAbandoned{};
  }
  [[noreturn]] void fail_expected(std::string_view what) {
    fail(peek().location, "expected " + std::string(what) + ", found " + describe(peek()));
  }

  void expect_punctuation(char symbol) {
    if (!accept_punctuation(symbol)) fail_expected(std::string("'") + symbol + "'");
  }

  // Whether `second` starts exactly where `first` ends, with no blank between them.
  static bool glued(const Token& first, const Token& second) {
    return second.location.line == first.location.line &&
           second.location.column == first.location.column + first.text.size();
  }
  bool next_is_glued() const { return position_ > 0 && glued(tokens_[position_ - 1], peek()); }

  // Where a missing ';' belongs: right after the previous token.
  SourceLocation end_of_previous_token() const {
    if (position_ == 0) return peek().location;
    const Token& previous = tokens_[position_ - 1];
    SourceLocation location = previous.location;
    location.column += static_cast<uint32_t>(previous.text.size());
    return location;
  }

  void expect_statement_end() {
    if (accept_punctuation(';')) return;
    // A statement that simply lacks its ';' before the next line: report it and carry on with the
    // next line as a fresh statement rather than discarding it.
    if (position_ > 0 && peek().location.line > tokens_[position_ - 1].location.line) {
      diagnostics_.error(end_of_previous_token(), "expected ';' at end of statement");
      return;
    }
    fail_expected("';'");
  }

  // Skips to just after the broken statement's ';'. A brace on the line where the problem was
  // found belongs to the statement ({a, b} operands, initialisers); one on a later line opens
  // or closes a block, and the statement is taken to end before it.
  void skip_past_statement() {
    uint32_t line = peek().location.line;
    int depth = 0;
    while (!at_end()) {
      const Token& token = peek();
      if (token.is_punctuation(';') && depth == 0) {
        next();
        return;
      }
      bool opens = token.is_punctuation('{') || token.is_punctuation('(') || token.is_punctuation('[');
      bool closes = token.is_punctuation('}') || token.is_punctuation(')') || token.is_punctuation(']');
      bool brace = token.is_punctuation('{') || token.is_punctuation('}');
      if (brace && depth == 0 && (token.location.line != line || token.is_punctuation('}'))) return;
      if (opens) ++depth;
      if (closes && depth > 0) --depth;
      next();
    }
  }

  // Directives such as .loc and .file are one line long and end without ';'.
  void skip_rest_of_line(uint32_t line) {
    while (!at_end() && peek().location.line == line && !peek().is_punctuation('}')) next();
  }

  void skip_braced_section() {
    int depth = 0;
    while (!at_end()) {
      const Token& token = next();
      if (token.is_punctuation('{')) ++depth;
      if (token.is_punctuation('}') && --depth <= 0) return;
    }
  }

  // ---- literals -----------------------------------------------------------------------------

  uint64_t integer_value(const Token& token) {
    std::string_view text = token.text;
    if (!text.empty() && (text.back() == 'U' || text.back() == 'u')) text.remove_suffix(1);
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
      base = 16;
      text.remove_prefix(2);
    } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
      base = 2;
      text.remove_prefix(2);
    } else if (text.size() > 1 && text[0] == '0') {
      base = 8;
      text.remove_prefix(1);
    }
    uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (error != std::errc() || end != text.data() + text.size())
      fail(token.location, "invalid integer literal '" + std::string(token.text) + "'");
    return value;
  }

  // ---- constant expressions -----------------------------------------------------------------
  // The ISA's integer constant expressions: C's operators and precedence over 64 bits, each value
  // signed (.s64) or unsigned (.u64) by the ISA's rules, every case defined.

  // An integer (.s64 or .u64) or, from floating-point literals, an .f64.
  struct Constant {
    uint64_t bits = 0;
    bool is_unsigned = false;
    bool is_float = false;
    double value = 0;
  };

  // Comparisons and logical operators answer a signed 0 or 1.
  static Constant truth(bool value) { return Constant{value ? 1u : 0u, false}; }

  static bool is_one_of(const Token& token, std::string_view symbols) {
    return token.kind == TokenKind::punctuation && symbols.find(token.text[0]) != std::string_view::npos;
  }

  // Whether the cursor is at an integer expression: unary operators before an integer, WARP_SZ,
  // or a parenthesis that holds one or a cast (a call's parenthesised list holds names).
  bool at_integer_expression() const {
    size_t ahead = 0;
    while (is_one_of(peek(ahead), "-+~!")) ++ahead;
    const Token& first = peek(ahead);
    if (first.kind == TokenKind::integer || first.is(TokenKind::identifier, "WARP_SZ")) return true;
    if (!first.is_punctuation('(')) return false;
    const Token& inside = peek(ahead + 1);
    return inside.kind == TokenKind::integer || inside.is(TokenKind::dot_word, ".s64") ||
           inside.is(TokenKind::dot_word, ".u64") || is_one_of(inside, "(-+~!");
  }

  // Whether the cursor is at an integer expression or a floating-point one that computes: a float
  // literal in parentheses or before an operator. A float literal alone keeps its bits as written.
  bool at_constant_expression() const {
    if (at_integer_expression()) return true;
    size_t ahead = 0;
    while (is_one_of(peek(ahead), "-+~!")) ++ahead;
    const Token& first = peek(ahead);
    if (first.is_punctuation('(')) return peek(ahead + 1).kind == TokenKind::float_literal;
    if (first.kind != TokenKind::float_literal) return false;
    // `!` and `~` make one of the expression's errors.
    for (size_t index = 0; index < ahead; ++index)
      if (is_one_of(peek(index), "~!")) return true;
    const Token& after = peek(ahead + 1);
    return is_one_of(after, "+-*/<>=!&|^?") || after.is(TokenKind::identifier, "%");
  }

  uint64_t integer_expression() {
    SourceLocation location = peek().location;
    Constant constant = conditional_expression(0);
    if (constant.is_float) fail(location, "expected an integer constant expression");
    return constant.bits;
  }

  Constant integer_operand(Constant constant, SourceLocation location) {
    if (constant.is_float) fail(location, "this operation takes integers, not floating-point values");
    return constant;
  }

  Constant conditional_expression(int depth) {
    if (depth > max_nesting) fail(peek().location, "expression nested too deeply");
    SourceLocation location = peek().location;
    Constant condition = binary_expression(0, depth);
    if (!accept_punctuation('?')) return condition;
    integer_operand(condition, location);
    location = peek().location;
    Constant chosen = integer_operand(conditional_expression(depth + 1), location);
    expect_punctuation(':');
    location = peek().location;
    Constant other = integer_operand(conditional_expression(depth + 1), location);
    if (condition.bits == 0) std::swap(chosen, other);
    chosen.is_unsigned = chosen.is_unsigned || other.is_unsigned;
    return chosen;
  }

  // The binary operator at the cursor, two tokens for << >> <= >= == != && ||, with its
  // precedence (higher binds tighter); none where the expression ends.
  struct BinaryOperator {
    std::string_view text;
    int precedence = -1;
  };
  static constexpr int multiplicative_precedence = 9;

  BinaryOperator binary_operator() const {
    const Token& first = peek();
    if (first.kind != TokenKind::punctuation && !first.is(TokenKind::identifier, "%")) return {};
    const Token& second = peek(1);
    const bool pair = second.kind == TokenKind::punctuation && glued(first, second);
    static constexpr std::pair<std::string_view, int> pairs[] = {
        {"<<", 7}, {">>", 7}, {"<=", 6}, {">=", 6}, {"==", 5}, {"!=", 5}, {"&&", 1}, {"||", 0}};
    static constexpr std::pair<std::string_view, int> singles[] = {
        {"*", multiplicative_precedence}, {"/", multiplicative_precedence}, {"%", multiplicative_precedence},
        {"+", 8}, {"-", 8}, {"<", 6}, {">", 6}, {"&", 4}, {"^", 3}, {"|", 2}};
    if (pair) {
      std::string both = std::string(first.text) + std::string(second.text);
      for (auto [text, precedence] : pairs)
        if (both == text) return {text, precedence};
    }
    for (auto [text, precedence] : singles)
      if (first.text == text) return {text, precedence};
    return {};
  }

  Constant binary_expression(int lowest_precedence, int depth) {
    Constant left = unary_expression(depth);
    while (true) {
      BinaryOperator operation = binary_operator();
      if (operation.precedence < lowest_precedence) return left;
      SourceLocation location = peek().location;
      for (size_t token = 0; token < operation.text.size(); ++token) next();
      Constant right = binary_expression(operation.precedence + 1, depth + 1);
      left = apply(operation.text, left, right, location);
    }
  }

  Constant unary_expression(int depth) {
    if (depth > max_nesting) fail(peek().location, "expression nested too deeply");
    const Token& token = peek();
    if (accept_punctuation('-') || accept_punctuation('+')) {
      Constant operand = unary_expression(depth + 1);
      if (token.text == "-") {
        operand.bits = ~operand.bits + 1;
        operand.value = -operand.value;
      }
      return operand;
    }
    if (accept_punctuation('!')) return truth(integer_operand(unary_expression(depth + 1), token.location).bits == 0);
    if (accept_punctuation('~')) return Constant{~integer_operand(unary_expression(depth + 1), token.location).bits, true};
    if (accept_punctuation('(')) {
      if (peek().is(TokenKind::dot_word, ".s64") || peek().is(TokenKind::dot_word, ".u64")) {
        bool is_unsigned = next().text == ".u64";
        expect_punctuation(')');
        return Constant{integer_operand(unary_expression(depth + 1), token.location).bits, is_unsigned};
      }
      Constant inner = conditional_expression(depth + 1);
      expect_punctuation(')');
      return inner;
    }
    // WARP_SZ is the ISA's name for the warp size, a constant of every target.
    if (token.is(TokenKind::identifier, "WARP_SZ")) {
      next();
      return Constant{32, false};
    }
    if (token.kind == TokenKind::float_literal) {
      FloatLiteral literal = float_literal(next(), false);
      double value = literal.bits == 32   ? std::bit_cast<float>(static_cast<uint32_t>(literal.raw))
                     : literal.bits == 64 ? std::bit_cast<double>(literal.raw)
                                          : literal.value;
      return Constant{0, false, true, value};
    }
    if (token.kind != TokenKind::integer) fail_expected("an integer");
    uint64_t bits = integer_value(next());
    // Signed unless written with U or too large for .s64.
    return Constant{bits, token.text.back() == 'U' || token.text.back() == 'u' || bits > uint64_t{INT64_MAX}};
  }

  // Floating-point operands take + - * / and the comparisons, whose answer is an integer; ptxas
  // neither converts between integers and floating point nor takes the others.
  Constant apply_float(std::string_view operation, double left, double right, SourceLocation location) {
    if (operation == "+") return Constant{0, false, true, left + right};
    if (operation == "-") return Constant{0, false, true, left - right};
    if (operation == "*") return Constant{0, false, true, left * right};
    if (operation == "/") {
      if (right == 0) fail(location, "division by zero in a constant expression");
      return Constant{0, false, true, left / right};
    }
    if (operation == "<") return truth(left < right);
    if (operation == ">") return truth(left > right);
    if (operation == "<=") return truth(left <= right);
    if (operation == ">=") return truth(left >= right);
    if (operation == "==") return truth(left == right);
    if (operation == "!=") return truth(left != right);
    fail(location, "'" + std::string(operation) + "' takes integers, not floating-point values");
  }

  Constant apply(std::string_view operation, Constant left, Constant right, SourceLocation location) {
    if (left.is_float != right.is_float) fail(location, "a constant expression cannot mix integers and floating-point values");
    if (left.is_float) return apply_float(operation, left.value, right.value, location);
    const bool is_unsigned = left.is_unsigned || right.is_unsigned;
    auto signed_value = [](uint64_t bits) { return static_cast<int64_t>(bits); };
    if (operation == "+") return Constant{left.bits + right.bits, is_unsigned};
    if (operation == "-") return Constant{left.bits - right.bits, is_unsigned};
    if (operation == "*") return Constant{left.bits * right.bits, is_unsigned};
    if (operation == "/" || operation == "%") {
      if (right.bits == 0) fail(location, "division by zero in a constant expression");
      // The remainder is unsigned; a signed quotient of INT64_MIN by -1 wraps.
      if (operation == "%") return Constant{left.bits % right.bits, true};
      if (is_unsigned) return Constant{left.bits / right.bits, true};
      if (signed_value(right.bits) == -1) return Constant{~left.bits + 1, false};
      return Constant{static_cast<uint64_t>(signed_value(left.bits) / signed_value(right.bits)), false};
    }
    if (operation == "<<") return Constant{right.bits >= 64 ? 0 : left.bits << right.bits, left.is_unsigned};
    if (operation == ">>") {
      if (left.is_unsigned) return Constant{right.bits >= 64 ? 0 : left.bits >> right.bits, true};
      return Constant{static_cast<uint64_t>(signed_value(left.bits) >> std::min<uint64_t>(right.bits, 63)), false};
    }
    if (operation == "&") return Constant{left.bits & right.bits, is_unsigned};
    if (operation == "^") return Constant{left.bits ^ right.bits, is_unsigned};
    if (operation == "|") return Constant{left.bits | right.bits, is_unsigned};
    if (operation == "&&") return truth(left.bits != 0 && right.bits != 0);
    if (operation == "||") return truth(left.bits != 0 || right.bits != 0);
    if (operation == "==") return truth(left.bits == right.bits);
    if (operation == "!=") return truth(left.bits != right.bits);
    auto less = [&](Constant a, Constant b) {
      return is_unsigned ? a.bits < b.bits : signed_value(a.bits) < signed_value(b.bits);
    };
    if (operation == "<") return truth(less(left, right));
    if (operation == ">") return truth(less(right, left));
    if (operation == "<=") return truth(!less(right, left));
    return truth(!less(left, right));  // >=
  }

  // The displacement after a base address: `+` and a constant expression (`+8`, `+-4`, `+4*2-1`),
  // 0 where none follows. As in ptxas, a `-` right after the base is no displacement.
  int64_t displacement() {
    if (!accept_punctuation('+')) return 0;
    return static_cast<int64_t>(integer_expression());
  }

  uint32_t small_integer(std::string_view what) {
    const Token& token = peek();
    if (token.kind != TokenKind::integer) fail_expected(what);
    uint64_t value = integer_value(next());
    if (value > 0xFFFFFFFFu) fail(token.location, std::string(what) + " is too large");
    return static_cast<uint32_t>(value);
  }

  struct FloatLiteral {
    uint8_t bits = 0;     // 32 for 0f, 64 for 0d, 0 for a decimal literal
    uint64_t raw = 0;     // the hex digits of a 0f/0d literal
    double value = 0;     // a decimal literal
  };

  FloatLiteral float_literal(const Token& token, bool negative) {
    std::string_view text = token.text;
    FloatLiteral literal;
    if (text.size() > 2 && text[0] == '0' && std::string_view("fFdD").find(text[1]) != std::string_view::npos) {
      bool single = text[1] == 'f' || text[1] == 'F';
      size_t digits = single ? 8 : 16;
      if (text.size() != digits + 2)
        fail(token.location, "float literal '" + std::string(text) + "' needs exactly " +
                                 std::to_string(digits) + " hex digits");
      std::from_chars(text.data() + 2, text.data() + text.size(), literal.raw, 16);
      if (negative) literal.raw ^= single ? 0x80000000ull : 0x8000000000000000ull;
      literal.bits = single ? 32 : 64;
      return literal;
    }
    std::string copy(text);
    char* end = nullptr;
    literal.value = std::strtod(copy.c_str(), &end);
    if (end != copy.c_str() + copy.size()) fail(token.location, "invalid float literal '" + copy + "'");
    if (negative) literal.value = -literal.value;
    return literal;
  }

  // ---- module level -------------------------------------------------------------------------

  void module_statement() {
    const Token& token = peek();
    if (token.kind != TokenKind::dot_word) fail_expected("a directive");
    std::string_view word = token.text;
    if (word == ".version") {
      next();
      if (peek().kind != TokenKind::float_literal && peek().kind != TokenKind::integer) fail_expected("a version number");
      module_.version_location = peek().location;
      module_.version = std::string(next().text);
    } else if (word == ".target") {
      next();
      if (peek().kind != TokenKind::identifier) fail_expected("a target name");
      module_.target_location = peek().location;
      module_.target = std::string(next().text);
      while (accept_punctuation(',')) {
        if (peek().kind != TokenKind::identifier) fail_expected("a target option");
        SourceLocation location = peek().location;
        module_.target_options.push_back({std::string(next().text), location});
      }
    } else if (word == ".address_size") {
      next();
      module_.address_size_location = peek().location;
      module_.address_size = small_integer("an address size");
      if (module_.address_size != 32 && module_.address_size != 64)
        fail(module_.address_size_location, ".address_size must be 32 or 64");
      expect_optional_statement_end();
    } else if (word == ".file" || word == ".loc") {
      next();
      skip_rest_of_line(token.location.line);
    } else if (word == ".section") {
      skip_braced_section();
    } else if (word == ".alias") {
      next();
      FunctionAlias alias{token.location, name("an alias name"), {}};
      expect_punctuation(',');
      alias.aliasee = name("the aliased function");
      expect_statement_end();
      module_.aliases.push_back(std::move(alias));
    } else if (word == ".pragma") {
      next();
      if (peek().kind != TokenKind::string) fail_expected("a pragma string");
      next();
      expect_statement_end();
    } else {
      declaration_or_function();
    }
  }

  std::string name(std::string_view what) {
    if (peek().kind != TokenKind::identifier) fail_expected(what);
    return std::string(next().text);
  }

  // Header directives have no ';', but a stray one after them is harmless.
  void expect_optional_statement_end() { accept_punctuation(';'); }

  struct Linkage {
    bool is_visible = false, is_extern = false, is_weak = false;
  };

  void declaration_or_function() {
    Linkage linkage;
    SourceLocation start = peek().location;
    while (true) {
      if (accept_word(".visible")) linkage.is_visible = true;
      else if (accept_word(".extern")) linkage.is_extern = true;
      else if (accept_word(".weak") || accept_word(".common")) linkage.is_weak = true;
      else break;
    }
    if (peek().is(TokenKind::dot_word, ".entry") || peek().is(TokenKind::dot_word, ".func")) {
      function(linkage, start);
      return;
    }
    std::vector<VariableDeclaration> declarations = variable_declarations(/*at_module_scope=*/true);
    for (auto& declaration : declarations) {
      declaration.is_visible = linkage.is_visible;
      declaration.is_extern = linkage.is_extern;
      declaration.is_weak = linkage.is_weak;
      module_.variables.push_back(std::move(declaration));
    }
  }

  // ---- declarations -------------------------------------------------------------------------

  // `.space [.align N] [.vN] .type [.ptr ...] name[<N>][dims] [= init] {, name ...} ;`
  // The caller has consumed any linkage words; the ';' is consumed here.
  std::vector<VariableDeclaration> variable_declarations(bool at_module_scope) {
    const Token& space_token = peek();
    std::optional<StateSpace> space;
    if (space_token.kind == TokenKind::dot_word) space = state_space_named(space_token.text.substr(1));
    if (!space || *space == StateSpace::sreg)
      fail(space_token.location, at_module_scope ? "expected a directive, found " + describe(space_token)
                                                 : "expected a state space, found " + describe(space_token));
    next();
    VariableDeclaration prototype;
    prototype.location = space_token.location;
    prototype.space = *space;
    declaration_attributes(prototype);

    std::vector<VariableDeclaration> declarations;
    do {
      VariableDeclaration declaration = prototype;
      declaration_name(declaration);
      if (accept_punctuation('=')) {
        if (declaration.space != StateSpace::global && declaration.space != StateSpace::constant)
          fail(peek().location, "only .global and .const variables can have initialisers");
        initializer(declaration);
      }
      declarations.push_back(std::move(declaration));
    } while (accept_punctuation(','));
    expect_statement_end();
    return declarations;
  }

  // The words between the state space and the name: alignment, vector width, type, .ptr.
  void declaration_attributes(VariableDeclaration& declaration) {
    bool have_type = false;
    while (peek().kind == TokenKind::dot_word) {
      const Token& token = peek();
      std::string_view word = token.text.substr(1);
      if (word == "align") {
        next();
        const Token& value_token = peek();
        declaration.alignment = small_integer("an alignment");
        if (declaration.alignment == 0 || (declaration.alignment & (declaration.alignment - 1)) != 0)
          fail(value_token.location, "alignment must be a power of two");
      } else if (word == "v2" || word == "v4" || word == "v8") {
        next();
        declaration.vector_width = static_cast<uint32_t>(word[1] - '0');
      } else if (word == "ptr") {
        // .ptr [.space] [.align N]: a hint about what a kernel parameter points at; the alignment
        // is the pointee's, not the parameter's.
        next();
        if (peek().kind == TokenKind::dot_word && state_space_named(peek().text.substr(1))) next();
        if (accept_word(".align")) small_integer("an alignment");
      } else if (auto type = scalar_type_named(word)) {
        if (have_type) fail(token.location, "a declaration has only one type");
        next();
        declaration.type = *type;
        have_type = true;
      } else if (word == "attribute") {
        // .attribute(.managed); .unified(uuid1, uuid2) names a function or variable shared with
        // the host's code, which only separate compilation with the host compiler gives.
        next();
        expect_punctuation('(');
        const Token& attribute = peek();
        if (attribute.kind != TokenKind::dot_word || attribute.text != ".managed")
          fail(attribute.location, "'" + std::string(attribute.text) + "' is not supported yet");
        next();
        declaration.is_managed = true;
        expect_punctuation(')');
      } else if (word == "texref" || word == "surfref" || word == "samplerref") {
        // Module-scope references, bound by the driver's texture-reference calls, which CUDA 12
        // removed; kernels take texture and surface objects instead.
        fail(token.location, "." + std::string(word) + " variables (texture references) are not supported yet");
      } else {
        fail(token.location, "unexpected " + describe(token) + " in a declaration");
      }
    }
    if (!have_type) fail_expected("a type");
  }

  void declaration_name(VariableDeclaration& declaration) {
    if (peek().kind != TokenKind::identifier) fail_expected("a name");
    declaration.location = peek().location;
    declaration.name = std::string(next().text);
    if (accept_punctuation('<')) {
      const Token& count_token = peek();
      declaration.register_count = small_integer("a register count");
      if (declaration.register_count == 0) fail(count_token.location, "a register range needs at least one register");
      if (declaration.space != StateSpace::reg)
        fail(count_token.location, "only registers can be declared as a range");
      expect_punctuation('>');
    }
    while (accept_punctuation('[')) {
      if (accept_punctuation(']')) {
        if (declaration.unsized_array || !declaration.array_dimensions.empty())
          fail(peek().location, "only the first array dimension can be left out");
        declaration.unsized_array = true;
        continue;
      }
      const Token& size_token = peek();
      uint64_t size = small_integer("an array size");
      if (size == 0) fail(size_token.location, "an array needs at least one element");
      declaration.array_dimensions.push_back(size);
      expect_punctuation(']');
    }
  }

  // The initial values of `declaration`, in memory order. Their braces follow its type as ptxas
  // wants them: a level for each array dimension, with at most that many entries, one for a
  // vector, with exactly its width, and none around a scalar. They group values without padding
  // them: ptxas lays `{{1}, {3, 4}}` out as 1, 3, 4 (an H100 read a[0][1] as 3), not as C would.
  // An array whose first dimension is left out takes as many elements as the values fill.
  void initializer(VariableDeclaration& declaration) {
    bool reported = false;
    initial_values(declaration, 0, reported);
    if (!declaration.unsized_array || declaration.is_extern) return;
    uint64_t element = declaration.vector_width;
    // Saturates: absurd sizes stay absurd for the checker to report.
    for (uint64_t dimension : declaration.array_dimensions)
      element = dimension > UINT32_MAX / element ? UINT32_MAX : element * dimension;
    declaration.array_dimensions.insert(declaration.array_dimensions.begin(),
                                        std::max<uint64_t>(1, (declaration.initializer.size() + element - 1) / element));
    declaration.unsized_array = false;
  }

  // The values of brace level `level` of `declaration`'s initialiser (see initializer()). Braces
  // that do not follow the type are reported, the first of them, and read all the same, so that
  // the statement still ends where it does.
  void initial_values(VariableDeclaration& declaration, size_t level, bool& reported) {
    if (level > max_nesting) fail(peek().location, "initialiser nested too deeply");
    auto report = [&](SourceLocation location, const std::string& message) {
      if (!reported) diagnostics_.error(location, message);
      reported = true;
    };
    // An unsized array's first dimension is not among array_dimensions yet.
    const size_t array_levels = declaration.array_dimensions.size() + (declaration.unsized_array ? 1 : 0);
    const bool vector = declaration.vector_width > 1 && level == array_levels;
    const bool braced = level < array_levels || vector;
    SourceLocation location = peek().location;
    if (!accept_punctuation('{')) {
      if (braced)
        report(location, std::string("expected '{' around the initial values of ") + (vector ? "a vector" : "an array dimension") +
                             " of '" + declaration.name + "'");
      declaration.initializer.push_back(initial_value());
      return;
    }
    if (!braced) report(location, "'" + declaration.name + "' takes a scalar here, not braces");
    uint64_t entries = 0;
    do {
      initial_values(declaration, level + 1, reported);
      ++entries;
    } while (accept_punctuation(','));
    expect_punctuation('}');
    if (vector && entries != declaration.vector_width)
      report(location, "'" + declaration.name + "' is a .v" + std::to_string(declaration.vector_width) +
                           " variable: each of its vectors takes " + std::to_string(declaration.vector_width) + " initial values");
    const bool sized = level > 0 || !declaration.unsized_array;
    if (braced && !vector && sized && entries > declaration.array_dimensions[level - (declaration.unsized_array ? 1 : 0)])
      report(location, "too many initial values for '" + declaration.name + "'");
  }

  InitialValue initial_value() {
    InitialValue value;
    value.location = peek().location;
    const Token& token = peek();
    if (token.kind == TokenKind::integer && peek(1).is_punctuation('(') && peek(2).kind == TokenKind::identifier) {
      // 0xFF00(symbol): a byte of the symbol's address.
      value.mask = integer_value(next());
      if (value.mask == 0) fail(token.location, "an address mask needs at least one bit");
      next();
      address_initializer(value);
      expect_punctuation(')');
    } else if (at_constant_expression()) {
      Constant constant = conditional_expression(0);
      value.integer = constant.bits;
      if (constant.is_float) {
        value.kind = InitialValue::Kind::floating;
        value.floating = constant.value;
      }
    } else if (token.kind == TokenKind::identifier) {
      address_initializer(value);
    } else {
      bool negative = accept_punctuation('-');
      const Token& number = peek();
      if (number.kind != TokenKind::float_literal) fail_expected("an initial value");
      next();
      FloatLiteral literal = float_literal(number, negative);
      value.kind = InitialValue::Kind::floating;
      if (literal.bits == 32) {
        value.integer = literal.raw;
        value.float_is_single = true;
      } else if (literal.bits == 64) {
        value.floating = std::bit_cast<double>(literal.raw);
      } else {
        value.floating = literal.value;
      }
    }
    return value;
  }

  // `symbol`, `generic(symbol)`, either with `+offset`.
  void address_initializer(InitialValue& value) {
    value.kind = InitialValue::Kind::address;
    value.location = peek().location;
    std::string symbol = name("a variable name");
    if (symbol == "generic" && accept_punctuation('(')) {
      value.location = peek().location;
      symbol = name("a variable name");
      expect_punctuation(')');
    }
    value.symbol = std::move(symbol);
    value.offset = displacement();
  }

  // ---- functions ----------------------------------------------------------------------------

  void function(const Linkage& linkage, SourceLocation start) {
    Function function;
    function.location = start;
    function.is_entry = next().text == ".entry";
    function.is_visible = linkage.is_visible;
    function.is_extern = linkage.is_extern;
    function.is_weak = linkage.is_weak;
    if (!function.is_entry && peek().is_punctuation('(')) function.returns = parameter_list();
    if (peek().kind != TokenKind::identifier) fail_expected("a function name");
    function.name = std::string(next().text);
    if (peek().is_punctuation('(')) function.parameters = parameter_list();
    function_directives(function);
    if (accept_punctuation(';')) {
      module_.functions.push_back(std::move(function));
      return;
    }
    if (!peek().is_punctuation('{')) fail_expected("'{' or ';' after the function header");
    SourceLocation body_start = next().location;
    function.has_body = true;
    function_body(function, body_start);
    module_.functions.push_back(std::move(function));
  }

  // `anonymous`: a .callprototype's list, whose parameters are all named `_`.
  std::vector<VariableDeclaration> parameter_list(bool anonymous = false) {
    expect_punctuation('(');
    std::vector<VariableDeclaration> parameters;
    if (accept_punctuation(')')) return parameters;
    do {
      const Token& space_token = peek();
      VariableDeclaration parameter;
      parameter.location = space_token.location;
      if (space_token.is(TokenKind::dot_word, ".param")) parameter.space = StateSpace::param;
      else if (space_token.is(TokenKind::dot_word, ".reg")) parameter.space = StateSpace::reg;
      else fail_expected("'.param'");
      next();
      declaration_attributes(parameter);
      declaration_name(parameter);
      if (parameter.register_count != 0) fail(parameter.location, "a parameter cannot be a register range");
      if (parameter.name == "_" && !anonymous) fail(parameter.location, "only a .callprototype may leave a parameter unnamed");
      parameters.push_back(std::move(parameter));
    } while (accept_punctuation(','));
    expect_punctuation(')');
    return parameters;
  }

  void thread_counts(std::array<uint32_t, 3>& counts) {
    counts = {1, 1, 1};
    int index = 0;
    do {
      if (index == 3) fail(peek().location, "at most three dimensions");
      counts[static_cast<size_t>(index++)] = small_integer("a thread count");
    } while (accept_punctuation(','));
  }

  // The directives after a function's header: a kernel's performance tuning and .pragma, or a
  // .func's .noreturn and ABI register counts (.abi_preserve, PTX 9.0), which mean nothing to
  // the host; as in ptxas, each only where it belongs.
  void function_directives(Function& function) {
    uint64_t cluster_blocks = 1;
    std::optional<SourceLocation> blocks_are_clusters;
    using Words = std::span<const std::string_view>;
    static constexpr std::string_view function_only[] = {".noreturn", ".abi_preserve",
                                                         ".abi_preserve_control"};
    static constexpr std::string_view kernel_only[] = {
        ".maxntid",        ".reqntid",           ".minnctapersm",     ".maxnreg",
        ".maxnctapersm",   ".maxclusterrank",    ".reqnctapercluster", ".explicitcluster",
        ".blocksareclusters", ".pragma"};
    const Words misplaced = function.is_entry ? Words(function_only) : Words(kernel_only);
    while (peek().kind == TokenKind::dot_word) {
      std::string_view word = peek().text;
      if (std::ranges::find(misplaced, word) != misplaced.end())
        fail(peek().location, "'" + std::string(word) + "' applies to " +
                                  (function.is_entry ? "a .func, not a kernel"
                                                     : "a kernel (.entry), not a .func"));
      if (word == ".maxntid") {
        next();
        thread_counts(function.max_threads);
      } else if (word == ".reqntid") {
        next();
        thread_counts(function.required_threads);
      } else if (word == ".minnctapersm") {
        next();
        function.min_blocks_per_multiprocessor = small_integer("a block count");
      } else if (word == ".maxnreg" || word == ".maxnctapersm" || word == ".maxclusterrank" || word == ".abi_preserve" ||
                 word == ".abi_preserve_control") {
        next();
        small_integer("a count");
      } else if (word == ".reqnctapercluster") {
        next();
        std::array<uint32_t, 3> counts{};
        thread_counts(counts);
        cluster_blocks = uint64_t{std::max(counts[0], 1u)} * std::max(counts[1], 1u) * std::max(counts[2], 1u);
      } else if (word == ".noreturn" || word == ".explicitcluster") {
        // A function that never returns has nothing to give back (ptxas: "Invalid directive").
        if (word == ".noreturn" && !function.returns.empty())
          fail(peek().location, "'" + function.name + "' returns values and cannot be .noreturn");
        next();
      } else if (word == ".blocksareclusters") {
        // Each block of the grid is then a cluster: the same launch where a cluster is one block,
        // which is all xcuda's clusters hold (a launch of larger ones is refused).
        blocks_are_clusters = next().location;
      } else if (word == ".pragma") {
        next();
        if (peek().kind != TokenKind::string) fail_expected("a pragma string");
        next();
        expect_statement_end();
      } else {
        break;
      }
    }
    if (blocks_are_clusters && cluster_blocks > 1)
      fail(*blocks_are_clusters, ".blocksareclusters with clusters of more than one block is not supported yet");
  }

  void function_body(Function& function, SourceLocation body_start) {
    int depth = 0;
    while (true) {
      if (at_end()) {
        diagnostics_.error(peek().location, "expected '}' to close the body of '" + function.name +
                                                "' opened at " + std::to_string(body_start.line) +
                                                ":" + std::to_string(body_start.column));
        return;
      }
      if (peek().is_punctuation('}')) {
        SourceLocation location = next().location;
        if (depth == 0) return;
        --depth;
        function.body.push_back(ScopeEnd{location});
        continue;
      }
      if (peek().is_punctuation('{')) {
        if (depth == max_nesting) {
          diagnostics_.error(peek().location, "blocks nested too deeply");
          skip_braced_section();
          continue;
        }
        function.body.push_back(ScopeBegin{next().location});
        ++depth;
        continue;
      }
      // A body that is not closed before the next function: report it here rather than reading
      // the next function's header as instructions.
      if (peek().is(TokenKind::dot_word, ".entry") || peek().is(TokenKind::dot_word, ".func") ||
          peek().is(TokenKind::dot_word, ".visible")) {
        diagnostics_.error(peek().location, "expected '}' to close the body of '" + function.name +
                                                "' before the next function");
        return;
      }
      size_t start = position_;
      try {
        body_statement(function);
      } catch (const StatementAbandoned&) {
        skip_past_statement();
      }
      if (position_ == start) next();
    }
  }

  void body_statement(Function& function) {
    const Token& token = peek();
    if (token.kind == TokenKind::dot_word) {
      std::string_view word = token.text;
      if (word == ".loc" || word == ".file") {
        next();
        skip_rest_of_line(token.location.line);
        return;
      }
      if (word == ".pragma") {
        next();
        if (peek().kind != TokenKind::string) fail_expected("a pragma string");
        next();
        expect_statement_end();
        return;
      }
      if (word == ".callprototype" || word == ".calltargets" || word == ".branchtargets")
        fail(token.location, "'" + std::string(word) + "' needs a label: name: " + std::string(word) + " ...");
      for (auto& declaration : variable_declarations(/*at_module_scope=*/false))
        function.body.push_back(std::move(declaration));
      return;
    }
    if (token.kind == TokenKind::identifier && peek(1).is_punctuation(':')) {
      const Token& directive = peek(2);
      if (directive.is(TokenKind::dot_word, ".callprototype")) return call_prototype(function);
      if (directive.is(TokenKind::dot_word, ".calltargets") || directive.is(TokenKind::dot_word, ".branchtargets"))
        return target_list(function);
      next();
      next();
      function.body.push_back(Label{token.location, std::string(token.text)});
      return;
    }
    function.body.push_back(instruction());
  }

  // `name: .callprototype [(.param results)] _ (.param parameters) [.noreturn];`
  void call_prototype(Function& function) {
    CallPrototype prototype;
    prototype.location = peek().location;
    prototype.name = std::string(next().text);
    next();  // ':'
    next();  // .callprototype
    if (peek().is_punctuation('(')) prototype.returns = parameter_list(/*anonymous=*/true);
    if (!peek().is(TokenKind::identifier, "_")) fail_expected("'_' in place of the function name");
    next();
    if (peek().is_punctuation('(')) prototype.parameters = parameter_list(/*anonymous=*/true);
    while (accept_word(".noreturn") || accept_word(".abi_preserve") || accept_word(".abi_preserve_control")) {
      if (peek().kind == TokenKind::integer) next();
    }
    expect_statement_end();
    function.call_prototypes.push_back(std::move(prototype));
  }

  // `name: .branchtargets label, ...;` or `name: .calltargets function, ...;`
  void target_list(Function& function) {
    TargetList list;
    list.location = peek().location;
    list.name = std::string(next().text);
    next();  // ':'
    list.functions = next().text == ".calltargets";
    do {
      Operand target;
      target.location = peek().location;
      target.name = name(list.functions ? "a function name" : "a label");
      list.targets.push_back(std::move(target));
    } while (accept_punctuation(','));
    expect_statement_end();
    function.target_lists.push_back(std::move(list));
  }

  // ---- instructions -------------------------------------------------------------------------

  Instruction instruction() {
    Instruction instruction;
    instruction.location = peek().location;
    if (accept_punctuation('@')) {
      Guard guard;
      guard.negated = accept_punctuation('!');
      if (peek().kind != TokenKind::identifier) fail_expected("a predicate register after '@'");
      guard.predicate.location = peek().location;
      guard.predicate.name = std::string(next().text);
      instruction.guard = std::move(guard);
    }
    const Token& opcode = peek();
    if (opcode.kind != TokenKind::identifier || opcode.text[0] == '%' || opcode.text[0] == '$')
      fail_expected("an instruction");
    next();
    instruction.opcode = std::string(opcode.text);
    // Modifiers are glued to the opcode: `ld.global.f32`, never `ld .global`.
    while (peek().kind == TokenKind::dot_word && next_is_glued()) {
      const Token& modifier = next();
      instruction.modifiers.push_back(Modifier{std::string(modifier.text.substr(1)), modifier.location});
    }
    if (!peek().is_punctuation(';') && !starts_statement_on_new_line()) {
      do {
        instruction.operands.push_back(operand(0));
      } while (accept_punctuation(','));
    }
    expect_statement_end();
    return instruction;
  }

  // Operands may start on the line after the opcode (nvcc writes `call.uni` that way), so a
  // token on a new line is only taken as the next statement when it clearly starts one: a
  // label, a guard, a directive, a brace, or an opcode with modifiers.
  bool starts_statement_on_new_line() const {
    const Token& token = peek();
    if (position_ == 0 || token.location.line == tokens_[position_ - 1].location.line) return false;
    if (token.kind == TokenKind::dot_word || token.is_punctuation('@') || token.is_punctuation('}') ||
        token.kind == TokenKind::end_of_file)
      return true;
    if (token.kind != TokenKind::identifier) return false;
    const Token& following = peek(1);
    if (following.is_punctuation(':')) return true;
    return glued(token, following) && following.kind == TokenKind::dot_word && token.text[0] != '%';
  }

  Operand operand(int depth) {
    if (depth > max_nesting) fail(peek().location, "operand nested too deeply");
    Operand result;
    result.location = peek().location;
    const Token& token = peek();
    if (at_constant_expression()) {
      Constant constant = conditional_expression(0);
      result.kind = constant.is_float ? Operand::Kind::floating : Operand::Kind::integer;
      result.integer = constant.bits;
      result.floating = constant.value;
      return result;
    }
    if (accept_punctuation('!')) {
      result = operand(depth + 1);
      if (result.kind != Operand::Kind::name) fail(token.location, "only a predicate can be negated");
      result.negated = true;
      result.location = token.location;
      return result;
    }
    if (accept_punctuation('[')) {
      result.kind = Operand::Kind::address;
      address(result);
      expect_punctuation(']');
      return result;
    }
    if (token.is_punctuation('{') || token.is_punctuation('(')) {
      char closing = token.is_punctuation('{') ? '}' : ')';
      result.kind = token.is_punctuation('{') ? Operand::Kind::vector : Operand::Kind::list;
      next();
      if (accept_punctuation(closing)) return result;
      do {
        result.elements.push_back(operand(depth + 1));
      } while (accept_punctuation(','));
      expect_punctuation(closing);
      // `{d0, d1, d2, d3}|p`: tex and tld4 may say whether the texel was resident.
      if (closing == '}' && peek().is_punctuation('|')) return pair_after(std::move(result));
      return result;
    }
    bool negative = accept_punctuation('-');
    const Token& value = peek();
    if (value.kind == TokenKind::float_literal) {
      next();
      result.kind = Operand::Kind::floating;
      FloatLiteral literal = float_literal(value, negative);
      result.float_bits = literal.bits;
      result.integer = literal.raw;
      result.floating = literal.value;
      return result;
    }
    if (value.kind != TokenKind::identifier) fail_expected("an operand");
    next();
    if (value.text == "_" && !negative) {
      result.kind = Operand::Kind::sink;
      // `_|p`: elect.sync and setp-like pairs may drop their first result.
      if (peek().is_punctuation('|')) return pair_after(std::move(result));
      return result;
    }
    result.name = std::string(value.text);
    result.minus = negative;
    // %tid.x: the component is glued to the name.
    if (peek().kind == TokenKind::dot_word && next_is_glued()) {
      result.component = std::string(next().text.substr(1));
    }
    // `table+8`: a variable's address and a displacement, as mov takes it.
    result.offset = displacement();
    if (peek().is_punctuation('|')) return pair_after(std::move(result));
    return result;
  }

  // `first|p`, at the '|'.
  Operand pair_after(Operand first) {
    accept_punctuation('|');
    Operand result;
    result.kind = Operand::Kind::predicate_pair;
    result.location = first.location;
    result.elements.push_back(std::move(first));
    if (peek().kind != TokenKind::identifier) fail_expected("a predicate register after '|'");
    Operand second;
    second.location = peek().location;
    second.name = std::string(next().text);
    result.elements.push_back(std::move(second));
    return result;
  }

  void address(Operand& result) {
    const Token& token = peek();
    if (token.kind == TokenKind::identifier) {
      result.name = std::string(next().text);
    } else if (at_integer_expression()) {
      result.offset = static_cast<int64_t>(integer_expression());
      return;
    } else {
      fail_expected("an address");
    }
    result.offset = displacement();
    // Texture and surface instructions address [texture, {coordinates}].
    while (accept_punctuation(',')) result.elements.push_back(operand(1));
  }

  std::vector<Token> tokens_;
  size_t position_ = 0;
  DiagnosticSink& diagnostics_;
  Module module_;
};

}  // namespace

Module parse_module(std::string_view source, DiagnosticSink& diagnostics) {
  return Parser(source, diagnostics).run();
}

}  // namespace xcuda::ptx
