// Tree-walking evaluation of a parsed CEL expression: variables and scopes, the non-strict
// operators (&&, ||, ?:) with CEL's error absorption, field selection and has(), the
// comprehension macros, and the cost budget.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nodetopo/fit/cel.hpp>

#include "ast.hpp"
#include "runtime.hpp"

namespace nodetopo::fit::cel {

namespace {

const char* const kTypeNames[] = {"int",   "uint", "double", "bool",      "string",
                                  "bytes", "list", "map",    "null_type", "type"};

struct Scope {
  std::string_view name;
  const Value* value;
};

class Evaluator {
 public:
  Evaluator(const Activation& vars, Budget& budget) : vars_(vars), budget_(budget) {}

  Value eval(const Expr& e) {
    budget_.charge(1);
    switch (e.kind) {
      case Expr::Kind::kLiteral:
        return e.literal;
      case Expr::Kind::kIdent:
        return ident(e.name);
      case Expr::Kind::kSelect:
        return select(e);
      case Expr::Kind::kCall:
        return call(e);
      case Expr::Kind::kList: {
        List items;
        items.reserve(e.args.size());
        for (const auto& a : e.args) {
          Value v = eval(*a);
          if (v.is_error()) return v;
          items.push_back(std::move(v));
        }
        return Value::list(std::move(items));
      }
      case Expr::Kind::kMap: {
        Map m;
        for (std::size_t i = 0; i + 1 < e.args.size(); i += 2) {
          Value k = eval(*e.args[i]);
          if (k.is_error()) return k;
          Value v = eval(*e.args[i + 1]);
          if (v.is_error()) return v;
          using K = Value::Kind;
          if (k.kind() != K::kString && k.kind() != K::kInt && k.kind() != K::kUint &&
              k.kind() != K::kBool) {
            return Value::error("unsupported key type " + k.type_name() + " in a map literal");
          }
          if (map_find(m, k) != nullptr) {
            return Value::error("duplicate map key " + k.debug_string());
          }
          m.entries.emplace_back(std::move(k), std::move(v));
        }
        return Value::map(std::move(m));
      }
      case Expr::Kind::kComprehension:
        return comprehension(e);
    }
    return Value::error("internal: unknown expression");
  }

 private:
  const Value* lookup_local(std::string_view name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (it->name == name) return it->value;
    return nullptr;
  }

  Value ident(const std::string& name) {
    if (const Value* v = lookup_local(name)) return *v;
    if (auto it = vars_.find(name); it != vars_.end()) return it->second;
    for (const char* t : kTypeNames)
      if (name == t) return Value::type(name);
    return Value::error("undeclared reference to '" + name + "'");
  }

  static bool qualified(const Expr& e, std::string& out) {
    if (e.kind == Expr::Kind::kIdent) {
      out = e.name;
      return true;
    }
    if (e.kind != Expr::Kind::kSelect || e.test_only) return false;
    if (!qualified(*e.target, out)) return false;
    out += "." + e.name;
    return true;
  }

  static const Expr& root_of(const Expr& e) {
    return e.kind == Expr::Kind::kSelect ? root_of(*e.target) : e;
  }

  Value select(const Expr& e) {
    // A dotted name may be one variable ("a.b.c"); the longest declared name wins, as in cel-go.
    if (!e.test_only) {
      std::string name;
      if (qualified(e, name) && lookup_local(root_of(e).name) == nullptr) {
        if (auto it = vars_.find(name); it != vars_.end()) return it->second;
      }
    }
    Value operand = eval(*e.target);
    if (operand.is_error()) return operand;
    if (operand.kind() != Value::Kind::kMap) {
      return Value::error("type '" + operand.type_name() + "' has no field '" + e.name + "'");
    }
    const Map& m = operand.as_map();
    const Value* v = map_find(m, Value::string(e.name));
    if (e.test_only) return Value::boolean(v != nullptr);
    if (v == nullptr) {
      if (m.missing_is_empty_map) return Value::map(Map{});
      return Value::error("no such key: " + e.name);
    }
    return *v;
  }

