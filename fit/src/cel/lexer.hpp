// CEL tokens (internal): identifiers, literals with their escapes decoded, operators.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nodetopo::fit::cel {

struct Token {
  enum class Kind : std::uint8_t {
    kEnd,
    kIdent,
    kQuotedIdent,  ///< `a-b.c`: a field name in backquotes
    kInt,          ///< text holds the digits (decimal, or 0x... hex) without a sign
    kUint,
    kDouble,
    kString,  ///< text holds the decoded UTF-8 value
    kBytes,
    kPunct,  ///< text holds the operator or punctuation
    kError,  ///< text holds the message
  };
  Kind kind = Kind::kEnd;
  std::string text;
  int offset = 0;
};

/// Splits the source into tokens; stops at the first error token.
std::vector<Token> lex(std::string_view source);

}  // namespace nodetopo::fit::cel
