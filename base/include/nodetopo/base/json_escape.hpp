// The one JSON string escaper of nodetopo, used by the exporters' streaming JSON writer and by the
// JSON log formatter: a log line stays valid JSON even when a sysfs name carries a broken byte.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace nodetopo::json {

/// Appends `text` as a JSON string literal (quotes included), escaped exactly as
/// nlohmann::json::dump does with error_handler_t::replace: '"', '\\' and control characters
/// escaped (the short forms \b \t \n \f \r, else \u00XX in lowercase hex), DEL and valid UTF-8
/// passed through, every invalid UTF-8 sequence replaced by U+FFFD.
void append_string(std::string& out, std::string_view text);

/// Whether a byte goes into a JSON string as it is: printable ASCII (DEL included) but '"' and
/// '\\'. Control characters are escaped; bytes >= 0x80 are UTF-8, which append_string validates.
constexpr bool is_plain_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
}

/// The escape sequence of a byte below 0x80 that is not plain, written into `buf` when it has no
/// short form. `buf` must outlive the returned view.
std::string_view escape_sequence(unsigned char c, std::array<char, 6>& buf);

}  // namespace nodetopo::json
