// Internal: the function table shared by the evaluator and the compile-time check.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <nodetopo/fit/cel_value.hpp>

namespace nodetopo::fit::cel {

/// Thrown when an evaluation spends its cost limit; caught by Program::evaluate.
struct CostExceeded {};

struct Budget {
  std::uint64_t spent = 0;
  std::uint64_t limit = 0;
  void charge(std::uint64_t units) {
    spent += units;
    if (spent > limit) throw CostExceeded{};
  }
};

/// Whether `name` is a function (global, or member when `member`) this implementation has.
bool is_builtin(std::string_view name, bool member);
/// Functions of CEL or of the Kubernetes libraries that this implementation lacks: compile
/// refuses them with "not supported" rather than "undeclared".
bool is_known_unsupported(std::string_view name);

/// Calls a strict function (its arguments already evaluated, no error among them). `target` is
/// the receiver of a member call, or nullptr.
Value call_builtin(std::string_view name, const Value* target, std::span<const Value> args,
                   Budget& budget);

/// Go's strconv.FormatFloat(v, 'g', -1, 64), which cel-go's string(double) uses.
std::string format_double(double v);

Value no_overload(std::string_view name, const Value* target, std::span<const Value> args);

}  // namespace nodetopo::fit::cel
