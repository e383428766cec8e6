#include <algorithm>

#include <nlohmann/json.hpp>

#include <nodetopo/base/json_escape.hpp>

namespace nodetopo::json {

std::string_view escape_sequence(unsigned char c, std::array<char, 6>& buf) {
  switch (c) {
    case '\b':
      return "\\b";
    case '\t':
      return "\\t";
    case '\n':
      return "\\n";
    case '\f':
      return "\\f";
    case '\r':
      return "\\r";
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    default:
      break;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  buf = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
  return {buf.data(), buf.size()};
}

void append_string(std::string& out, std::string_view text) {
  if (std::all_of(text.begin(), text.end(), is_plain_char)) {
    out += '"';
    out.append(text);
    out += '"';
    return;
  }
  if (std::any_of(text.begin(), text.end(), [](char c) { return (c & 0x80) != 0; })) {
    // UTF-8 validation and U+FFFD replacement: nlohmann's own code, so that every corner of it
    // (how much of a broken sequence one replacement covers) stays identical to the documents
    // the Kubernetes objects are written with.
    out += nlohmann::json(std::string(text))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  // ASCII with escapes: runs of plain bytes as they are, an escape sequence between runs.
  out += '"';
  std::array<char, 6> buf{};
  while (!text.empty()) {
    const auto run = static_cast<std::size_t>(
        std::find_if_not(text.begin(), text.end(), is_plain_char) - text.begin());
    out.append(text.substr(0, run));
    if (run == text.size()) break;
    out.append(escape_sequence(static_cast<unsigned char>(text[run]), buf));
    text.remove_prefix(run + 1);
  }
  out += '"';
}

}  // namespace nodetopo::json
