// CEL values: construction, type names, equality and debug rendering.
#include <charconv>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include <nodetopo/fit/cel_value.hpp>

namespace nodetopo::fit::cel {

#define NODETOPO_CEL_SETTER(NAME, KIND, TYPE, EXPR) \
  Value Value::NAME(TYPE v) {                       \
    Value out;                                      \
    out.kind_ = Kind::KIND;                         \
    out.data_ = EXPR;                               \
    return out;                                     \
  }

NODETOPO_CEL_SETTER(boolean, kBool, bool, v)
NODETOPO_CEL_SETTER(integer, kInt, std::int64_t, v)
NODETOPO_CEL_SETTER(uinteger, kUint, std::uint64_t, v)
NODETOPO_CEL_SETTER(dbl, kDouble, double, v)
NODETOPO_CEL_SETTER(string, kString, std::string, std::move(v))
NODETOPO_CEL_SETTER(bytes, kBytes, std::string, std::move(v))
NODETOPO_CEL_SETTER(list, kList, List, std::make_shared<const List>(std::move(v)))
NODETOPO_CEL_SETTER(map, kMap, Map, std::make_shared<const Map>(std::move(v)))
NODETOPO_CEL_SETTER(type, kType, std::string, std::move(v))
NODETOPO_CEL_SETTER(quantity, kQuantity, Quantity, std::move(v))
NODETOPO_CEL_SETTER(semver, kSemver, Semver, std::move(v))
NODETOPO_CEL_SETTER(error, kError, std::string, std::move(v))
#undef NODETOPO_CEL_SETTER

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kType:
      return "type";
    case Kind::kQuantity:
      return "kubernetes.Quantity";
    case Kind::kSemver:
      return "kubernetes.Semver";
    case Kind::kError:
      return "error";
  }
  return "unknown";
}

std::string Value::debug_string() const {
  switch (kind_) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return as_bool() ? "true" : "false";
    case Kind::kInt:
      return std::to_string(as_int());
    case Kind::kUint:
      return std::to_string(as_uint()) + "u";
    case Kind::kDouble: {
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, as_double());
      return std::string(buf, r.ptr);
    }
    case Kind::kString:
      return "\"" + text() + "\"";
    case Kind::kBytes:
      return "b\"" + text() + "\"";
    case Kind::kList: {
      std::string s = "[";
      for (std::size_t i = 0; i < as_list().size(); ++i)
        s += (i ? ", " : "") + as_list()[i].debug_string();
      return s + "]";
    }
    case Kind::kMap: {
      std::string s = "{";
      bool first = true;
      for (const auto& [k, v] : as_map().entries) {
        s += (first ? "" : ", ") + k.debug_string() + ": " + v.debug_string();
        first = false;
      }
      return s + "}";
    }
    case Kind::kType:
      return text();
    case Kind::kQuantity:
      return "quantity(\"" + as_quantity().to_string() + "\")";
    case Kind::kSemver:
      return "semver(\"" + as_semver().to_string() + "\")";
    case Kind::kError:
      return "error(" + text() + ")";
  }
  return "?";
}

namespace {

bool is_number(const Value& v) {
  return v.kind() == Value::Kind::kInt || v.kind() == Value::Kind::kUint ||
         v.kind() == Value::Kind::kDouble;
}

bool numbers_equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (a.kind() == K::kDouble || b.kind() == K::kDouble) {
    const double x = a.kind() == K::kDouble ? a.as_double()
                     : a.kind() == K::kInt  ? static_cast<double>(a.as_int())
                                            : static_cast<double>(a.as_uint());
    const double y = b.kind() == K::kDouble ? b.as_double()
                     : b.kind() == K::kInt  ? static_cast<double>(b.as_int())
                                            : static_cast<double>(b.as_uint());
    if (a.kind() != K::kDouble || b.kind() != K::kDouble) {
      // An integer equals a double only when the double is exactly that integer.
      const Value& d = a.kind() == K::kDouble ? a : b;
      const Value& n = a.kind() == K::kDouble ? b : a;
      const double dv = d.as_double();
      if (std::isnan(dv) || dv != std::trunc(dv)) return false;
      if (n.kind() == K::kInt) {
        if (dv < -9223372036854775808.0 || dv >= 9223372036854775808.0) return false;
        return static_cast<std::int64_t>(dv) == n.as_int();
      }
      if (dv < 0 || dv >= 18446744073709551616.0) return false;
      return static_cast<std::uint64_t>(dv) == n.as_uint();
    }
    return x == y;
  }
  if (a.kind() == b.kind()) {
    return a.kind() == K::kInt ? a.as_int() == b.as_int() : a.as_uint() == b.as_uint();
  }
  const Value& i = a.kind() == K::kInt ? a : b;
  const Value& u = a.kind() == K::kInt ? b : a;
  return i.as_int() >= 0 && static_cast<std::uint64_t>(i.as_int()) == u.as_uint();
}

}  // namespace

bool equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  if (is_number(a) && is_number(b)) return numbers_equal(a, b);
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kNull:
      return true;
    case K::kBool:
      return a.as_bool() == b.as_bool();
    case K::kString:
    case K::kBytes:
    case K::kType:
    case K::kError:
      return a.text() == b.text();
    case K::kList: {
      const List& x = a.as_list();
      const List& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!equal(x[i], y[i])) return false;
      return true;
    }
    case K::kMap: {
      const Map& x = a.as_map();
      const Map& y = b.as_map();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = map_find(y, k);
        if (other == nullptr || !equal(v, *other)) return false;
      }
      return true;
    }
    case K::kQuantity:
      return a.as_quantity() == b.as_quantity();
    case K::kSemver:
      return a.as_semver() == b.as_semver();
    default:
      return false;
  }
}

const Value* map_find(const Map& map, const Value& key) {
  for (const auto& [k, v] : map.entries) {
    if (equal(k, key)) return &v;
  }
  return nullptr;
}

}  // namespace nodetopo::fit::cel
