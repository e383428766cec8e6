// UTF-8 helpers and the cel-go string extension functions.
#include "strings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nodetopo::fit::cel {

bool utf8_valid(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    }
    if ((c >> 5) == 6) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c >> 4) == 14) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c >> 3) == 30) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

std::vector<char32_t> utf8_decode(std::string_view s) {
  std::vector<char32_t> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : 3;
    char32_t cp = n == 0 ? c : n == 1 ? (c & 0x1F) : n == 2 ? (c & 0x0F) : (c & 0x07);
    for (std::size_t k = 1; k <= n && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += n + 1;
  }
  return out;
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

std::string utf8_encode(std::span<const char32_t> cps) {
  std::string out;
  for (char32_t cp : cps) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

namespace {

using K = Value::Kind;

std::int64_t find_cp(const std::vector<char32_t>& s, const std::vector<char32_t>& x,
                     std::size_t from, bool last) {
  if (x.size() > s.size()) return -1;
  if (last) {
    for (std::size_t i = std::min(from, s.size() - x.size()) + 1; i-- > 0;) {
      if (std::equal(x.begin(), x.end(), s.begin() + static_cast<std::ptrdiff_t>(i))) {
        return static_cast<std::int64_t>(i);
      }
    }
    return -1;
  }
  for (std::size_t i = from; i + x.size() <= s.size(); ++i) {
    if (std::equal(x.begin(), x.end(), s.begin() + static_cast<std::ptrdiff_t>(i))) {
      return static_cast<std::int64_t>(i);
    }
  }
  return -1;
}

bool is_unicode_space(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

}  // namespace

Value call_strings(std::string_view name, const Value* target, std::span<const Value> args,
                   Budget& budget, bool& handled) {
  handled = true;
  const std::size_t n = args.size();
  if (target != nullptr && target->kind() == K::kString) {
    const std::string& str = target->text();
    budget.charge(1 + str.size() / 64);
    const auto all_int = [&](std::size_t from) {
      for (std::size_t i = from; i < n; ++i)
        if (args[i].kind() != K::kInt) return false;
      return true;
    };
    if (name == "lowerAscii" && n == 0) {
      std::string out = str;
      for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      return Value::string(out);
    }
    if (name == "upperAscii" && n == 0) {
      std::string out = str;
      for (char& c : out)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      return Value::string(out);
    }
    if (name == "trim" && n == 0) {
      auto cps = utf8_decode(str);
      std::size_t b = 0;
      std::size_t e = cps.size();
      while (b < e && is_unicode_space(cps[b]))
        ++b;
      while (e > b && is_unicode_space(cps[e - 1]))
        --e;
      return Value::string(utf8_encode(std::span<const char32_t>(cps).subspan(b, e - b)));
    }
    if (name == "reverse" && n == 0) {
      auto cps = utf8_decode(str);
      std::reverse(cps.begin(), cps.end());
      return Value::string(utf8_encode(cps));
    }
    if (name == "charAt" && n == 1 && all_int(0)) {
      auto cps = utf8_decode(str);
      const std::int64_t i = args[0].as_int();
      if (i < 0 || i > static_cast<std::int64_t>(cps.size()))
        return Value::error("index out of range: " + std::to_string(i));
      if (i == static_cast<std::int64_t>(cps.size())) return Value::string("");
      return Value::string(
          utf8_encode(std::span<const char32_t>(cps).subspan(static_cast<std::size_t>(i), 1)));
    }
    if ((name == "indexOf" || name == "lastIndexOf") && (n == 1 || n == 2) &&
        args[0].kind() == K::kString && all_int(1)) {
      auto s = utf8_decode(str);
      auto x = utf8_decode(args[0].text());
      const bool last = name == "lastIndexOf";
      std::int64_t from = last ? static_cast<std::int64_t>(s.size()) : 0;
      if (n == 2) {
        from = args[1].as_int();
        if (from < 0 || from > static_cast<std::int64_t>(s.size())) {
          return Value::error("index out of range: " + std::to_string(from));
        }
      }
      if (x.empty()) return Value::integer(from);
      return Value::integer(find_cp(s, x, static_cast<std::size_t>(from), last));
    }
    if (name == "substring" && (n == 1 || n == 2) && all_int(0)) {
      auto cps = utf8_decode(str);
      const auto size = static_cast<std::int64_t>(cps.size());
      const std::int64_t b = args[0].as_int();
      const std::int64_t e = n == 2 ? args[1].as_int() : size;
      if (b < 0 || b > size) return Value::error("index out of range: " + std::to_string(b));
      if (e < 0 || e > size) return Value::error("index out of range: " + std::to_string(e));
      if (b > e)
        return Value::error("invalid substring range. start: " + std::to_string(b) +
                            ", end: " + std::to_string(e));
      return Value::string(utf8_encode(std::span<const char32_t>(cps).subspan(
          static_cast<std::size_t>(b), static_cast<std::size_t>(e - b))));
    }
    if (name == "replace" && (n == 2 || n == 3) && args[0].kind() == K::kString &&
        args[1].kind() == K::kString && all_int(2)) {
      const std::string& from = args[0].text();
      const std::string& to = args[1].text();
      std::int64_t limit = n == 3 ? args[2].as_int() : -1;
      std::string out;
      std::size_t pos = 0;
      if (from.empty()) {
        // Go's strings.Replace with an empty old string inserts between code points.
        auto cps = utf8_decode(str);
        for (std::size_t i = 0; i <= cps.size(); ++i) {
          if (limit != 0) {
            out += to;
            if (limit > 0) --limit;
          }
          if (i < cps.size()) out += utf8_encode(std::span<const char32_t>(&cps[i], 1));
        }
        return Value::string(out);
      }
      while (limit != 0) {
        const auto at = str.find(from, pos);
        if (at == std::string::npos) break;
        out += str.substr(pos, at - pos) + to;
        pos = at + from.size();
        if (limit > 0) --limit;
      }
      out += str.substr(pos);
      budget.charge(out.size() / 64);
      return Value::string(out);
    }
    if (name == "split" && (n == 1 || n == 2) && args[0].kind() == K::kString && all_int(1)) {
      const std::string& sep = args[0].text();
      const std::int64_t limit = n == 2 ? args[1].as_int() : -1;
      List out;
      if (limit == 0) return Value::list({});
      if (sep.empty()) {
        auto cps = utf8_decode(str);
        for (std::size_t i = 0; i < cps.size(); ++i) {
          if (limit > 0 && static_cast<std::int64_t>(out.size()) == limit - 1) {
            out.push_back(Value::string(utf8_encode(std::span<const char32_t>(cps).subspan(i))));
            break;
          }
          out.push_back(Value::string(utf8_encode(std::span<const char32_t>(&cps[i], 1))));
        }
        return Value::list(std::move(out));
      }
      std::size_t pos = 0;
      while (true) {
        if (limit > 0 && static_cast<std::int64_t>(out.size()) == limit - 1) break;
        const auto at = str.find(sep, pos);
        if (at == std::string::npos) break;
        out.push_back(Value::string(str.substr(pos, at - pos)));
        pos = at + sep.size();
      }
      out.push_back(Value::string(str.substr(pos)));
      return Value::list(std::move(out));
    }
  }
  if (target != nullptr && target->kind() == K::kList && name == "join" && n <= 1 &&
      (n == 0 || args[0].kind() == K::kString)) {
    std::string out;
    const std::string sep = n == 1 ? args[0].text() : "";
    bool first = true;
    for (const Value& v : target->as_list()) {
      if (v.kind() != K::kString) return no_overload("join", target, args);
      out += (first ? "" : sep) + v.text();
      first = false;
    }
    budget.charge(out.size() / 64);
    return Value::string(out);
  }
  if (target == nullptr && name == "strings.quote" && n == 1 && args[0].kind() == K::kString) {
    std::string out = "\"";
    for (char c : args[0].text()) {
      switch (c) {
        case '\a':
          out += "\\a";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\v':
          out += "\\v";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '"':
          out += "\\\"";
          break;
        default:
          out += c;
      }
    }
    return Value::string(out + "\"");
  }
  handled = false;
  return {};
}

}  // namespace nodetopo::fit::cel
