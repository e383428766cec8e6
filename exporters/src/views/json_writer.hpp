// A streaming JSON writer whose output is byte-identical to nlohmann::json::dump(2) (two-space
// indentation, ", " never used, UTF-8 passed through, invalid UTF-8 replaced by U+FFFD).
//
// Why: building an nlohmann DOM for a large topology and serialising it cost half of a dump's
// user time on a 64-GPU node (an allocation per value, key strings copied on every vector growth
// of ordered_json). The renderers write the same document straight into one string instead.
//
// The document of a 64-GPU node is 2.4 MB in ~53,000 lines, over half of it indentation, so the
// cost per line is what counts:
// - tokens are written through a raw cursor into a small staging buffer (one capacity check per
//   line piece, no std::string::append per piece), appended to the document when full;
// - a line break with its indentation is a slice of one static string, copied in 16-byte blocks;
// - strings are copied eight bytes at a time, checking the same words for bytes that need
//   escaping; only strings that have such bytes take the slow path;
// - keys written as string literals (JsonKey) are checked when compiling, not at each use, and
//   strings written many times (JsonLiteral) are escaped once.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nodetopo/base/json_escape.hpp>

namespace nodetopo::exporters::detail {

/// Appends `text` as a JSON string literal: base's one escaper (nodetopo/base/json_escape.hpp),
/// escaped exactly as nlohmann::json::dump does with error_handler_t::replace.
inline void append_json_string(std::string& out, std::string_view text) {
  json::append_string(out, text);
}

/// Whether a byte goes into a JSON string as it is (json::is_plain_char).
constexpr bool is_plain_json_char(char c) {
  return json::is_plain_char(c);
}

/// A key given as a string literal: `j.key("vendor_id")`. Checked when compiling (a literal that
/// would need escaping, or longer than kMaxSize, does not compile), so writing it is a plain copy.
class JsonKey {
 public:
  static constexpr std::size_t kMaxSize = 128;

  // Implicit, so that call sites read `j.field("vendor_id", ...)`.
  template <std::size_t N>
  consteval JsonKey(const char (&literal)[N]) : text_(literal, N - 1) {
    if (N - 1 > kMaxSize) throw "JsonKey: too long for a literal key";
    for (char c : text_) {
      if (!is_plain_json_char(c)) throw "JsonKey: this key needs escaping, pass a string_view";
    }
  }
  [[nodiscard]] constexpr std::string_view text() const { return text_; }

 private:
  std::string_view text_;
};

/// A string escaped and quoted once, to be written many times: the device names that key every
/// row of a relation matrix (128 names, 16,384 cells on a 64-GPU node) and its few labels.
class JsonLiteral {
 public:
  explicit JsonLiteral(std::string_view text) { append_json_string(literal_, text); }
  /// The string with its quotes and escapes.
  [[nodiscard]] std::string_view literal() const { return literal_; }

 private:
  std::string literal_;
};

/// Any string-like key or value that is not a literal array (std::string, std::string_view,
/// const char*): those are checked for escapes when written. Literal arrays go to JsonKey.
template <class S>
concept RuntimeString = std::convertible_to<const S&, std::string_view> && !std::is_array_v<S>;

class JsonWriter {
 public:
  /// What a streaming writer hands its document to, in order (exporters::TextSink).
  using Sink = std::function<void(std::string_view)>;

  /// Builds the document in one string, handed out by take() / take_with_newline().
  JsonWriter() = default;
  /// Streams: the document goes to `sink` in pieces of about kChunkSize bytes, the last one by
  /// finish(); `sink` outlives the writer. take() is not for a streaming writer.
  explicit JsonWriter(const Sink& sink) : sink_(&sink) { doc_.reserve(kChunkSize + stage_.size()); }

  /// Bytes a streaming writer gathers before handing them to its sink: few enough to count for
  /// little in the peak RSS (four pages), many enough that a sink writing each piece out makes
  /// one system call per 16 KiB, not one per staged token (150 for a 64-GPU node's 2.4 MB).
  static constexpr std::size_t kChunkSize = 16 * 1024;

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();

  /// The key of the next value, inside an object.
  void key(JsonKey name);
  void key(const JsonLiteral& name);
  template <RuntimeString S>
  void key(const S& name) {
    write_key(std::string_view(name));
  }

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(const std::string& text) { value(std::string_view(text)); }
  void value(const JsonLiteral& text);
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

