#include "parse/lexer.h"

#include <cctype>

namespace xcuda::ptx {
namespace {

bool starts_identifier(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '%';
}

bool continues_identifier(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }
bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)); }

class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(source) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_blanks_and_comments(tokens);
      if (at_end()) break;
      tokens.push_back(next_token());
    }
    tokens.push_back(Token{TokenKind::end_of_file, source_.substr(source_.size()), location_});
    return tokens;
  }

 private:
  bool at_end() const { return position_ >= source_.size(); }
  char peek(size_t ahead = 0) const {
    return position_ + ahead < source_.size() ? source_[position_ + ahead] : '\0';
  }

  void advance() {
    if (source_[position_] == '\n') {
      ++location_.line;
      location_.column = 1;
    } else {
      ++location_.column;
    }
    ++position_;
  }

  void skip_line() {
    while (!at_end() && peek() != '\n') advance();
  }

  void skip_blanks_and_comments(std::vector<Token>& tokens) {
    while (!at_end()) {
      char c = peek();
      if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        skip_line();
      } else if (c == '/' && peek(1) == '*') {
        SourceLocation start = location_;
        size_t begin = position_;
        advance();
        advance();
        while (!at_end() && !(peek() == '*' && peek(1) == '/')) advance();
        if (at_end()) {
          tokens.push_back(Token{TokenKind::invalid, source_.substr(begin, 2), start});
          return;
        }
        advance();
        advance();
      } else if (source_.substr(position_).starts_with("@@DWARF")) {
        skip_line();
      } else {
        return;
      }
    }
  }

  Token make(TokenKind kind, size_t begin, SourceLocation start) const {
    return Token{kind, source_.substr(begin, position_ - begin), start};
  }

  Token next_token() {
    SourceLocation start = location_;
    size_t begin = position_;
    char c = peek();
    if (starts_identifier(c)) {
      advance();
      while (continues_identifier(peek())) advance();
      return make(TokenKind::identifier, begin, start);
    }
    // A modifier glued to a word may start with a digit: tex.1d, .2d.
    bool glued = position_ > 0 && continues_identifier(source_[position_ - 1]) && is_digit(peek(1));
    if (c == '.' && ((starts_identifier(peek(1)) && peek(1) != '%') || glued)) {
      advance();
      // `.shared::cta` and `.L2::evict_last` are single modifiers.
      while (continues_identifier(peek()) ||
             (peek() == ':' && peek(1) == ':' && continues_identifier(peek(2)))) {
        if (peek() == ':') advance();
        advance();
      }
      return make(TokenKind::dot_word, begin, start);
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number(begin, start);
    if (c == '"') {
      advance();
      while (!at_end() && peek() != '"' && peek() != '\n') {
        if (peek() == '\\' && position_ + 1 < source_.size()) advance();
        advance();
      }
      if (peek() != '"') return make(TokenKind::invalid, begin, start);
      advance();
      return make(TokenKind::string, begin, start);
    }
    static constexpr std::string_view punctuation = ";,:[]{}()<>+-!|@=*/&^~?";
    advance();
    if (punctuation.find(c) != std::string_view::npos) return make(TokenKind::punctuation, begin, start);
    return make(TokenKind::invalid, begin, start);
  }

  Token number(size_t begin, SourceLocation start) {
    char c = peek();
    char marker = static_cast<char>(std::tolower(static_cast<unsigned char>(peek(1))));
    if (c == '0' && (marker == 'f' || marker == 'd') && is_hex_digit(peek(2))) {
      advance();
      advance();
      while (is_hex_digit(peek())) advance();
      return make(TokenKind::float_literal, begin, start);
    }
    if (c == '0' && (marker == 'x' || marker == 'b') && is_hex_digit(peek(2))) {
      advance();
      advance();
      while (is_hex_digit(peek())) advance();
      if (peek() == 'U' || peek() == 'u') advance();
      return make(TokenKind::integer, begin, start);
    }
    bool is_float = false;
    while (is_digit(peek())) advance();
    if (peek() == '.' && !starts_identifier(peek(1))) {
      is_float = true;
      advance();
      while (is_digit(peek())) advance();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
      is_float = true;
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (is_digit(peek())) advance();
    }
    if (!is_float && (peek() == 'U' || peek() == 'u')) advance();
    return make(is_float ? TokenKind::float_literal : TokenKind::integer, begin, start);
  }

  std::string_view source_;
  size_t position_ = 0;
  SourceLocation location_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace xcuda::ptx
