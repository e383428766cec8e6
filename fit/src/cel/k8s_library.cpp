// The Kubernetes CEL libraries that DRA selectors may use (k8s.io/apiserver/pkg/cel/library):
// quantity (quantity, isQuantity, sign, isInteger, asInteger, asApproximateFloat, add, sub,
// compareTo, isGreaterThan, isLessThan), semver (semver, isSemver, major, minor, patch,
// compareTo, isGreaterThan, isLessThan), lists (isSorted, sum, min, max, indexOf,
// lastIndexOf), sets (sets.contains, sets.equivalent, sets.intersects) and regex (find,
// findAll) — plus the function table and the dispatcher.
#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <string_view>

#include <re2/re2.h>

#include "runtime.hpp"
#include "strings.hpp"

namespace nodetopo::fit::cel {

namespace {

using K = Value::Kind;

Value list_order(std::string_view name, const List& items, Budget& budget) {
  budget.charge(items.size());
  const auto less = [](const Value& a, const Value& b, bool& ok) {
    Budget unused{0, ~0ULL};
    bool handled = false;
    Value r = call_standard("_<_", nullptr, std::array<Value, 2>{a, b}, unused, handled);
    ok = !r.is_error();
    return ok && r.as_bool();
  };
  if (name == "isSorted") {
    for (std::size_t i = 1; i < items.size(); ++i) {
      bool ok = true;
      if (less(items[i], items[i - 1], ok)) return Value::boolean(false);
      if (!ok) return Value::error("isSorted: elements are not comparable");
    }
    return Value::boolean(true);
  }
  if (items.empty()) return Value::error(std::string(name) + "() of an empty list");
  Value best = items[0];
  for (std::size_t i = 1; i < items.size(); ++i) {
    bool ok = true;
    const bool pick = name == "min" ? less(items[i], best, ok) : less(best, items[i], ok);
    if (!ok) return Value::error(std::string(name) + ": elements are not comparable");
    if (pick) best = items[i];
  }
  return best;
}

bool bool_arg(std::span<const Value> args, std::size_t i) {
  return args.size() > i && args[i].kind() == K::kBool && args[i].as_bool();
}

}  // namespace

Value call_kubernetes(std::string_view name, const Value* target, std::span<const Value> args,
                      Budget& budget, bool& handled) {
  handled = true;
  const std::size_t n = args.size();
  if (target == nullptr) {
    if (name == "quantity" && n == 1 && args[0].kind() == K::kString) {
      auto q = Quantity::parse(args[0].text());
      if (!q)
        return Value::error(
            "quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': \"" +
            args[0].text() + "\"");
      return Value::quantity(*q);
    }
    if (name == "isQuantity" && n == 1 && args[0].kind() == K::kString) {
      return Value::boolean(Quantity::parse(args[0].text()).has_value());
    }
    if (name == "semver" && (n == 1 || n == 2) && args[0].kind() == K::kString &&
        (n == 1 || args[1].kind() == K::kBool)) {
      auto v = Semver::parse(args[0].text(), bool_arg(args, 1));
      if (!v) return Value::error("invalid semver \"" + args[0].text() + "\"");
      return Value::semver(*v);
    }
    if (name == "isSemver" && (n == 1 || n == 2) && args[0].kind() == K::kString &&
        (n == 1 || args[1].kind() == K::kBool)) {
      return Value::boolean(Semver::parse(args[0].text(), bool_arg(args, 1)).has_value());
    }
    if ((name == "sets.contains" || name == "sets.equivalent" || name == "sets.intersects") &&
        n == 2 && args[0].kind() == K::kList && args[1].kind() == K::kList) {
      const List& a = args[0].as_list();
      const List& b = args[1].as_list();
      budget.charge(a.size() * b.size() + 1);
      const auto has = [](const List& l, const Value& v) {
        return std::any_of(l.begin(), l.end(), [&](const Value& x) { return equal(x, v); });
      };
      if (name == "sets.intersects") {
        return Value::boolean(
            std::any_of(b.begin(), b.end(), [&](const Value& v) { return has(a, v); }));
      }
      const bool a_has_b =
          std::all_of(b.begin(), b.end(), [&](const Value& v) { return has(a, v); });
      if (name == "sets.contains") return Value::boolean(a_has_b);
      return Value::boolean(
          a_has_b && std::all_of(a.begin(), a.end(), [&](const Value& v) { return has(b, v); }));
    }
    handled = false;
    return {};
  }
  const Value& t = *target;
  if (t.kind() == K::kQuantity) {
    const Quantity& q = t.as_quantity();
    if (n == 0 && name == "sign") return Value::integer(q.sign());
    if (n == 0 && name == "isInteger") return Value::boolean(q.as_int64().has_value());
    if (n == 0 && name == "asInteger") {
      auto v = q.as_int64();
      if (!v) return Value::error("cannot convert value to integer: " + q.to_string());
      return Value::integer(*v);
    }
    if (n == 0 && name == "asApproximateFloat") return Value::dbl(q.as_double());
    if (n == 1 && (name == "add" || name == "sub")) {
      Quantity other;
      if (args[0].kind() == K::kQuantity) {
        other = args[0].as_quantity();
      } else if (args[0].kind() == K::kInt) {
        other = Quantity::from_int(args[0].as_int());
      } else {
        return no_overload(name, target, args);
      }
      return Value::quantity(name == "add" ? q + other : q - other);
    }
    if (n == 1 && args[0].kind() == K::kQuantity) {
      const Quantity& o = args[0].as_quantity();
      if (name == "compareTo") return Value::integer(q < o ? -1 : (q == o ? 0 : 1));
      if (name == "isGreaterThan") return Value::boolean(q > o);
      if (name == "isLessThan") return Value::boolean(q < o);
    }
  }
  if (t.kind() == K::kSemver) {
    const Semver& v = t.as_semver();
    if (n == 0 && name == "major") return Value::integer(static_cast<std::int64_t>(v.major));
    if (n == 0 && name == "minor") return Value::integer(static_cast<std::int64_t>(v.minor));
    if (n == 0 && name == "patch") return Value::integer(static_cast<std::int64_t>(v.patch));
    if (n == 1 && args[0].kind() == K::kSemver) {
      const int c = v.compare(args[0].as_semver());
      if (name == "compareTo") return Value::integer(c);
      if (name == "isGreaterThan") return Value::boolean(c > 0);
      if (name == "isLessThan") return Value::boolean(c < 0);
    }
  }
  if (t.kind() == K::kList) {
    const List& items = t.as_list();
    if (n == 0 && (name == "isSorted" || name == "min" || name == "max"))
      return list_order(name, items, budget);
    if (n == 0 && name == "sum") {
      budget.charge(items.size());
      if (items.empty()) return Value::integer(0);
      Value acc = items[0];
      for (std::size_t i = 1; i < items.size(); ++i) {
        bool h = false;
        acc = call_standard("_+_", nullptr, std::array<Value, 2>{acc, items[i]}, budget, h);
        if (acc.is_error()) return acc;
      }
      return acc;
    }
    if (n == 1 && (name == "indexOf" || name == "lastIndexOf")) {
      budget.charge(items.size());
      for (std::size_t k = 0; k < items.size(); ++k) {
        const std::size_t i = name == "indexOf" ? k : items.size() - 1 - k;
        if (equal(items[i], args[0])) return Value::integer(static_cast<std::int64_t>(i));
      }
      return Value::integer(-1);
    }
  }
  if (t.kind() == K::kString && (name == "find" || name == "findAll") && n >= 1 &&
      args[0].kind() == K::kString &&
      (n == 1 || (name == "findAll" && n == 2 && args[1].kind() == K::kInt))) {
    budget.charge(1 + t.text().size() * (args[0].text().size() + 1) / 64);
    RE2::Options options;
    options.set_log_errors(false);
    const RE2 re(args[0].text(), options);
    if (!re.ok()) return Value::error("invalid regular expression: " + re.error());
    const re2::StringPiece input(t.text());
    re2::StringPiece match;
    if (name == "find") {
      if (re.Match(input, 0, input.size(), RE2::UNANCHORED, &match, 1))
        return Value::string(std::string(match));
      return Value::string("");
    }
    const std::int64_t limit = n == 2 ? args[1].as_int() : -1;
    List out;
    std::size_t pos = 0;
    while (pos <= input.size() && (limit < 0 || static_cast<std::int64_t>(out.size()) < limit)) {
      if (!re.Match(input, pos, input.size(), RE2::UNANCHORED, &match, 1)) break;
      out.push_back(Value::string(std::string(match)));
      const auto end = static_cast<std::size_t>(match.data() - input.data()) + match.size();
      pos = match.empty() ? end + 1 : end;
    }
    return Value::list(std::move(out));
  }
  handled = false;
  return {};
}

bool is_builtin(std::string_view name, bool member) {
  static constexpr std::string_view global[] = {"_+_",
                                                "_-_",
                                                "_*_",
                                                "_/_",
                                                "_%_",
                                                "_<_",
                                                "_<=_",
                                                "_>_",
                                                "_>=_",
                                                "_==_",
                                                "_!=_",
                                                "_[_]",
                                                "@in",
                                                "!_",
                                                "-_",
                                                "size",
                                                "int",
                                                "uint",
                                                "double",
                                                "string",
                                                "bool",
                                                "bytes",
                                                "dyn",
                                                "type",
                                                "matches",
                                                "quantity",
                                                "isQuantity",
                                                "semver",
                                                "isSemver",
                                                "sets.contains",
                                                "sets.equivalent",
                                                "sets.intersects",
                                                "strings.quote"};
  static constexpr std::string_view members[] = {
      "size",       "matches",     "contains",  "startsWith",    "endsWith",
      "lowerAscii", "upperAscii",  "trim",      "reverse",       "charAt",
      "indexOf",    "lastIndexOf", "substring", "replace",       "split",
      "join",       "sign",        "isInteger", "asInteger",     "asApproximateFloat",
      "add",        "sub",         "compareTo", "isGreaterThan", "isLessThan",
      "major",      "minor",       "patch",     "isSorted",      "sum",
      "min",        "max",         "find",      "findAll"};
  if (member) return std::find(std::begin(members), std::end(members), name) != std::end(members);
  return std::find(std::begin(global), std::end(global), name) != std::end(global);
}

bool is_known_unsupported(std::string_view name) {
  static constexpr std::string_view names[] = {"timestamp",
                                               "duration",
                                               "getFullYear",
                                               "getMonth",
                                               "getDate",
                                               "getDayOfMonth",
                                               "getDayOfWeek",
                                               "getDayOfYear",
                                               "getHours",
                                               "getMinutes",
                                               "getSeconds",
                                               "getMilliseconds",
                                               "optional.of",
                                               "optional.ofNonZeroValue",
                                               "optional.none",
                                               "hasValue",
                                               "value",
                                               "orValue",
                                               "or",
                                               "format",
                                               "math.greatest",
                                               "math.least",
                                               "math.ceil",
                                               "math.floor",
                                               "math.round",
                                               "math.abs",
                                               "math.sign",
                                               "math.isNaN",
                                               "math.isInf",
                                               "math.isFinite",
                                               "math.bitAnd",
                                               "math.bitOr",
                                               "math.bitXor",
                                               "math.bitNot",
                                               "math.bitShiftLeft",
                                               "math.bitShiftRight",
                                               "math.trunc",
                                               "base64.encode",
                                               "base64.decode",
                                               "url",
                                               "isURL",
                                               "ip",
                                               "isIP",
                                               "cidr",
                                               "isCIDR",
                                               "lists.range",
                                               "sort",
                                               "sortBy",
                                               "distinct",
                                               "flatten",
                                               "slice",
                                               "first",
                                               "last",
                                               "getScheme",
                                               "getHost",
                                               "proto.getExt",
                                               "proto.hasExt",
                                               "cel.block",
                                               "cel.index",
                                               "cel.iterVar",
                                               "cel.accuVar",
                                               "transformList",
                                               "transformMap",
                                               "existsOne"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Value call_builtin(std::string_view name, const Value* target, std::span<const Value> args,
                   Budget& budget) {
  bool handled = false;
  Value v = call_standard(name, target, args, budget, handled);
  if (handled) return v;
  v = call_strings(name, target, args, budget, handled);
  if (handled) return v;
  v = call_kubernetes(name, target, args, budget, handled);
  if (handled) return v;
  return no_overload(name, target, args);
}

}  // namespace nodetopo::fit::cel
