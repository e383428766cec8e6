// Recursive-descent parser of the CEL grammar (cel-spec langdef.md):
//
//   Expr           = ConditionalOr ["?" ConditionalOr ":" Expr]
//   ConditionalOr  = [ConditionalOr "||"] ConditionalAnd
//   ConditionalAnd = [ConditionalAnd "&&"] Relation
//   Relation       = [Relation Relop] Addition        Relop = < <= >= > == != in
//   Addition       = [Addition ("+" | "-")] Multiplication
//   Multiplication = [Multiplication ("*" | "/" | "%")] Unary
//   Unary          = Member | "!" {"!"} Member | "-" {"-"} Member
//   Member         = Primary | Member "." IDENT ["(" [ExprList] ")"] | Member "[" Expr "]"
//   Primary        = ["."] IDENT ["(" [ExprList] ")"] | "(" Expr ")" | "[" [ExprList] [","] "]"
//                  | "{" [MapInits] [","] "}" | ["."] IDENT {"." IDENT} "{" [FieldInits] "}"
//                  | LITERAL
//
// Macros (has, all, exists, exists_one, map, filter, cel.bind) become Comprehension nodes.
// Message construction and the optional syntax parse as CEL but are refused as not supported.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ast.hpp"
#include "lexer.hpp"

