// The parsed CEL tree (internal). Macros are expanded at parse time into Comprehension nodes, as
// cel-spec describes, but keep their macro kind so the evaluator can apply each macro's error
// rules directly.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nodetopo/fit/cel_value.hpp>

namespace nodetopo::fit::cel {

enum class MacroKind : std::uint8_t { kAll, kExists, kExistsOne, kMap, kMapFilter, kFilter, kBind };

struct Expr {
  enum class Kind : std::uint8_t { kLiteral, kIdent, kSelect, kCall, kList, kMap, kComprehension };
  Kind kind = Kind::kLiteral;
  int offset = 0;  ///< byte offset in the source
  Value literal;
  /// ident name, selected field, function name ("_+_" for operators), or iteration variable
  std::string name;
  bool test_only = false;        ///< has(a.b)
  std::unique_ptr<Expr> target;  ///< select operand, receiver of a member call, range
  /// call arguments; list elements; map keys and values interleaved; macro predicate/transform
  std::vector<std::unique_ptr<Expr>> args;
  MacroKind macro = MacroKind::kAll;
};

struct ParseOutcome {
  std::unique_ptr<Expr> root;
  std::string error;
  int error_offset = 0;
};

ParseOutcome parse(std::string_view source);

}  // namespace nodetopo::fit::cel
