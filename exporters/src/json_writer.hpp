// A streaming JSON writer whose output is byte-identical to nlohmann::json::dump(2) (two-space
// indentation, ", " never used, UTF-8 passed through, invalid UTF-8 replaced by U+FFFD).
//
// Why: building an nlohmann DOM for a large topology and serialising it cost half of a dump's
// user time on a 64-GPU node (an allocation per value, key strings copied on every vector growth
// of ordered_json). The renderers write the same document straight into one string instead.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nodetopo::exporters::detail {

class JsonWriter {
 public:
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// The key of the next value, inside an object.
  void key(std::string_view name);

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(const std::string& text) { value(std::string_view(text)); }
  void value(bool flag);
  /// Any integer type (not bool).
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) void value(T number) {
    if constexpr (std::is_signed_v<T>) {
      write_signed(static_cast<std::int64_t>(number));
    } else {
      write_unsigned(static_cast<std::uint64_t>(number));
    }
  }

  /// key() then value().
  template <class T>
  void field(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

  /// Pre-allocates room for `bytes` of output.
  void reserve(std::size_t bytes) { out_.reserve(bytes); }

  /// The document so far; the writer is left empty.
  std::string take() { return std::move(out_); }

 private:
  void before_value();
  void write_signed(std::int64_t number);
  void write_unsigned(std::uint64_t number);
  void newline_indent(std::size_t depth);

  struct Frame {
    bool object = false;
    bool empty = true;
  };
  std::vector<Frame> stack_;
  std::string out_;
  bool after_key_ = false;
};

/// Appends `text` as a JSON string literal, escaped exactly as nlohmann::json::dump does with
/// error_handler_t::replace.
void append_json_string(std::string& out, std::string_view text);

}  // namespace nodetopo::exporters::detail
