// The standard CEL functions: operators, size, conversions, string predicates and matches().
// Overload resolution is by the runtime types of the (already evaluated) arguments; anything
// without an overload is CEL's "no matching overload" error.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <re2/re2.h>

#include "runtime.hpp"
#include "strings.hpp"

namespace nodetopo::fit::cel {

namespace {

using K = Value::Kind;

bool is_num(const Value& v) {
  return v.kind() == K::kInt || v.kind() == K::kUint || v.kind() == K::kDouble;
}

// -1, 0, 1, or 2 when unordered (NaN). Numbers compare across int, uint and double.
int compare_numbers(const Value& a, const Value& b) {
  if (a.kind() == K::kInt && b.kind() == K::kInt)
    return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int();
  if (a.kind() == K::kUint && b.kind() == K::kUint)
    return a.as_uint() < b.as_uint() ? -1 : a.as_uint() > b.as_uint();
  if (a.kind() == K::kInt && b.kind() == K::kUint) {
    if (a.as_int() < 0) return -1;
    const auto x = static_cast<std::uint64_t>(a.as_int());
    return x < b.as_uint() ? -1 : x > b.as_uint();
  }
  if (a.kind() == K::kUint && b.kind() == K::kInt) return -compare_numbers(b, a);
  // One side is a double: the integer converts to double first, as cel-go compares.
  const auto as_d = [](const Value& v) {
    return v.kind() == K::kDouble ? v.as_double()
           : v.kind() == K::kInt  ? static_cast<double>(v.as_int())
                                  : static_cast<double>(v.as_uint());
  };
  const double x = as_d(a);
  const double y = as_d(b);
  if (std::isnan(x) || std::isnan(y)) return 2;
  return x < y ? -1 : x > y;
}

Value overflow() {
  return Value::error("return error for overflow");
}

Value arith(std::string_view op, const Value& a, const Value& b, Budget& budget) {
  if (a.kind() != b.kind()) return no_overload(op, nullptr, std::array<Value, 2>{a, b});
  switch (a.kind()) {
    case K::kInt: {
      const std::int64_t x = a.as_int();
      const std::int64_t y = b.as_int();
      std::int64_t r = 0;
      if (op == "_+_") {
        if (__builtin_add_overflow(x, y, &r)) return overflow();
      } else if (op == "_-_") {
        if (__builtin_sub_overflow(x, y, &r)) return overflow();
      } else if (op == "_*_") {
        if (__builtin_mul_overflow(x, y, &r)) return overflow();
      } else if (op == "_/_") {
        if (y == 0) return Value::error("divide by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) return overflow();
        r = x / y;
      } else {
        if (y == 0) return Value::error("modulus by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) return overflow();
        r = x % y;
      }
      return Value::integer(r);
    }
    case K::kUint: {
      const std::uint64_t x = a.as_uint();
      const std::uint64_t y = b.as_uint();
      std::uint64_t r = 0;
      if (op == "_+_") {
        if (__builtin_add_overflow(x, y, &r)) return overflow();
      } else if (op == "_-_") {
        if (__builtin_sub_overflow(x, y, &r)) return overflow();
      } else if (op == "_*_") {
        if (__builtin_mul_overflow(x, y, &r)) return overflow();
      } else if (op == "_/_") {
        if (y == 0) return Value::error("divide by zero");
        r = x / y;
      } else {
        if (y == 0) return Value::error("modulus by zero");
        r = x % y;
      }
      return Value::uinteger(r);
    }
    case K::kDouble: {
      const double x = a.as_double();
      const double y = b.as_double();
      if (op == "_+_") return Value::dbl(x + y);
      if (op == "_-_") return Value::dbl(x - y);
      if (op == "_*_") return Value::dbl(x * y);
      if (op == "_/_") return Value::dbl(x / y);
      break;
    }
    case K::kString:
    case K::kBytes:
      if (op == "_+_") {
        budget.charge((a.text().size() + b.text().size()) / 16);
        return a.kind() == K::kString ? Value::string(a.text() + b.text())
                                      : Value::bytes(a.text() + b.text());
      }
      break;
    case K::kList:
      if (op == "_+_") {
        budget.charge(a.as_list().size() + b.as_list().size());
        List out = a.as_list();
        out.insert(out.end(), b.as_list().begin(), b.as_list().end());
        return Value::list(std::move(out));
      }
      break;
    default:
      break;
  }
  return no_overload(op, nullptr, std::array<Value, 2>{a, b});
}

Value compare(std::string_view op, const Value& a, const Value& b) {
  int c = 0;
  if (is_num(a) && is_num(b)) {
    c = compare_numbers(a, b);
    if (c == 2) return Value::boolean(false);  // NaN is unordered
  } else if (a.kind() == b.kind() && (a.kind() == K::kString || a.kind() == K::kBytes)) {
    c = a.text().compare(b.text());
    c = c < 0 ? -1 : c > 0;
  } else if (a.kind() == K::kBool && b.kind() == K::kBool) {
    c = static_cast<int>(a.as_bool()) - static_cast<int>(b.as_bool());
  } else {
    return no_overload(op, nullptr, std::array<Value, 2>{a, b});
  }
  if (op == "_<_") return Value::boolean(c < 0);
  if (op == "_<=_") return Value::boolean(c <= 0);
  if (op == "_>_") return Value::boolean(c > 0);
  return Value::boolean(c >= 0);
}

Value index(const Value& c, const Value& key) {
  if (c.kind() == K::kList) {
    std::int64_t i = 0;
    if (key.kind() == K::kInt) {
      i = key.as_int();
    } else if (key.kind() == K::kUint) {
      if (key.as_uint() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Value::error("index out of range");
      }
      i = static_cast<std::int64_t>(key.as_uint());
    } else if (key.kind() == K::kDouble && key.as_double() == std::trunc(key.as_double()) &&
               std::abs(key.as_double()) < 9.2e18) {
      i = static_cast<std::int64_t>(key.as_double());
    } else {
      return Value::error("invalid list index of type " + key.type_name() +
                          " (no matching overload)");
    }
    if (i < 0 || i >= static_cast<std::int64_t>(c.as_list().size())) {
      return Value::error("index out of range: " + std::to_string(i));
    }
    return c.as_list()[static_cast<std::size_t>(i)];
  }
  if (c.kind() == K::kMap) {
    if (key.kind() == K::kList || key.kind() == K::kMap || key.kind() == K::kNull ||
        key.kind() == K::kBytes || key.kind() == K::kType) {
      return Value::error("unsupported map key type " + key.type_name() +
                          " (no matching overload)");
    }
    if (const Value* v = map_find(c.as_map(), key)) return *v;
    if (c.as_map().missing_is_empty_map) return Value::map(Map{});
    return Value::error("no such key: " +
                        (key.kind() == K::kString ? key.text() : key.debug_string()));
  }
  return no_overload("_[_]", nullptr, std::array<Value, 2>{c, key});
}

Value in(const Value& elem, const Value& c) {
  if (c.kind() == K::kList) {
    for (const Value& v : c.as_list())
      if (equal(v, elem)) return Value::boolean(true);
    return Value::boolean(false);
  }
  if (c.kind() == K::kMap) return Value::boolean(map_find(c.as_map(), elem) != nullptr);
  return no_overload("@in", nullptr, std::array<Value, 2>{elem, c});
}

bool parse_go_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, out);
  return r.ec == std::errc() && r.ptr == e && b != e;
}

Value to_int(const Value& v) {
  switch (v.kind()) {
    case K::kInt:
      return v;
    case K::kUint:
      if (v.as_uint() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return Value::error("range error converting " + v.debug_string() + " to int");
      }
      return Value::integer(static_cast<std::int64_t>(v.as_uint()));
    case K::kDouble: {
      const double d = v.as_double();
      if (std::isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775808.0) {
        return Value::error("range error converting " + v.debug_string() + " to int");
      }
      return Value::integer(static_cast<std::int64_t>(d));
    }
    case K::kString: {
      std::int64_t out = 0;
      if (!parse_go_int(v.text(), out))
        return Value::error("cannot convert \"" + v.text() + "\" to int");
      return Value::integer(out);
    }
    default:
      return no_overload("int", nullptr, std::array<Value, 1>{v});
  }
}

Value to_uint(const Value& v) {
  switch (v.kind()) {
    case K::kUint:
      return v;
    case K::kInt:
      if (v.as_int() < 0)
        return Value::error("range error converting " + v.debug_string() + " to uint");
      return Value::uinteger(static_cast<std::uint64_t>(v.as_int()));
    case K::kDouble: {
      const double d = v.as_double();
      if (std::isnan(d) || d <= -1.0 || d >= 18446744073709551616.0) {
        return Value::error("range error converting " + v.debug_string() + " to uint");
      }
      return Value::uinteger(static_cast<std::uint64_t>(d));
    }
    case K::kString: {
      std::uint64_t out = 0;
      const std::string& s = v.text();
      const char* b = s.data();
      const char* e = b + s.size();
      if (b != e && *b == '+') ++b;
      auto r = std::from_chars(b, e, out);
      if (b == e || r.ec != std::errc() || r.ptr != e) {
        return Value::error("cannot convert \"" + s + "\" to uint");
      }
      return Value::uinteger(out);
    }
    default:
      return no_overload("uint", nullptr, std::array<Value, 1>{v});
  }
}

Value to_double(const Value& v) {
  switch (v.kind()) {
    case K::kDouble:
      return v;
    case K::kInt:
      return Value::dbl(static_cast<double>(v.as_int()));
    case K::kUint:
      return Value::dbl(static_cast<double>(v.as_uint()));
    case K::kString: {
      const std::string& s = v.text();
      char* end = nullptr;
      const double d = std::strtod(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size() ||
          s.find_first_of("xXpP") != std::string::npos) {
        return Value::error("cannot convert \"" + s + "\" to double");
      }
      return Value::dbl(d);
    }
    default:
      return no_overload("double", nullptr, std::array<Value, 1>{v});
  }
}

Value to_string(const Value& v) {
  switch (v.kind()) {
    case K::kString:
      return v;
    case K::kInt:
      return Value::string(std::to_string(v.as_int()));
    case K::kUint:
      return Value::string(std::to_string(v.as_uint()));
    case K::kDouble:
      return Value::string(format_double(v.as_double()));
    case K::kBool:
      return Value::string(v.as_bool() ? "true" : "false");
    case K::kBytes:
      if (!utf8_valid(v.text())) return Value::error("invalid UTF-8 in bytes converted to string");
      return Value::string(v.text());
    case K::kQuantity:
      return Value::string(v.as_quantity().to_string());
    case K::kSemver:
      return Value::string(v.as_semver().to_string());
    default:
      return no_overload("string", nullptr, std::array<Value, 1>{v});
  }
}

Value to_bool(const Value& v) {
  if (v.kind() == K::kBool) return v;
  if (v.kind() == K::kString) {
    const std::string& s = v.text();
    if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True")
      return Value::boolean(true);
    if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False")
      return Value::boolean(false);
    return Value::error("cannot convert \"" + s + "\" to bool");
  }
  return no_overload("bool", nullptr, std::array<Value, 1>{v});
}

Value size_of(const Value& v) {
  switch (v.kind()) {
    case K::kString:
      return Value::integer(static_cast<std::int64_t>(utf8_length(v.text())));
    case K::kBytes:
      return Value::integer(static_cast<std::int64_t>(v.text().size()));
    case K::kList:
      return Value::integer(static_cast<std::int64_t>(v.as_list().size()));
    case K::kMap:
      return Value::integer(static_cast<std::int64_t>(v.as_map().entries.size()));
    default:
      return no_overload("size", nullptr, std::array<Value, 1>{v});
  }
}

Value matches(const Value& s, const Value& pattern, Budget& budget) {
  if (s.kind() != K::kString || pattern.kind() != K::kString) {
    return no_overload("matches", &s, std::array<Value, 1>{pattern});
  }
  budget.charge(1 + (s.text().size() * (pattern.text().size() + 1)) / 64);
  RE2::Options options;
  options.set_log_errors(false);
  const RE2 re(pattern.text(), options);
  if (!re.ok())
    return Value::error("invalid regular expression '" + pattern.text() + "': " + re.error());
  return Value::boolean(RE2::PartialMatch(s.text(), re));
}

}  // namespace

Value no_overload(std::string_view name, const Value* target, std::span<const Value> args) {
  std::string sig;
  if (target != nullptr) sig = target->type_name() + ".";
  sig += std::string(name) + "(";
  for (std::size_t i = 0; i < args.size(); ++i)
    sig += (i ? ", " : "") + args[i].type_name();
  return Value::error("no matching overload for " + sig + ")");
}

std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);  // d.ddde[+-]XX, shortest round-trip digits
  const auto epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  const int exp = std::stoi(sci.substr(epos + 1));
  const bool neg = mant[0] == '-';
  if (neg) mant.erase(0, 1);
  std::string digits;
  for (char c : mant)
    if (c != '.') digits += c;
  std::string out;
  if (exp < -4 || exp >= 21) {
    // Go prints %e with at least two exponent digits: 1e+21, 1.5e-07.
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int a = std::abs(exp);
    out += std::string("e") + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + std::to_string(a);
  } else if (exp < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else if (static_cast<int>(digits.size()) <= exp + 1) {
    out = digits + std::string(static_cast<std::size_t>(exp + 1) - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<std::size_t>(exp + 1)) + "." +
          digits.substr(static_cast<std::size_t>(exp + 1));
  }
  return (neg ? "-" : "") + out;
}

