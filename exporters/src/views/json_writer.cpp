#include "views/json_writer.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cstring>

#include <nlohmann/json.hpp>

namespace nodetopo::exporters::detail {

namespace {

// ---------------------------------------------------------------------------------------------
// Strings

// Whether one of the bytes of `word` is not plain (is_plain_json_char): below 0x20, '"', '\\' or
// >= 0x80, tested on all bytes at once. With ones = 0x01..01, the high bit of a byte of
// x - n * ones is set where that byte is below n, or >= 0x80 + n, or a lower byte borrowed -
// which only happens below a byte that is below n itself. So the high bits of
// (w - 0x20 * ones) | (w ^ '"' * ones) - ones | (w ^ '\\' * ones) - ones | w
// are all clear exactly when no byte is below 0x20, equal to '"' or '\\', or >= 0x80: every
// spurious bit comes from a byte >= 0x80 (which `| w` flags anyway: the XORs leave bit 7 alone)
// or sits above a byte that is flagged.
template <class Word>
constexpr bool has_unplain_byte(Word word) {
  constexpr Word kOnes = ~Word{0} / 0xff;
  constexpr Word kHighBits = kOnes * 0x80;
  const Word control = word - kOnes * 0x20;
  const Word quote = (word ^ (kOnes * '"')) - kOnes;
  const Word backslash = (word ^ (kOnes * '\\')) - kOnes;
  return ((control | quote | backslash | word) & kHighBits) != 0;
}

template <class Word>
Word load(const char* p) {
  Word word = 0;
  std::memcpy(&word, p, sizeof word);  // one unaligned load
  return word;
}

template <class Word>
void store(char* p, Word word) {
  std::memcpy(p, &word, sizeof word);
}

// Copies `text` to `out` when every byte of it is plain, and returns the end of the copy;
// nullptr at the first byte that is not (`out` then holds some of the bytes, to be written
// over). Checks and copies a word at a time, with inline moves rather than a memcpy call that
// costs more than the copy for the short strings of a document. The last word overlaps the one
// before it instead of a loop over the remaining bytes; strings of 4 to 7 bytes are two
// overlapping 4-byte words.
char* copy_plain(char* out, std::string_view text) {
  const char* in = text.data();
  const std::size_t n = text.size();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      const auto word = load<std::uint64_t>(in + i);
      if (has_unplain_byte(word)) return nullptr;
      store(out + i, word);
    }
    const auto last = load<std::uint64_t>(in + n - 8);
    if (has_unplain_byte(last)) return nullptr;
    store(out + n - 8, last);
  } else if (n >= 4) {
    const auto head = load<std::uint32_t>(in);
    const auto tail = load<std::uint32_t>(in + n - 4);
    if (has_unplain_byte(head) || has_unplain_byte(tail)) return nullptr;
    store(out, head);
    store(out + n - 4, tail);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      if (!is_plain_json_char(in[i])) return nullptr;
      out[i] = in[i];
    }
  }
  return out + n;
}

// Copies `text` (a key or a literal known to be fine as it is) to `out` and returns the end:
// up to 16 bytes as two overlapping words, the same way as copy_plain().
char* copy_short(char* out, std::string_view text) {
  const char* in = text.data();
  const std::size_t n = text.size();
  if (n > 16) {
    std::memcpy(out, in, n);
  } else if (n >= 8) {
    const auto head = load<std::uint64_t>(in);
    const auto tail = load<std::uint64_t>(in + n - 8);
    store(out, head);
    store(out + n - 8, tail);
  } else if (n >= 4) {
    const auto head = load<std::uint32_t>(in);
    const auto tail = load<std::uint32_t>(in + n - 4);
    store(out, head);
    store(out + n - 4, tail);
  } else {
    for (std::size_t i = 0; i < n; ++i)
      out[i] = in[i];
  }
  return out + n;
}

// ---------------------------------------------------------------------------------------------
// Layout

