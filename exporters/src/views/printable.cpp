#include "views/printable.hpp"

#include <cstddef>

namespace nodetopo::exporters::detail {

namespace {

constexpr const char* kReplacement = "\xef\xbf\xbd";  // U+FFFD

// Length of the valid UTF-8 sequence at text[i], or 0 when it is not one (overlong forms,
// surrogates and code points past U+10FFFF are invalid too).
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b = at(i);
  std::size_t n = 0;
  unsigned lo = 0x80;
  unsigned hi = 0xbf;
  if (b >= 0xc2 && b <= 0xdf) {
    n = 2;
  } else if (b >= 0xe0 && b <= 0xef) {
    n = 3;
    if (b == 0xe0) lo = 0xa0;
    if (b == 0xed) hi = 0x9f;
  } else if (b >= 0xf0 && b <= 0xf4) {
    n = 4;
    if (b == 0xf0) lo = 0x90;
    if (b == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  }
  return n;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x80) {
      const bool control = (b < 0x20 && b != '\n' && b != '\t') || b == 0x7f;
      out += control ? '?' : static_cast<char>(b);
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    // C1 controls are U+0080..U+009F: 0xc2 followed by 0x80..0x9f.
    if (n == 0 || (n == 2 && b == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0)) {
      out += kReplacement;
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(text, i, n);
    i += n;
  }
  return out;
}

}  // namespace nodetopo::exporters::detail