Value call_standard(std::string_view name, const Value* target, std::span<const Value> args,
                    Budget& budget, bool& handled) {
  handled = true;
  const std::size_t n = args.size();
  if (target == nullptr) {
    if (n == 2 &&
        (name == "_+_" || name == "_-_" || name == "_*_" || name == "_/_" || name == "_%_")) {
      return arith(name, args[0], args[1], budget);
    }
    if (n == 2 && (name == "_<_" || name == "_<=_" || name == "_>_" || name == "_>=_")) {
      return compare(name, args[0], args[1]);
    }
    if (n == 2 && name == "_==_") return Value::boolean(equal(args[0], args[1]));
    if (n == 2 && name == "_!=_") return Value::boolean(!equal(args[0], args[1]));
    if (n == 2 && name == "_[_]") return index(args[0], args[1]);
    if (n == 2 && name == "@in") return in(args[0], args[1]);
    if (n == 1 && name == "!_") {
      if (args[0].kind() != K::kBool) return no_overload("!_", nullptr, args);
      return Value::boolean(!args[0].as_bool());
    }
    if (n == 1 && name == "-_") {
      if (args[0].kind() == K::kInt) {
        if (args[0].as_int() == std::numeric_limits<std::int64_t>::min()) return overflow();
        return Value::integer(-args[0].as_int());
      }
      if (args[0].kind() == K::kDouble) return Value::dbl(-args[0].as_double());
      return no_overload("-_", nullptr, args);
    }
    if (n == 1 && name == "size") return size_of(args[0]);
    if (n == 1 && name == "int") return to_int(args[0]);
    if (n == 1 && name == "uint") return to_uint(args[0]);
    if (n == 1 && name == "double") return to_double(args[0]);
    if (n == 1 && name == "string") return to_string(args[0]);
    if (n == 1 && name == "bool") return to_bool(args[0]);
    if (n == 1 && name == "bytes") {
      if (args[0].kind() == K::kBytes) return args[0];
      if (args[0].kind() == K::kString) return Value::bytes(args[0].text());
      return no_overload("bytes", nullptr, args);
    }
    if (n == 1 && name == "dyn") return args[0];
    if (n == 1 && name == "type") return Value::type(args[0].type_name());
    if (n == 2 && name == "matches") return matches(args[0], args[1], budget);
  } else {
    const Value& t = *target;
    if (n == 0 && name == "size") return size_of(t);
    if (n == 1 && name == "matches") return matches(t, args[0], budget);
    if (n == 1 && (name == "contains" || name == "startsWith" || name == "endsWith") &&
        t.kind() == K::kString && args[0].kind() == K::kString) {
      budget.charge(1 + t.text().size() / 64);
      const std::string& s = t.text();
      const std::string& x = args[0].text();
      if (name == "contains") return Value::boolean(s.find(x) != std::string::npos);
      if (name == "startsWith")
        return Value::boolean(s.compare(0, x.size(), x) == 0 && s.size() >= x.size());
      return Value::boolean(s.size() >= x.size() &&
                            s.compare(s.size() - x.size(), x.size(), x) == 0);
    }
  }
  handled = false;
  return {};
}

}  // namespace nodetopo::fit::cel