  /// key() then value(); string values and literal cells are written in one piece.
  template <class T>
  void field(JsonKey name, const T& v) {
    if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      string_member(name.text(), true, std::string_view(v));
    } else {
      key(name);
      value(v);
    }
  }
  template <class T>
  void field(const JsonLiteral& name, const T& v) {
    if constexpr (std::is_same_v<T, JsonLiteral>) {
      literal_member(name.literal(), v.literal());
    } else {
      key(name);
      value(v);
    }
  }
  template <RuntimeString S, class T>
  void field(const S& name, const T& v) {
    write_key(std::string_view(name));
    value(v);
  }

  /// Pre-allocates room for `bytes` of output.
  void reserve(std::size_t bytes) { doc_.reserve(bytes); }

  /// The document so far; the writer is left empty.
  std::string take();
  /// The document so far followed by a newline, as the renderers print it (without copying the
  /// whole document once more, as `take() + "\n"` would); the writer is left empty.
  std::string take_with_newline();
  /// For a streaming writer: the final newline, then what is left goes to the sink.
  void finish();

 private:
  /// Tokens up to this size go through the staging buffer in one piece; longer ones are
  /// appended to the document directly.
  static constexpr std::size_t kMaxStagedToken = 512;

  // Object members. A key is either a JsonKey's text, which needs quotes (`quote_key`), or a
  // JsonLiteral's, which has them; neither needs checking.

  /// Marks the current object as having a member; returns whether one came before (a comma).
  bool next_member();
  /// Writes the line break, the key and ": ", with room for `value_size` more bytes after
  /// them, and returns where the value goes (the caller advances past what it writes); nullptr
  /// when that does not fit one staged token, or the break is deeper than the table.
  char* begin_member(bool comma, std::string_view key, bool quote_key, std::size_t value_size);
  /// The break, the key and ": ", for a value that follows.
  void member_key(bool comma, std::string_view key, bool quote_key);
  /// A whole member whose value is a string (checked for escapes) or a JsonLiteral.
  void string_member(std::string_view key, bool quote_key, std::string_view text);
  void literal_member(std::string_view key, std::string_view literal);
  /// key() with a string known only when running: checked for escapes.
  void write_key(std::string_view name);
  /// The line break before the next member or element, or before a closing bracket.
  void write_break(bool comma, std::size_t depth);
  /// Before a value: nothing after a key, else the break before an array element.
  void before_value() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    before_element();
  }
  void before_element();
  void write_signed(std::int64_t number);
  void write_unsigned(std::uint64_t number);
  /// The string as a JSON literal: quotes, escapes.
  void write_string(std::string_view text);
  void write_escaped(std::string_view text);
  void write_raw(std::string_view text);

  /// Room for `n` (<= kMaxStagedToken) more bytes; returns where they go. The caller writes at
  /// most `n` bytes there and then calls advance_to() with the end of what it wrote.
  char* cursor(std::size_t n) {
    if (stage_.size() - staged_ < n) flush();
    return stage_.data() + staged_;
  }
  void advance_to(const char* end) { staged_ = static_cast<std::size_t>(end - stage_.data()); }
  void put(char c) {
    *cursor(1) = c;
    ++staged_;
  }
  /// Appends the staging buffer to the document (and, streaming, hands a full chunk on).
  void flush();
  /// Streaming: hands the document so far to the sink once it holds a chunk.
  void spill() {
    if (sink_ != nullptr && doc_.size() >= kChunkSize) hand_on();
  }
  void hand_on();

  struct Frame {
    bool object = false;
    bool empty = true;
  };
  std::vector<Frame> stack_;
  /// The document, or streaming the part of it not yet handed to `sink_`.
  std::string doc_;
  const Sink* sink_ = nullptr;
  // Staged tokens, the end of the document: stage_[0, staged_). Staged because std::string
  // (before C++23's resize_and_overwrite) cannot hand out uninitialised room to write into: the
  // document would have to be zero-filled first. 2 KiB stays in L1 and amortises each append.
  std::array<char, 2048> stage_;
  std::size_t staged_ = 0;
  bool after_key_ = false;
};

}  // namespace nodetopo::exporters::detail