  // Evaluates a boolean operand of && or ||: a non-bool is an error value.
  Value logic_operand(const Expr& e, const char* op) {
    Value v = eval(e);
    if (v.is_error() || v.kind() == Value::Kind::kBool) return v;
    return Value::error(std::string("no matching overload for '") + op + "' applied to " +
                        v.type_name());
  }

  Value call(const Expr& e) {
    if (e.name == "_&&_" || e.name == "_||_") {
      const bool is_and = e.name == "_&&_";
      const bool absorbing = !is_and;  // the value that decides: false for &&, true for ||
      Value left = logic_operand(*e.args[0], is_and ? "&&" : "||");
      if (!left.is_error() && left.as_bool() == absorbing) return left;
      Value right = logic_operand(*e.args[1], is_and ? "&&" : "||");
      if (!right.is_error() && right.as_bool() == absorbing) return right;
      if (left.is_error()) return left;
      if (right.is_error()) return right;
      return Value::boolean(!absorbing);
    }
    if (e.name == "_?_:_") {
      Value c = eval(*e.args[0]);
      if (c.is_error()) return c;
      if (c.kind() != Value::Kind::kBool) {
        return Value::error("no matching overload for '_?_:_' applied to " + c.type_name());
      }
      return eval(*e.args[c.as_bool() ? 1 : 2]);
    }
    Value target;
    if (e.target && e.target->kind == Expr::Kind::kIdent &&
        lookup_local(e.target->name) == nullptr && vars_.find(e.target->name) == vars_.end()) {
      // A namespaced global function: sets.contains(a, b), strings.quote(s).
      const std::string fn = e.target->name + "." + e.name;
      if (is_builtin(fn, false)) {
        std::vector<Value> args;
        for (const auto& a : e.args) {
          args.push_back(eval(*a));
          if (args.back().is_error()) return args.back();
        }
        return call_builtin(fn, nullptr, args, budget_);
      }
    }
    if (e.target) {
      target = eval(*e.target);
      if (target.is_error()) return target;
    }
    std::vector<Value> args;
    args.reserve(e.args.size());
    for (const auto& a : e.args) {
      args.push_back(eval(*a));
      if (args.back().is_error()) return args.back();
    }
    if (!is_builtin(e.name, e.target != nullptr)) {
      return Value::error("undeclared function '" + e.name + "' (unbound function)");
    }
    return call_builtin(e.name, e.target ? &target : nullptr, args, budget_);
  }

  Value comprehension(const Expr& e) {
    Value range = eval(*e.target);
    if (range.is_error()) return range;
    if (e.macro == MacroKind::kBind) {
      scopes_.push_back({e.name, &range});
      Value out = eval(*e.args[0]);
      scopes_.pop_back();
      return out;
    }
    std::vector<Value> items;
    if (range.kind() == Value::Kind::kList) {
      items = range.as_list();
    } else if (range.kind() == Value::Kind::kMap) {
      for (const auto& [k, v] : range.as_map().entries)
        items.push_back(k);
    } else {
      return Value::error("macro over " + range.type_name() +
                          ": expected a list or a map (no matching overload)");
    }
    switch (e.macro) {
      case MacroKind::kAll:
      case MacroKind::kExists: {
        // all: like a chain of &&; exists: like a chain of ||. A deciding value wins over errors.
        const bool deciding = e.macro == MacroKind::kExists;
        Value first_error;
        bool have_error = false;
        for (const Value& item : items) {
          budget_.charge(1);
          Value r = with_var(e.name, item, *e.args[0]);
          if (!r.is_error() && r.kind() != Value::Kind::kBool) {
            r = Value::error("no matching overload: macro predicate returned " + r.type_name());
          }
          if (r.is_error()) {
            if (!have_error) first_error = r;
            have_error = true;
            continue;
          }
          if (r.as_bool() == deciding) return r;
        }
        if (have_error) return first_error;
        return Value::boolean(!deciding);
      }
      case MacroKind::kExistsOne: {
        std::int64_t count = 0;
        for (const Value& item : items) {
          budget_.charge(1);
          Value r = with_var(e.name, item, *e.args[0]);
          if (r.is_error()) return r;
          if (r.kind() != Value::Kind::kBool) {
            return Value::error("no matching overload: macro predicate returned " + r.type_name());
          }
          if (r.as_bool()) ++count;
        }
        return Value::boolean(count == 1);
      }
      case MacroKind::kMap:
      case MacroKind::kMapFilter:
      case MacroKind::kFilter: {
        List out;
        for (const Value& item : items) {
          budget_.charge(1);
          if (e.macro != MacroKind::kMap) {
            Value keep = with_var(e.name, item, *e.args[0]);
            if (keep.is_error()) return keep;
            if (keep.kind() != Value::Kind::kBool) {
              return Value::error("no matching overload: filter predicate returned " +
                                  keep.type_name());
            }
            if (!keep.as_bool()) continue;
          }
          if (e.macro == MacroKind::kFilter) {
            out.push_back(item);
            continue;
          }
          Value mapped = with_var(e.name, item, *e.args.back());
          if (mapped.is_error()) return mapped;
          out.push_back(std::move(mapped));
        }
        return Value::list(std::move(out));
      }
      case MacroKind::kBind:
        break;
    }
    return Value::error("internal: unknown macro");
  }

