// A CEL (Common Expression Language) implementation for DRA device selectors.
//
// compile() parses the full CEL grammar (cel-spec's langdef.md): literals of every type,
// operators, member calls, macros, qualified names, message construction and optional syntax.
// What the evaluator does not implement (message construction `T{...}`, optional syntax
// `a.?b`, protobuf types, timestamps and durations) is refused at compile time with an error
// that says "not supported", so that a selector never silently means something else.
// evaluate() runs the program over variables with CEL's semantics: errors are values that `||`,
// `&&` and `?:` absorb where CEL says so, and an evaluation budget (cost units, like cel-go's
// runtime cost limit) stops runaway expressions cleanly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <nodetopo/fit/cel_value.hpp>

namespace nodetopo::fit::cel {

struct Expr;  // the parsed tree, private to the implementation

/// A compile error: the message and the 1-based position in the source.
struct CompileError {
  std::string message;
  int line = 1;
  int column = 1;
  /// "<line>:<column>: <message>"
  [[nodiscard]] std::string describe() const;
};

struct EvalOptions {
  /// Cost units one evaluation may spend; Kubernetes' CELSelectorExpressionMaxCost is 1e6.
  std::uint64_t cost_limit = 1'000'000;
};

/// Variables visible to an expression, by (possibly dotted) name.
using Activation = std::map<std::string, Value, std::less<>>;

class Program {
 public:
  /// Parses and checks `source`; the error says where and why.
  static std::variant<Program, CompileError> compile(std::string_view source);

  /// Evaluates with the variables; the result may be an error value.
  [[nodiscard]] Value evaluate(const Activation& variables, const EvalOptions& options = {}) const;
  /// The cost the last evaluate() spent (for tests and the explanation).
  [[nodiscard]] std::uint64_t last_cost() const { return *last_cost_; }
  [[nodiscard]] const std::string& source() const { return source_; }

 private:
  std::shared_ptr<const Expr> root_;
  std::string source_;
  std::shared_ptr<std::uint64_t> last_cost_ = std::make_shared<std::uint64_t>(0);
};

}  // namespace nodetopo::fit::cel