namespace nodetopo::fit::cel {

namespace {

constexpr int kMaxDepth = 250;  // nesting bound, like cel-go's default parser recursion limit

struct ParseFailure {
  std::string message;
  int offset;
};

bool reserved(std::string_view id) {
  static constexpr std::string_view words[] = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",    "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while", "in"};
  for (auto w : words)
    if (w == id) return true;
  return false;
}

std::unique_ptr<Expr> node(Expr::Kind kind, int offset) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->offset = offset;
  return e;
}

std::unique_ptr<Expr> call(std::string fn, int offset, std::unique_ptr<Expr> a,
                           std::unique_ptr<Expr> b = nullptr, std::unique_ptr<Expr> c = nullptr) {
  auto e = node(Expr::Kind::kCall, offset);
  e->name = std::move(fn);
  e->args.push_back(std::move(a));
  if (b) e->args.push_back(std::move(b));
  if (c) e->args.push_back(std::move(c));
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  std::unique_ptr<Expr> parse_all() {
    auto e = expr();
    if (cur().kind != Token::Kind::kEnd) fail("unexpected '" + cur().text + "'");
    return e;
  }

 private:
  const Token& cur() const { return t_[i_]; }
  const Token& ahead(std::size_t n) const { return t_[std::min(i_ + n, t_.size() - 1)]; }
  bool is(std::string_view punct) const {
    return cur().kind == Token::Kind::kPunct && cur().text == punct;
  }
  [[noreturn]] void fail(const std::string& message) const { fail_at(message, cur().offset); }
  [[noreturn]] static void fail_at(const std::string& message, int offset) {
    throw ParseFailure{message, offset};
  }
  void expect(std::string_view punct) {
    if (!is(punct)) {
      fail("expected '" + std::string(punct) + "'" +
           (cur().kind == Token::Kind::kEnd ? " at end of input" : ", found '" + cur().text + "'"));
    }
    ++i_;
  }
  void check_token() const {
    if (cur().kind == Token::Kind::kError) fail(cur().text);
  }

  struct DepthGuard {
    explicit DepthGuard(Parser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.fail("expression nests too deeply (limit 250)");
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    Parser& p_;
  };

  std::unique_ptr<Expr> expr() {
    DepthGuard guard(*this);
    auto cond = conditional_or();
    if (!is("?")) return cond;
    const int at = cur().offset;
    ++i_;
    auto yes = conditional_or();
    expect(":");
    auto no = expr();
    return call("_?_:_", at, std::move(cond), std::move(yes), std::move(no));
  }

  std::unique_ptr<Expr> conditional_or() {
    auto left = conditional_and();
    while (is("||")) {
      const int at = cur().offset;
      ++i_;
      left = call("_||_", at, std::move(left), conditional_and());
    }
    return left;
  }

  std::unique_ptr<Expr> conditional_and() {
    auto left = relation();
    while (is("&&")) {
      const int at = cur().offset;
      ++i_;
      left = call("_&&_", at, std::move(left), relation());
    }
    return left;
  }

  std::unique_ptr<Expr> relation() {
    auto left = addition();
    while (true) {
      std::string op;
      if (is("<") || is("<=") || is(">") || is(">=") || is("==") || is("!=")) {
        op = "_" + cur().text + "_";
      } else if (cur().kind == Token::Kind::kIdent && cur().text == "in") {
        op = "@in";
      } else {
        return left;
      }
      const int at = cur().offset;
      ++i_;
      DepthGuard guard(*this);
      left = call(op, at, std::move(left), addition());
    }
  }

  std::unique_ptr<Expr> addition() {
    auto left = multiplication();
    while (is("+") || is("-")) {
      const std::string op = "_" + cur().text + "_";
      const int at = cur().offset;
      ++i_;
      DepthGuard guard(*this);
      left = call(op, at, std::move(left), multiplication());
    }
    return left;
  }

  std::unique_ptr<Expr> multiplication() {
    auto left = unary();
    while (is("*") || is("/") || is("%")) {
      const std::string op = "_" + cur().text + "_";
      const int at = cur().offset;
      ++i_;
      DepthGuard guard(*this);
      left = call(op, at, std::move(left), unary());
    }
    return left;
  }

  std::unique_ptr<Expr> unary() {
    DepthGuard guard(*this);
    if (is("!")) {
      // As cel-go: an even run of '!' cancels out, an odd run is one negation.
      std::vector<int> at;
      while (is("!")) {
        at.push_back(cur().offset);
        ++i_;
      }
      auto e = member();
      if (at.size() % 2 == 1) e = call("!_", at.front(), std::move(e));
      return e;
    }
    if (is("-")) {
      // As cel-go: an even run of '-' cancels out; an odd run is one negation, folded into a
      // numeric literal right after it (so -9223372036854775808 is representable).
      std::vector<int> at;
      while (is("-")) {
        at.push_back(cur().offset);
        ++i_;
      }
      if (at.size() % 2 == 0) return member();
      if (cur().kind == Token::Kind::kInt || cur().kind == Token::Kind::kDouble) {
        return member(/*negate_literal=*/true);
      }
      return call("-_", at.front(), member());
    }
    return member();
  }

  std::unique_ptr<Expr> member(bool negate_literal = false) {
    auto e = primary(negate_literal);
    while (true) {
      check_token();
      if (is(".")) {
        ++i_;
        if (is("?")) fail("optional field selection (.?) is not supported");
        check_token();
        // Reserved words are valid field and method names; `name` in backquotes selects a
        // field whose name is not an identifier (cel-spec's quoted field access).
        const bool quoted = cur().kind == Token::Kind::kQuotedIdent;
        if (cur().kind != Token::Kind::kIdent && !quoted) fail("expected a field name after '.'");
        const std::string field = cur().text;
        const int at = cur().offset;
        ++i_;
        if (is("(") && !quoted) {
          ++i_;
          auto args = expr_list(")");
          e = member_call(std::move(e), field, at, std::move(args));
        } else {
          auto s = node(Expr::Kind::kSelect, at);
          s->name = field;
          s->target = std::move(e);
          e = std::move(s);
        }
      } else if (is("[")) {
        const int at = cur().offset;
        ++i_;
        if (is("?")) fail("optional index ([?]) is not supported");
        auto index = expr();
        expect("]");
        e = call("_[_]", at, std::move(e), std::move(index));
      } else if (is("{") && is_qualified_name(*e)) {
        fail_at("message construction (" + qualified_name(*e) + "{...}) is not supported",
                e->offset);
      } else {
        return e;
      }
    }
  }

  static bool is_qualified_name(const Expr& e) {
    if (e.kind == Expr::Kind::kIdent) return true;
    return e.kind == Expr::Kind::kSelect && !e.test_only && e.target &&
           is_qualified_name(*e.target);
  }
  static std::string qualified_name(const Expr& e) {
    if (e.kind == Expr::Kind::kIdent) return e.name;
    return qualified_name(*e.target) + "." + e.name;
  }

  std::vector<std::unique_ptr<Expr>> expr_list(std::string_view close) {
    std::vector<std::unique_ptr<Expr>> out;
    if (is(close)) {
      ++i_;
      return out;
    }
    while (true) {
      if (is("?")) fail("optional list elements ([?x]) are not supported");
      out.push_back(expr());
      if (is(",")) {
        ++i_;
        if (is(close) && close == "]") {  // trailing comma allowed in list literals
          ++i_;
          return out;
        }
        continue;
      }
      expect(close);
      return out;
    }
  }

  std::unique_ptr<Expr> member_call(std::unique_ptr<Expr> target, const std::string& fn, int at,
                                    std::vector<std::unique_ptr<Expr>> args) {
    // Receiver-style macros.
    const bool two = args.size() == 2;
    if ((fn == "all" || fn == "exists" || fn == "exists_one" || fn == "filter") && two) {
      return comprehension(fn == "all"          ? MacroKind::kAll
                           : fn == "exists"     ? MacroKind::kExists
                           : fn == "exists_one" ? MacroKind::kExistsOne
                                                : MacroKind::kFilter,
                           std::move(target), std::move(args), at);
    }
    if (fn == "map" && (two || args.size() == 3)) {
      return comprehension(two ? MacroKind::kMap : MacroKind::kMapFilter, std::move(target),
                           std::move(args), at);
    }
    if ((fn == "all" || fn == "exists" || fn == "existsOne" || fn == "exists_one" ||
         fn == "transformList" || fn == "transformMap") &&
        args.size() == 3) {
      fail_at("two-variable comprehensions (" + fn + "(k, v, ...)) are not supported", at);
    }
    if (fn == "bind" && target->kind == Expr::Kind::kIdent && target->name == "cel") {
      if (args.size() != 3) fail_at("cel.bind() takes three arguments", at);
      if (args[0]->kind != Expr::Kind::kIdent)
        fail_at("cel.bind(): first argument must be a name", at);
      auto e = node(Expr::Kind::kComprehension, at);
      e->macro = MacroKind::kBind;
      e->name = args[0]->name;
      e->target = std::move(args[1]);
      e->args.push_back(std::move(args[2]));
      return e;
    }
    if (target->kind == Expr::Kind::kIdent && target->name == "cel" && fn == "block") {
      fail_at("cel.block() is not supported", at);
    }
    auto e = node(Expr::Kind::kCall, at);
    e->name = fn;
    e->target = std::move(target);
    e->args = std::move(args);
    return e;
  }

  std::unique_ptr<Expr> comprehension(MacroKind kind, std::unique_ptr<Expr> range,
                                      std::vector<std::unique_ptr<Expr>> args, int at) {
    if (args[0]->kind != Expr::Kind::kIdent) {
      fail_at("the first argument of a macro must be a simple name", args[0]->offset);
    }
    auto e = node(Expr::Kind::kComprehension, at);
    e->macro = kind;
    e->name = args[0]->name;
    e->target = std::move(range);
    for (std::size_t k = 1; k < args.size(); ++k)
      e->args.push_back(std::move(args[k]));
    return e;
  }

  std::unique_ptr<Expr> literal_int(const Token& tok, bool negative) {
    auto e = node(Expr::Kind::kLiteral, tok.offset);
    const bool hex = tok.text.size() > 2 && (tok.text[1] == 'x' || tok.text[1] == 'X');
    const std::string digits = hex ? tok.text.substr(2) : tok.text;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(digits.c_str(), &end, hex ? 16 : 10);
    if (errno == ERANGE || *end != '\0') fail_at("integer literal out of range", tok.offset);
    if (tok.kind == Token::Kind::kUint) {
      e->literal = Value::uinteger(v);
      return e;
    }
    constexpr unsigned long long kMaxPos = 9223372036854775807ULL;
    if (negative) {
      if (v > kMaxPos + 1) fail_at("integer literal out of range", tok.offset);
      e->literal = Value::integer(v == kMaxPos + 1 ? INT64_MIN : -static_cast<std::int64_t>(v));
    } else {
      if (v > kMaxPos) fail_at("integer literal out of range", tok.offset);
      e->literal = Value::integer(static_cast<std::int64_t>(v));
    }
    return e;
  }

  std::unique_ptr<Expr> primary(bool negate_literal) {
    DepthGuard guard(*this);
    check_token();
    const Token tok = cur();
    switch (tok.kind) {
      case Token::Kind::kInt:
      case Token::Kind::kUint:
        ++i_;
        return literal_int(tok, negate_literal);
      case Token::Kind::kDouble: {
        ++i_;
        auto e = node(Expr::Kind::kLiteral, tok.offset);
        const double d = std::strtod(tok.text.c_str(), nullptr);
        e->literal = Value::dbl(negate_literal ? -d : d);
        return e;
      }
      case Token::Kind::kString: {
        ++i_;
        auto e = node(Expr::Kind::kLiteral, tok.offset);
        e->literal = Value::string(tok.text);
        if (!valid_utf8(tok.text)) fail_at("string literal is not valid UTF-8", tok.offset);
        return e;
      }
      case Token::Kind::kBytes: {
        ++i_;
        auto e = node(Expr::Kind::kLiteral, tok.offset);
        e->literal = Value::bytes(tok.text);
        return e;
      }
      case Token::Kind::kEnd:
        fail("unexpected end of input");
      case Token::Kind::kError:
        fail(tok.text);
      case Token::Kind::kIdent:
        return ident_or_call(false);
      case Token::Kind::kQuotedIdent:
        fail("a quoted field name must follow a '.'");
      case Token::Kind::kPunct:
        break;
    }
    if (is(".")) {  // a name rooted at the top scope: .a.b
      ++i_;
      if (cur().kind != Token::Kind::kIdent) fail("expected a name after '.'");
      return ident_or_call(true);
    }
    if (is("(")) {
      ++i_;
      auto e = expr();
      expect(")");
      return e;
    }
    if (is("[")) {
      ++i_;
      auto e = node(Expr::Kind::kList, tok.offset);
      e->args = expr_list("]");
      return e;
    }
    if (is("{")) {
      ++i_;
      auto e = node(Expr::Kind::kMap, tok.offset);
      while (!is("}")) {
        if (is("?")) fail("optional map entries ({?k: v}) are not supported");
        e->args.push_back(expr());
        expect(":");
        e->args.push_back(expr());
        if (is(",")) {
          ++i_;
          continue;
        }
        if (!is("}")) fail("expected ',' or '}' in a map literal");
      }
      ++i_;
      return e;
    }
    fail("unexpected '" + tok.text + "'");
  }

  std::unique_ptr<Expr> ident_or_call(bool rooted) {
    const Token tok = cur();
    if (reserved(tok.text)) fail("reserved identifier '" + tok.text + "'");
    ++i_;
    if (!rooted) {
      if (tok.text == "true" || tok.text == "false") {
        auto e = node(Expr::Kind::kLiteral, tok.offset);
        e->literal = Value::boolean(tok.text == "true");
        return e;
      }
      if (tok.text == "null") {
        auto e = node(Expr::Kind::kLiteral, tok.offset);
        return e;
      }
    }
    if (is("(")) {
      ++i_;
      auto args = expr_list(")");
      if (tok.text == "has" && !rooted) {
        if (args.size() != 1 || args[0]->kind != Expr::Kind::kSelect) {
          fail_at("has() takes one field selection, such as has(a.b)", tok.offset);
        }
        args[0]->test_only = true;
        return std::move(args[0]);
      }
      auto e = node(Expr::Kind::kCall, tok.offset);
      e->name = tok.text;
      e->args = std::move(args);
      return e;
    }
    auto e = node(Expr::Kind::kIdent, tok.offset);
    e->name = tok.text;
    return e;
  }

  static bool valid_utf8(const std::string& s) {
    std::size_t i = 0;
    while (i < s.size()) {
      const auto c = static_cast<unsigned char>(s[i]);
      int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
      if (n < 0 || i + static_cast<std::size_t>(n) >= s.size() + (n == 0 ? 1 : 0)) {
        if (n != 0) return false;
      }
      for (int k = 1; k <= n; ++k) {
        if (i + static_cast<std::size_t>(k) >= s.size() ||
            (static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]) >> 6) != 2) {
          return false;
        }
      }
      i += static_cast<std::size_t>(n) + 1;
    }
    return true;
  }

  std::vector<Token> t_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

ParseOutcome parse(std::string_view source) {
  ParseOutcome out;
  try {
    Parser p(lex(source));
    out.root = p.parse_all();
  } catch (const ParseFailure& f) {
    out.root.reset();
    out.error = f.message;
    out.error_offset = f.offset;
  }
  return out;
}

}  // namespace nodetopo::fit::cel
