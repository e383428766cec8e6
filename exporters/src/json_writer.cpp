#include "json_writer.hpp"

#include <array>
#include <cassert>
#include <charconv>

#include <nlohmann/json.hpp>

namespace nodetopo::exporters::detail {

namespace {

// Printable ASCII without '"' and '\\' is written as is; anything else (control characters,
// bytes >= 0x80 that need UTF-8 validation) goes through nlohmann's own escaping so that the
// output stays identical to its dump().
bool plain_ascii(std::string_view text) {
  for (char c : text) {
    // One unsigned compare covers < 0x20 and >= 0x80 (after the shift both fall outside 0x60).
    const auto u = static_cast<unsigned char>(c);
    if (static_cast<unsigned char>(u - 0x20) >= 0x60 || c == '"' || c == '\\') return false;
  }
  return true;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  if (plain_ascii(text)) {
    out += '"';
    out.append(text);
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(text))
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void JsonWriter::newline_indent(std::size_t depth) {
  out_ += '\n';
  out_.append(depth * 2, ' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty()) return;
  Frame& frame = stack_.back();
  assert(!frame.object);  // object members need key() first
  if (!frame.empty) out_ += ',';
  frame.empty = false;
  newline_indent(stack_.size());
}

void JsonWriter::key(std::string_view name) {
  assert(!stack_.empty() && stack_.back().object && !after_key_);
  Frame& frame = stack_.back();
  if (!frame.empty) out_ += ',';
  frame.empty = false;
  newline_indent(stack_.size());
  append_json_string(out_, name);
  out_ += ": ";
  after_key_ = true;
}

void JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  stack_.push_back({true, true});
}

void JsonWriter::end_object() {
  assert(!stack_.empty() && stack_.back().object);
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent(stack_.size());
  out_ += '}';
}

void JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  stack_.push_back({false, true});
}

void JsonWriter::end_array() {
  assert(!stack_.empty() && !stack_.back().object);
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) newline_indent(stack_.size());
  out_ += ']';
}

void JsonWriter::value(std::string_view text) {
  before_value();
  append_json_string(out_, text);
}

void JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
}

void JsonWriter::write_signed(std::int64_t number) {
  before_value();
  std::array<char, 24> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), number);
  out_.append(buf.data(), res.ptr);
}

void JsonWriter::write_unsigned(std::uint64_t number) {
  before_value();
  std::array<char, 24> buf{};
  const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), number);
  out_.append(buf.data(), res.ptr);
}

}  // namespace nodetopo::exporters::detail