  Value with_var(std::string_view name, const Value& v, const Expr& body) {
    scopes_.push_back({name, &v});
    Value out = eval(body);
    scopes_.pop_back();
    return out;
  }

  const Activation& vars_;
  Budget& budget_;
  std::vector<Scope> scopes_;
};

// The compile-time check: every function must exist here; known CEL features this
// implementation lacks are named as not supported.
std::string check(const Expr& e) {
  if (e.kind == Expr::Kind::kCall) {
    const bool member = e.target != nullptr;
    const bool special = e.name == "_&&_" || e.name == "_||_" || e.name == "_?_:_";
    std::string qualified_fn;
    if (member && e.target->kind == Expr::Kind::kIdent) {
      qualified_fn = e.target->name + "." + e.name;  // namespaced global: sets.contains(...)
    }
    if (!special && !is_builtin(e.name, member) &&
        !(member && !qualified_fn.empty() && is_builtin(qualified_fn, false))) {
      const std::string shown = qualified_fn.empty() ? e.name : qualified_fn;
      if (is_known_unsupported(e.name) || is_known_unsupported(shown)) {
        return "function '" + shown + "' is not supported by this CEL implementation";
      }
      // Other unknown names fail when called, as in cel-go without a type check, so that
      // `f(x) || true` stays true.
      return "";
    }
  }
  if (e.target) {
    if (auto err = check(*e.target); !err.empty()) return err;
  }
  for (const auto& a : e.args) {
    if (auto err = check(*a); !err.empty()) return err;
  }
  return "";
}

}  // namespace

std::string CompileError::describe() const {
  return std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

std::variant<Program, CompileError> Program::compile(std::string_view source) {
  ParseOutcome parsed = parse(source);
  const auto position = [&](int offset) {
    CompileError err;
    for (int i = 0; i < offset && i < static_cast<int>(source.size()); ++i) {
      if (source[static_cast<std::size_t>(i)] == '\n') {
        ++err.line;
        err.column = 1;
      } else {
        ++err.column;
      }
    }
    return err;
  };
  if (!parsed.root) {
    CompileError err = position(parsed.error_offset);
    err.message = "syntax error: " + parsed.error;
    return err;
  }
  if (std::string why = check(*parsed.root); !why.empty()) {
    CompileError err;
    err.message = why;
    return err;
  }
  Program p;
  p.root_ = std::shared_ptr<const Expr>(std::move(parsed.root));
  p.source_ = std::string(source);
  return p;
}

Value Program::evaluate(const Activation& variables, const EvalOptions& options) const {
  Budget budget{0, options.cost_limit};
  Value out;
  try {
    Evaluator ev(variables, budget);
    out = ev.eval(*root_);
  } catch (const CostExceeded&) {
    out = Value::error("operation cancelled: actual cost limit exceeded (limit " +
                       std::to_string(options.cost_limit) + ")");
  }
  *last_cost_ = budget.spent;
  return out;
}

}  // namespace nodetopo::fit::cel
