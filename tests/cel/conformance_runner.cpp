// Runs cel-spec conformance tests (JSON lines from conformance_to_jsonl.js) through nodetopo's
// CEL implementation: each expression is compiled and evaluated with its bindings, and the
// result must be the expected value (same type, same value) or an error when one is expected.
// Prints every failure and a summary with the skips counted by reason; exits 1 on any failure.
//
// usage: fit_cel_conformance FILE.jsonl
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include <nodetopo/fit/cel.hpp>

namespace cel = nodetopo::fit::cel;
using Json = nlohmann::json;

namespace {

std::string base64_decode(const std::string& in) {
  static const std::string chars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0;
  int bits = -8;
  for (char c : in) {
    const auto at = chars.find(c);
    if (at == std::string::npos) continue;
    val = (val << 6) + static_cast<int>(at);
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((val >> bits) & 0xFF);
      bits -= 8;
    }
  }
  return out;
}

cel::Value decode(const Json& j) {
  if (j.contains("int")) return cel::Value::integer(std::stoll(j["int"].get<std::string>()));
  if (j.contains("uint")) return cel::Value::uinteger(std::stoull(j["uint"].get<std::string>()));
  if (j.contains("double")) {
    const std::string s = j["double"].get<std::string>();
    if (s == "NaN") return cel::Value::dbl(std::nan(""));
    if (s == "Infinity") return cel::Value::dbl(HUGE_VAL);
    if (s == "-Infinity") return cel::Value::dbl(-HUGE_VAL);
    return cel::Value::dbl(std::strtod(s.c_str(), nullptr));
  }
  if (j.contains("string")) return cel::Value::string(j["string"].get<std::string>());
  if (j.contains("bytes")) return cel::Value::bytes(base64_decode(j["bytes"].get<std::string>()));
  if (j.contains("bool")) return cel::Value::boolean(j["bool"].get<bool>());
  if (j.contains("null")) return cel::Value::null();
  if (j.contains("type")) return cel::Value::type(j["type"].get<std::string>());
  if (j.contains("list")) {
    cel::List items;
    for (const auto& e : j["list"])
      items.push_back(decode(e));
    return cel::Value::list(std::move(items));
  }
  cel::Map m;
  for (const auto& e : j["map"])
    m.entries.emplace_back(decode(e[0]), decode(e[1]));
  return cel::Value::map(std::move(m));
}

// Same type and value; NaN equals NaN here (the expected value says "NaN").
bool same(const cel::Value& a, const cel::Value& b) {
  using K = cel::Value::Kind;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::kDouble:
      if (std::isnan(a.as_double())) return std::isnan(b.as_double());
      return a.as_double() == b.as_double();
    case K::kList: {
      if (a.as_list().size() != b.as_list().size()) return false;
      for (std::size_t i = 0; i < a.as_list().size(); ++i)
        if (!same(a.as_list()[i], b.as_list()[i])) return false;
      return true;
    }
    case K::kMap: {
      if (a.as_map().entries.size() != b.as_map().entries.size()) return false;
      for (const auto& [k, v] : a.as_map().entries) {
        const cel::Value* other = cel::map_find(b.as_map(), k);
        if (other == nullptr || !same(v, *other)) return false;
      }
      return true;
    }
    default:
      return cel::equal(a, b);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fit_cel_conformance FILE.jsonl\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "cannot open " << argv[1] << "\n";
    return 2;
  }
  int passed = 0;
  int failed = 0;
  std::map<std::string, int> skipped;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    Json t;
    try {
      t = Json::parse(line);
    } catch (const Json::exception& e) {
      std::cout << "FAIL malformed input line: " << e.what() << "\n";
      ++failed;
      continue;
    }
    const std::string id = t["suite"].get<std::string>() + "/" + t["section"].get<std::string>() +
                           "/" + t["name"].get<std::string>();
    if (t.contains("skip")) {
      ++skipped[t["skip"].get<std::string>()];
      continue;
    }
    const std::string expr = t["expr"].get<std::string>();
    const bool want_error = t.contains("error");
    auto compiled = cel::Program::compile(expr);
    std::string got;
    bool ok = false;
    if (auto* err = std::get_if<cel::CompileError>(&compiled)) {
      got = "compile error: " + err->describe();
      ok = want_error;
    } else {
      cel::Activation vars;
      for (const auto& [k, v] : t["bindings"].items())
        vars[k] = decode(v);
      const cel::Value result = std::get<cel::Program>(compiled).evaluate(vars);
      got = result.debug_string();
      ok =
          want_error ? result.is_error() : (!result.is_error() && same(result, decode(t["value"])));
    }
    if (ok) {
      ++passed;
    } else {
      ++failed;
      std::cout << "FAIL " << id << "\n  expr:     " << expr << "\n  expected: "
                << (want_error ? "error (" + t["error"].get<std::string>() + ")"
                               : decode(t["value"]).debug_string())
                << "\n  got:      " << got << "\n";
    }
  }
  int skips = 0;
  for (const auto& [reason, n] : skipped)
    skips += n;
  std::cout << "passed " << passed << ", failed " << failed << ", skipped " << skips << "\n";
  for (const auto& [reason, n] : skipped)
    std::cout << "  skipped " << n << ": " << reason << "\n";
  return failed == 0 ? 0 : 1;
}
