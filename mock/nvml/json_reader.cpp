#include "json_reader.hpp"

namespace nodetopo::mock_nvml {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or 0 (RFC 3629 table:
// no overlong forms, no surrogates, nothing above U+10FFFF).
std::size_t utf8_length(const char* p, const char* end) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(p[i]); };
  const auto cont = [&](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return p + i < end && b(i) >= lo && b(i) <= hi;
  };
  const unsigned lead = b(0);
  if (lead >= 0xc2 && lead <= 0xdf) return cont(1) ? 1 + 1 : 0;
  if (lead == 0xe0) return cont(1, 0xa0) && cont(2) ? 3 : 0;
  if ((lead >= 0xe1 && lead <= 0xec) || lead == 0xee || lead == 0xef) {
    return cont(1) && cont(2) ? 3 : 0;
  }
  if (lead == 0xed) return cont(1, 0x80, 0x9f) && cont(2) ? 3 : 0;
  if (lead == 0xf0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (lead >= 0xf1 && lead <= 0xf3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (lead == 0xf4) return cont(1, 0x80, 0x8f) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// The first byte from p on that is not printable ASCII other than '"' and '\\' (or end): the
// bytes a string's fast path copies as they are. Eight at a time: a byte is flagged when below
// 0x20, equal to '"' or '\\', or 0x80 and above; the lowest flag is exact (the borrow of the
// subtractions only runs upwards), which is the one taken.
const char* plain_ascii(const char* p, const char* end) {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
  while (end - p >= 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    const std::uint64_t quote = w ^ (kOnes * '"');
    const std::uint64_t backslash = w ^ (kOnes * '\\');
    const std::uint64_t special = ((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                                  ((backslash - kOnes) & ~backslash) | w;
    const std::uint64_t mask = special & kHigh;
    if (mask != 0) return p + (__builtin_ctzll(mask) >> 3);
    p += 8;
  }
  while (p < end) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
    ++p;
  }
  return p;
}

void append_utf8(Text& out, std::uint32_t cp) {
  char bytes[4];
  std::size_t n = 0;
  if (cp < 0x80) {
    bytes[n++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    bytes[n++] = static_cast<char>(0xc0 | (cp >> 6));
    bytes[n++] = static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    bytes[n++] = static_cast<char>(0xe0 | (cp >> 12));
    bytes[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    bytes[n++] = static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    bytes[n++] = static_cast<char>(0xf0 | (cp >> 18));
    bytes[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    bytes[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    bytes[n++] = static_cast<char>(0x80 | (cp & 0x3f));
  }
  out.append(Str{bytes, n});
}

}  // namespace

const char* json_type_name(JsonType type) {
  switch (type) {
    case JsonType::kObject:
      return "an object";
    case JsonType::kArray:
      return "an array";
    case JsonType::kString:
      return "a string";
    case JsonType::kNumber:
      return "a number";
    case JsonType::kBool:
      return "a boolean";
    case JsonType::kNull:
      return "null";
  }
  return "a value";
}

JsonReader::JsonReader(const char* text, std::size_t size)
    : begin_(text), p_(text), end_(text + size) {
  if (size >= 3 && std::memcmp(text, "\xEF\xBB\xBF", 3) == 0) p_ += 3;
}

JsonReader::~JsonReader() {
  scratch_.free();
  error_.free();
}

bool JsonReader::fail_at(const char* at, const char* what) {
  if (failed()) return false;
  std::uint64_t line = 1;
  const char* line_start = begin_;
  for (const char* q = begin_; q < at; ++q) {
    if (*q == '\n') {
      ++line;
      line_start = q + 1;
    }
  }
  error_.append("line ");
  error_.append_unsigned(line);
  error_.append(", column ");
  error_.append_unsigned(static_cast<std::uint64_t>(at - line_start) + 1);
  error_.append(": ");
  error_.append(what);
  if (error_.size == 0) error_.failed = true;
  return false;
}

bool JsonReader::fail(const char* what) {
  return fail_at(p_, what);
}

void JsonReader::skip_space() {
  while (p_ < end_ && is_space(*p_))
    ++p_;
}

bool JsonReader::peek(JsonType& type) {
  if (failed()) return false;
  skip_space();
  if (p_ == end_) return fail("the text ends where a value was expected");
  switch (*p_) {
    case '{':
      type = JsonType::kObject;
      return true;
    case '[':
      type = JsonType::kArray;
      return true;
    case '"':
      type = JsonType::kString;
      return true;
    case 't':
    case 'f':
      type = JsonType::kBool;
      return true;
    case 'n':
      type = JsonType::kNull;
      return true;
    default:
      if (*p_ == '-' || is_digit(*p_)) {
        type = JsonType::kNumber;
        return true;
      }
      return fail("expected a value (an object, array, string, number, true, false or null)");
  }
}

bool JsonReader::begin_object() {
  if (failed() || p_ == end_ || *p_ != '{') return false;
  if (depth_ == kMaxDepth) return fail("arrays and objects nested deeper than 1024");
  ++p_;
  ++depth_;
  opened_ = true;
  return true;
}

bool JsonReader::begin_array() {
  if (failed() || p_ == end_ || *p_ != '[') return false;
  if (depth_ == kMaxDepth) return fail("arrays and objects nested deeper than 1024");
  ++p_;
  ++depth_;
  opened_ = true;
  return true;
}

// Consumes the closing bracket; false: the container's iteration ends.
bool JsonReader::close() {
  ++p_;
  --depth_;
  return false;
}

bool JsonReader::next_member(Str& key) {
  if (failed()) return false;
  skip_space();
  if (p_ == end_) return fail("the text ends inside an object");
  if (opened_) {
    opened_ = false;
    if (*p_ == '}') return close();
    if (*p_ != '"') return fail("expected a member name in double quotes, or '}'");
  } else {
    if (*p_ == '}') return close();
    if (*p_ != ',') return fail("expected ',' or '}' after an object member");
    ++p_;
    skip_space();
    if (p_ == end_ || *p_ != '"') return fail("expected a member name in double quotes");
  }
  if (!read_string(key)) return false;
  skip_space();
  if (p_ == end_ || *p_ != ':') return fail("expected ':' after a member name");
  ++p_;
  return true;
}

bool JsonReader::next_element() {
  if (failed()) return false;
  skip_space();
  if (p_ == end_) return fail("the text ends inside an array");
  if (opened_) {
    opened_ = false;
    if (*p_ == ']') return close();
    return true;
  }
  if (*p_ == ']') return close();
  if (*p_ != ',') return fail("expected ',' or ']' after an array element");
  ++p_;
  return true;
}

bool JsonReader::string(Str& out) {
  if (failed()) return false;
  skip_space();
  if (p_ == end_ || *p_ != '"') return false;
  return read_string(out);
}

bool JsonReader::read_string(Str& out) {
  const char* open = p_++;
  const char* start = p_;
  for (;;) {
    p_ = plain_ascii(p_, end_);
    if (p_ == end_) return fail_at(open, "a string that is never closed");
    const auto c = static_cast<unsigned char>(*p_);
    if (c == '"') {
      out = {start, static_cast<std::size_t>(p_ - start)};
      ++p_;
      return true;
    }
    if (c == '\\') return decode_escapes(start, out);
    if (c < 0x20) return fail("a control character in a string (it must be escaped)");
    const std::size_t n = utf8_length(p_, end_);
    if (n == 0) return fail("invalid UTF-8 in a string");
    p_ += n;
  }
}

// From the first backslash on, the string is decoded into scratch_.
bool JsonReader::decode_escapes(const char* start, Str& out) {
  scratch_.clear();
  scratch_.append(Str{start, static_cast<std::size_t>(p_ - start)});
  for (;;) {
    const char* run = p_;
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c == '"' || c == '\\') break;
      if (c >= 0x80) {
        const std::size_t n = utf8_length(p_, end_);
        if (n == 0) return fail("invalid UTF-8 in a string");
        p_ += n;
      } else {
        ++p_;
      }
    }
    scratch_.append(Str{run, static_cast<std::size_t>(p_ - run)});
    if (p_ == end_) return fail("a string that is never closed");
    if (*p_ == '"') {
      ++p_;
      if (scratch_.failed) return fail("out of memory");
      out = scratch_.view();
      return true;
    }
    if (static_cast<unsigned char>(*p_) < 0x20) {
      return fail("a control character in a string (it must be escaped)");
    }
    // A backslash.
    const char* escape = p_++;
    if (p_ == end_) return fail("a string that is never closed");
    const char e = *p_++;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        scratch_.append(e);
        continue;
      case 'b':
        scratch_.append('\b');
        continue;
      case 'f':
        scratch_.append('\f');
        continue;
      case 'n':
        scratch_.append('\n');
        continue;
      case 'r':
        scratch_.append('\r');
        continue;
      case 't':
        scratch_.append('\t');
        continue;
      case 'u':
        break;
      default:
        return fail_at(escape, "an invalid escape in a string");
    }
    const auto hex4 = [&](std::uint32_t& cp) {
      if (end_ - p_ < 4) return false;
      cp = 0;
      for (int i = 0; i < 4; ++i) {
        const int v = hex_value(p_[i]);
        if (v < 0) return false;
        cp = cp << 4 | static_cast<std::uint32_t>(v);
      }
      p_ += 4;
      return true;
    };
    std::uint32_t cp = 0;
    if (!hex4(cp)) return fail_at(escape, "\\u without 4 hex digits in a string");
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      return fail_at(escape, "an unpaired UTF-16 surrogate (\\uDC00-\\uDFFF) in a string");
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      std::uint32_t low = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u' || (p_ += 2, !hex4(low)) || low < 0xdc00 ||
          low > 0xdfff) {
        return fail_at(escape, "an unpaired UTF-16 surrogate (\\uD800-\\uDBFF) in a string");
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    append_utf8(scratch_, cp);
  }
}

bool JsonReader::number(JsonNumber& out) {
  if (failed()) return false;
  skip_space();
  if (p_ == end_ || (*p_ != '-' && !is_digit(*p_))) return false;
  const char* start = p_;
  out = JsonNumber{};
  out.negative = *p_ == '-';
  if (out.negative) ++p_;
  if (p_ == end_ || !is_digit(*p_)) return fail("a number without digits");
  bool fits = true;
  std::uint64_t magnitude = 0;
  if (*p_ == '0') {
    ++p_;
    if (p_ < end_ && is_digit(*p_)) return fail("a number with a leading zero");
  } else {
    while (p_ < end_ && is_digit(*p_)) {
      const auto d = static_cast<std::uint64_t>(*p_ - '0');
      if (magnitude > (UINT64_MAX - d) / 10) fits = false;
      magnitude = magnitude * 10 + d;
      ++p_;
    }
  }
  out.integer = true;
  if (p_ < end_ && *p_ == '.') {
    out.integer = false;
    ++p_;
    if (p_ == end_ || !is_digit(*p_)) return fail("a number without digits after '.'");
    while (p_ < end_ && is_digit(*p_))
      ++p_;
  }
  if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
    out.integer = false;
    ++p_;
    if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !is_digit(*p_)) return fail("a number without digits in its exponent");
    while (p_ < end_ && is_digit(*p_))
      ++p_;
  }
  out.fits = out.integer && fits;
  out.magnitude = out.fits ? magnitude : 0;
  out.text = {start, static_cast<std::size_t>(p_ - start)};
  return true;
}

bool JsonReader::boolean(bool& out) {
  if (failed()) return false;
  skip_space();
  if (p_ == end_ || (*p_ != 't' && *p_ != 'f')) return false;
  const bool value = *p_ == 't';
  const char* word = value ? "true" : "false";
  const std::size_t n = value ? 4 : 5;
  if (static_cast<std::size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) {
    return fail(value ? "expected true" : "expected false");
  }
  p_ += n;
  out = value;
  return true;
}

bool JsonReader::null() {
  if (failed()) return false;
  skip_space();
  if (p_ == end_ || *p_ != 'n') return false;
  if (end_ - p_ < 4 || std::memcmp(p_, "null", 4) != 0) return fail("expected null");
  p_ += 4;
  return true;
}

bool JsonReader::skip() {
  JsonType type{};
  if (!peek(type)) return false;
  switch (type) {
    case JsonType::kObject: {
      begin_object();
      Str key;
      while (next_member(key)) {
        if (!skip()) return false;
      }
      return !failed();
    }
    case JsonType::kArray:
      begin_array();
      while (next_element()) {
        if (!skip()) return false;
      }
      return !failed();
    case JsonType::kString: {
      Str s;
      return string(s);
    }
    case JsonType::kNumber: {
      JsonNumber n;
      return number(n);
    }
    case JsonType::kBool: {
      bool b = false;
      return boolean(b);
    }
    case JsonType::kNull:
      return null();
  }
  return false;
}

bool JsonReader::at_end() {
  if (failed()) return false;
  skip_space();
  if (p_ != end_) return fail("text after the top-level value");
  return true;
}

}  // namespace nodetopo::mock_nvml
