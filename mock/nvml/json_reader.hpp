// A strict JSON (RFC 8259) pull reader for the mock NVML library's fixture: the caller walks the
// document value by value, nothing is built but the strings it asks for.
//
// Why not a JSON library: the mock must load like the vendor's C library, so it links no C++
// runtime (docs/mock-nvml.md, "Linking"), and every `topo dump` of a mock host parses the fixture:
// json-c (the C library Debian has) spends 14.6M instructions on the 64-GPU synthetic fixture in
// its tokenizer, DOM and mallocs; this reader checks that text in 1.8M (simdjson: 1.0M).
//
// Strict: UTF-8 only (no overlong forms, surrogates or code points above U+10FFFF), escapes as
// RFC 8259 has them with \u surrogates in pairs, no control characters in strings, no comments,
// no trailing commas, numbers in JSON's grammar (of any length), nesting at most kMaxDepth deep.
// The first syntax error stops the reader: every call then answers false, and error() says what
// and where ("line 3, column 7: ...").
#pragma once

#include <cstddef>
#include <cstdint>

#include "memory.hpp"

namespace nodetopo::mock_nvml {

enum class JsonType : unsigned char { kObject, kArray, kString, kNumber, kBool, kNull };

/// "an object", "a string", ...: for messages.
const char* json_type_name(JsonType type);

/// A number as the text has it.
struct JsonNumber {
  Str text;                     // as written, for messages
  bool integer = false;         // no fraction, no exponent
  bool negative = false;        // a leading '-'
  bool fits = false;            // integer and its magnitude fits 64 bits
  std::uint64_t magnitude = 0;  // when `fits`
};

class JsonReader {
 public:
  /// Arrays and objects nested deeper than this are refused (the fixture's own shape is 4 deep).
  static constexpr int kMaxDepth = 1024;

  /// Reads `text` (not copied; it must outlive the reader). A UTF-8 byte order mark at the start
  /// is skipped.
  JsonReader(const char* text, std::size_t size);
  ~JsonReader();
  JsonReader(const JsonReader&) = delete;
  JsonReader& operator=(const JsonReader&) = delete;

  /// The offset of the next byte to read: a value start after peek(), for seek().
  std::size_t offset() const { return static_cast<std::size_t>(p_ - begin_); }
  /// Goes back to an offset() taken at the start of a value that was read before: the value is
  /// read again, with the nesting depth of the top level.
  void seek(std::size_t offset) { p_ = begin_ + offset; }

  /// The type of the next value (white space skipped), or false on a syntax error or the end.
  bool peek(JsonType& type);

  /// An object's '{'; then next_member() until it answers false (at the '}', or an error).
  bool begin_object();
  /// The next member's key (decoded; valid until the next string is read), its ':' consumed.
  bool next_member(Str& key);
  /// An array's '['; then next_element() until it answers false.
  bool begin_array();
  bool next_element();

  /// The next value as a string (decoded; valid until the next string is read) / number /
  /// boolean / null; false on a syntax error, or when the value is of another type (then
  /// nothing is consumed and no error set: check with peek() first).
  bool string(Str& out);
  bool number(JsonNumber& out);
  bool boolean(bool& out);
  bool null();
  /// Reads over the next value, of any type, checking its syntax.
  bool skip();
  /// True when only white space is left.
  bool at_end();

  bool failed() const { return error_.size != 0 || error_.failed; }
  /// "line L, column C: what" ("" before any error).
  const char* error() const { return error_.failed ? "out of memory" : error_.c_str(); }

 private:
  bool fail(const char* what);
  bool fail_at(const char* at, const char* what);
  void skip_space();
  bool read_string(Str& out);
  bool decode_escapes(const char* start, Str& out);
  bool close();

  const char* begin_;
  const char* p_;
  const char* end_;
  int depth_ = 0;
  // Set by begin_object/begin_array, cleared by the next next_member/next_element: the first
  // member or element takes no comma. One flag is enough, as containers are read nested.
  bool opened_ = false;
  Text scratch_;  // decoded strings with escapes
  Text error_;
};

}  // namespace nodetopo::mock_nvml