// ",\n" and then spaces: the break before a member at depth d is kBreaks[0, 2 + 2d), or
// kBreaks[1, 2 + 2d) without the comma. Padded by one block for put_break()'s last read.
constexpr std::size_t kTableDepth = 60;
constexpr std::size_t kBlock = 16;
constexpr auto kBreaks = [] {
  std::array<char, 2 + 2 * kTableDepth + kBlock> table{};
  table[0] = ',';
  table[1] = '\n';
  for (std::size_t i = 2; i < table.size(); ++i)
    table[i] = ' ';
  return table;
}();

// Room put_break() needs: whole blocks, at most 128 bytes.
constexpr std::size_t kBreakRoom = (2 + 2 * kTableDepth + kBlock - 1) / kBlock * kBlock;

// Writes the break for `depth` (<= kTableDepth) at `out`, which has kBreakRoom bytes of room,
// and returns its end. Whole 16-byte blocks, each one vector load and store: a memcpy call of
// a variable size costs several times more, and there is one break per line. The last block
// may run past the break into room that the next token writes over.
char* put_break(char* out, bool comma, std::size_t depth) {
  const std::size_t size = 2 * depth + (comma ? 2 : 1);
  const char* from = kBreaks.data() + (comma ? 0 : 1);
  for (std::size_t b = 0; b < size; b += kBlock)
    std::memcpy(out + b, from + b, kBlock);
  return out + size;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// JsonWriter

void JsonWriter::flush() {
  doc_.append(stage_.data(), staged_);
  staged_ = 0;
  spill();
}

void JsonWriter::hand_on() {
  (*sink_)(doc_);
  doc_.clear();  // keeps the capacity: the next chunk is written over the same pages
}

void JsonWriter::finish() {
  assert(sink_ != nullptr);
  put('\n');
  flush();
  if (!doc_.empty()) hand_on();
  stack_.clear();
  after_key_ = false;
}

std::string JsonWriter::take() {
  assert(sink_ == nullptr);
  flush();
  std::string out = std::move(doc_);
  doc_.clear();
  stack_.clear();
  after_key_ = false;
  return out;
}

std::string JsonWriter::take_with_newline() {
  put('\n');
  return take();
}

void JsonWriter::write_raw(std::string_view text) {
  if (text.size() <= kMaxStagedToken) {
    advance_to(copy_short(cursor(text.size()), text));
  } else {
    flush();
    doc_.append(text);
    spill();
  }
}

void JsonWriter::write_break(bool comma, std::size_t depth) {
  if (depth <= kTableDepth) {
    advance_to(put_break(cursor(kBreakRoom), comma, depth));
    return;
  }
  // Deeper than any document of ours.
  write_raw(comma ? ",\n" : "\n");
  for (std::size_t spaces = 2 * depth; spaces > 0;) {
    const std::size_t piece = std::min(spaces, kMaxStagedToken);
    std::memset(cursor(piece), ' ', piece);
    staged_ += piece;
    spaces -= piece;
  }
}

void JsonWriter::write_escaped(std::string_view text) {
  std::string literal;
  append_json_string(literal, text);
  write_raw(literal);
}

void JsonWriter::write_string(std::string_view text) {
  if (text.size() + 2 <= kMaxStagedToken) {
    char* p = cursor(text.size() + 2);
    if (char* end = copy_plain(p + 1, text)) {
      p[0] = '"';
      end[0] = '"';
      advance_to(end + 1);
      return;
    }
  }
  write_escaped(text);  // long, or with bytes to escape: rare
}

void JsonWriter::before_element() {
  if (stack_.empty()) return;
  Frame& frame = stack_.back();
  assert(!frame.object);  // object members need key() first
  write_break(!frame.empty, stack_.size());
  frame.empty = false;
}

// Every line of an object starts with a key: the line break, the key, ": " and, when it is a
// string, the value take one capacity check and one call together.

// Both are used on every line, and only in this file: inline.
inline bool JsonWriter::next_member() {
  assert(!stack_.empty() && stack_.back().object && !after_key_);
  Frame& frame = stack_.back();
  const bool comma = !frame.empty;
  frame.empty = false;
  return comma;
}

inline char* JsonWriter::begin_member(bool comma, std::string_view key, bool quote_key,
                                      std::size_t value_size) {
  const std::size_t size = key.size() + 4 + value_size;  // quotes, ": "
  if (stack_.size() > kTableDepth || size > kMaxStagedToken - kBreakRoom) return nullptr;
  char* p = put_break(cursor(kBreakRoom + size), comma, stack_.size());
  if (quote_key) *p++ = '"';
  p = copy_short(p, key);
  if (quote_key) *p++ = '"';
  *p++ = ':';
  *p++ = ' ';
  return p;
}

void JsonWriter::member_key(bool comma, std::string_view key, bool quote_key) {
  after_key_ = true;
  if (char* p = begin_member(comma, key, quote_key, 0)) {
    advance_to(p);
    return;
  }
  write_break(comma, stack_.size());
  if (quote_key) put('"');
  write_raw(key);
  write_raw(quote_key ? "\": " : ": ");
}

void JsonWriter::key(JsonKey name) {
  member_key(next_member(), name.text(), true);
}

void JsonWriter::key(const JsonLiteral& name) {
  member_key(next_member(), name.literal(), false);
}

void JsonWriter::string_member(std::string_view key, bool quote_key, std::string_view text) {
  const bool comma = next_member();
  if (char* p = begin_member(comma, key, quote_key, text.size() + 2)) {
    if (char* end = copy_plain(p + 1, text)) {
      p[0] = '"';
      end[0] = '"';
      advance_to(end + 1);
    } else {
      advance_to(p);  // keep the key; the value needs escaping
      write_escaped(text);
    }
    return;
  }
  member_key(comma, key, quote_key);  // too long or too deep for one piece: rare
  value(text);
}

void JsonWriter::literal_member(std::string_view key, std::string_view literal) {
  const bool comma = next_member();
  if (char* p = begin_member(comma, key, false, literal.size())) {
    advance_to(copy_short(p, literal));
    return;
  }
  member_key(comma, key, false);
  before_value();
  write_raw(literal);
}

void JsonWriter::write_key(std::string_view name) {
  const bool comma = next_member();
  after_key_ = true;
  if (stack_.size() <= kTableDepth && name.size() + 4 <= kMaxStagedToken - kBreakRoom) {
    char* p = put_break(cursor(kBreakRoom + name.size() + 4), comma, stack_.size());
    if (char* end = copy_plain(p + 1, name)) {
      p[0] = '"';
      std::memcpy(end, "\": ", 3);
      advance_to(end + 3);
      return;
    }
    advance_to(p);  // keep the break; the key needs escaping
  } else {
    write_break(comma, stack_.size());
  }
  write_escaped(name);
  write_raw(": ");
}

void JsonWriter::begin_object() {
  before_value();
  put('{');
  stack_.push_back({true, true});
}

void JsonWriter::end_object() {
  assert(!stack_.empty() && stack_.back().object);
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) write_break(false, stack_.size());
  put('}');
}

void JsonWriter::begin_array() {
  before_value();
  put('[');
  stack_.push_back({false, true});
}

void JsonWriter::end_array() {
  assert(!stack_.empty() && !stack_.back().object);
  const bool empty = stack_.back().empty;
  stack_.pop_back();
  if (!empty) write_break(false, stack_.size());
  put(']');
}

void JsonWriter::value(std::string_view text) {
  before_value();
  write_string(text);
}

void JsonWriter::value(const JsonLiteral& text) {
  before_value();
  write_raw(text.literal());
}

void JsonWriter::value(bool flag) {
  before_value();
  write_raw(flag ? "true" : "false");
}

void JsonWriter::write_signed(std::int64_t number) {
  before_value();
  constexpr std::size_t kMaxDigits = 20;  // "-9223372036854775808"
  char* p = cursor(kMaxDigits);
  advance_to(std::to_chars(p, p + kMaxDigits, number).ptr);
}

void JsonWriter::write_unsigned(std::uint64_t number) {
  before_value();
  constexpr std::size_t kMaxDigits = 20;  // "18446744073709551615"
  char* p = cursor(kMaxDigits);
  advance_to(std::to_chars(p, p + kMaxDigits, number).ptr);
}

}  // namespace nodetopo::exporters::detail
