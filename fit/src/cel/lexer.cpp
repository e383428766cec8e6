// The CEL lexical grammar (cel-spec langdef.md "Syntax"): identifiers, int/uint/double
// literals, quoted/raw/triple-quoted strings and bytes with every escape, operators, comments.
#include "lexer.hpp"

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nodetopo::fit::cel {

namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  return (std::tolower(static_cast<unsigned char>(c)) - 'a') + 10;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      Token t = next();
      const bool stop = t.kind == Token::Kind::kEnd || t.kind == Token::Kind::kError;
      out.push_back(std::move(t));
      if (stop) break;
    }
    return out;
  }

 private:
  [[nodiscard]] char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0';
  }

  Token error(std::string message, std::size_t at) {
    return Token{Token::Kind::kError, std::move(message), static_cast<int>(at)};
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < s_.size() && s_[pos_] != '\n')
          ++pos_;
      } else {
        break;
      }
    }
  }

  Token next() {
    skip_space();
    const std::size_t start = pos_;
    if (pos_ >= s_.size()) return Token{Token::Kind::kEnd, "", static_cast<int>(start)};
    const char c = s_[pos_];
    // String and bytes prefixes: r, b, rb, br in any case.
    if (c == 'r' || c == 'R' || c == 'b' || c == 'B') {
      std::size_t k = pos_;
      bool raw = false;
      bool bytes = false;
      for (int n = 0; n < 2 && k < s_.size(); ++n) {
        const char p = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[k])));
        if (p == 'r' && !raw) {
          raw = true;
          ++k;
        } else if (p == 'b' && !bytes) {
          bytes = true;
          ++k;
        } else {
          break;
        }
      }
      if (k < s_.size() && (s_[k] == '"' || s_[k] == '\'')) {
        pos_ = k;
        return string_literal(start, raw, bytes);
      }
    }
    if (is_ident_start(c)) {
      while (pos_ < s_.size() && is_ident_char(s_[pos_]))
        ++pos_;
      return Token{Token::Kind::kIdent, std::string(s_.substr(start, pos_ - start)),
                   static_cast<int>(start)};
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return number(start);
    if (c == '"' || c == '\'') return string_literal(start, false, false);
    if (c == '`') {
      const auto close = s_.find('`', pos_ + 1);
      if (close == std::string_view::npos || close == pos_ + 1) {
        return error("unterminated quoted field name", start);
      }
      std::string name(s_.substr(pos_ + 1, close - pos_ - 1));
      for (char q : name) {
        if (!is_ident_char(q) && q != '.' && q != '-' && q != '/' && q != '~') {
          return error("invalid character in a quoted field name", start);
        }
      }
      pos_ = close + 1;
      return Token{Token::Kind::kQuotedIdent, std::move(name), static_cast<int>(start)};
    }
    static constexpr std::string_view two[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (std::string_view op : two) {
      if (s_.substr(pos_, 2) == op) {
        pos_ += 2;
        return Token{Token::Kind::kPunct, std::string(op), static_cast<int>(start)};
      }
    }
    static constexpr std::string_view one = "+-*/%!<>?:.,()[]{}";
    if (one.find(c) != std::string_view::npos) {
      ++pos_;
      return Token{Token::Kind::kPunct, std::string(1, c), static_cast<int>(start)};
    }
    if (c == '=') return error("unexpected '=' (did you mean '=='?)", start);
    return error(std::string("unexpected character '") + c + "'", start);
  }

  Token number(std::size_t start) {
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X')) {
      pos_ += 2;
      const std::size_t digits = pos_;
      while (is_hex(peek()))
        ++pos_;
      if (pos_ == digits) return error("malformed hexadecimal literal", start);
      std::string text(s_.substr(start, pos_ - start));
      if (peek() == 'u' || peek() == 'U') {
        ++pos_;
        return Token{Token::Kind::kUint, text, static_cast<int>(start)};
      }
      return Token{Token::Kind::kInt, text, static_cast<int>(start)};
    }
    bool is_float = false;
    while (is_digit(peek()))
      ++pos_;
    if (peek() == '.' && is_digit(peek(1))) {
      is_float = true;
      ++pos_;
      while (is_digit(peek()))
        ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      std::size_t k = 1;
      if (peek(k) == '+' || peek(k) == '-') ++k;
      if (is_digit(peek(k))) {
        is_float = true;
        pos_ += k;
        while (is_digit(peek()))
          ++pos_;
      }
    }
    std::string text(s_.substr(start, pos_ - start));
    if (is_float) return Token{Token::Kind::kDouble, text, static_cast<int>(start)};
    if (peek() == 'u' || peek() == 'U') {
      ++pos_;
      return Token{Token::Kind::kUint, text, static_cast<int>(start)};
    }
    return Token{Token::Kind::kInt, text, static_cast<int>(start)};
  }

  Token string_literal(std::size_t start, bool raw, bool bytes) {
    const char quote = s_[pos_];
    const bool triple = peek(1) == quote && peek(2) == quote;
    pos_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) return error("unterminated string literal", start);
      const char c = s_[pos_];
      if (triple) {
        if (c == quote && peek(1) == quote && peek(2) == quote) {
          pos_ += 3;
          break;
        }
      } else {
        if (c == quote) {
          ++pos_;
          break;
        }
        if (c == '\n' || c == '\r') return error("newline in a single-quoted string", start);
      }
      if (c == '\\' && !raw) {
        if (auto err = escape(out, bytes, start); !err.empty()) return error(err, pos_);
        continue;
      }
      if (c == '\\' && raw) {
        // A raw string keeps the backslash; an escaped quote does not end it.
        out += c;
        ++pos_;
        if (pos_ < s_.size() && s_[pos_] == quote && !triple) {
          out += quote;
          ++pos_;
        }
        continue;
      }
      if (c == '\r' && triple) {  // CEL normalises CRLF and CR in multi-line strings
        out += '\n';
        ++pos_;
        if (peek() == '\n') ++pos_;
        continue;
      }
      out += c;
      ++pos_;
    }
    return Token{bytes ? Token::Kind::kBytes : Token::Kind::kString, std::move(out),
                 static_cast<int>(start)};
  }

  // Decodes one escape at pos_ (a backslash); returns an error message or "".
  std::string escape(std::string& out, bool bytes, std::size_t /*start*/) {
    ++pos_;
    if (pos_ >= s_.size()) return "unterminated escape sequence";
    const char e = s_[pos_++];
    switch (e) {
      case 'a':
        out += '\a';
        return "";
      case 'b':
        out += '\b';
        return "";
      case 'f':
        out += '\f';
        return "";
      case 'n':
        out += '\n';
        return "";
      case 'r':
        out += '\r';
        return "";
      case 't':
        out += '\t';
        return "";
      case 'v':
        out += '\v';
        return "";
      case '\\':
        out += '\\';
        return "";
      case '\'':
        out += '\'';
        return "";
      case '"':
        out += '"';
        return "";
      case '`':
        out += '`';
        return "";
      case '?':
        out += '?';
        return "";
      default:
        break;
    }
    std::uint32_t cp = 0;
    if (e == 'x' || e == 'X') {
      if (!is_hex(peek()) || !is_hex(peek(1))) return "malformed \\x escape";
      cp = static_cast<std::uint32_t>(hex_value(peek()) * 16 + hex_value(peek(1)));
      pos_ += 2;
      if (bytes) {
        out += static_cast<char>(cp);
      } else {
        append_utf8(out, cp);
      }
      return "";
    }
    if (e >= '0' && e <= '3') {
      if (!(peek() >= '0' && peek() <= '7') || !(peek(1) >= '0' && peek(1) <= '7')) {
        return "malformed octal escape";
      }
      cp = static_cast<std::uint32_t>((e - '0') * 64 + (peek() - '0') * 8 + (peek(1) - '0'));
      pos_ += 2;
      if (bytes) {
        out += static_cast<char>(cp);
      } else {
        append_utf8(out, cp);
      }
      return "";
    }
    if (e == 'u' || e == 'U') {
      if (bytes) return "\\u escapes are not allowed in bytes literals";
      const int n = e == 'u' ? 4 : 8;
      for (int i = 0; i < n; ++i) {
        if (!is_hex(peek())) return "malformed unicode escape";
        cp = cp * 16 + static_cast<std::uint32_t>(hex_value(peek()));
        ++pos_;
      }
      if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return "invalid unicode code point";
      append_utf8(out, cp);
      return "";
    }
    return std::string("invalid escape sequence \\") + e;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<Token> lex(std::string_view source) {
  return Lexer(source).run();
}

}  // namespace nodetopo::fit::cel
