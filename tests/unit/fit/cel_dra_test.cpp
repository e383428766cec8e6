// The CEL implementation in the DRA environment: the `device` variable's semantics (short
// names in the driver's domain, unknown domain = empty map, unknown name = "no such key"),
// the Kubernetes quantity and semver libraries, error absorption, "not supported" compile
// errors, the cost guard and the has() rewrite hint.
#include <string>
#include <variant>

#include <gtest/gtest.h>

#include <nodetopo/fit/cel.hpp>
#include <nodetopo/fit/selector.hpp>

namespace nodetopo::fit {
namespace {

Device gpu() {
  Device d;
  d.name = "gpu-0";
  d.attributes["type"] = {AttributeValue::Type::kString, 0, false, "gpu"};
  d.attributes["resource.kubernetes.io/numaNode"] = {AttributeValue::Type::kInt, 1, false, ""};
  d.attributes["driverVersion"] = {AttributeValue::Type::kVersion, 0, false, "535.104.5"};
  d.attributes["shared"] = {AttributeValue::Type::kBool, 0, true, ""};
  d.capacity["memory"] = {*Quantity::parse("80Gi"), std::nullopt};
  return d;
}

SelectorOutcome eval(const std::string& expr, Features f = {}) {
  SelectorEvaluator e(f);
  return e.evaluate(expr, gpu(), "nodetopo.dev");
}

bool matches(const std::string& expr) {
  const SelectorOutcome o = eval(expr);
  EXPECT_EQ(o.error, "") << expr;
  return o.matches;
}

TEST(CelDra, ShortNamesBelongToTheDriverDomain) {
  EXPECT_TRUE(matches(R"(device.attributes["nodetopo.dev"].type == "gpu")"));
  EXPECT_TRUE(matches(R"(device.attributes["resource.kubernetes.io"].numaNode == 1)"));
  EXPECT_TRUE(matches(R"(device.driver == "nodetopo.dev")"));
  EXPECT_TRUE(matches(R"(device.attributes["nodetopo.dev"].shared)"));
}

TEST(CelDra, UnknownDomainIsAnEmptyMapUnknownNameIsAnError) {
  EXPECT_FALSE(matches(R"("type" in device.attributes["other.example.com"])"));
  EXPECT_TRUE(matches(R"(device.attributes["other.example.com"].size() == 0)"));
  const SelectorOutcome o = eval(R"(device.attributes["nodetopo.dev"].missing == "x")");
  EXPECT_NE(o.error.find("no such key: missing"), std::string::npos) << o.error;
  EXPECT_FALSE(matches(R"(has(device.attributes["nodetopo.dev"].missing))"));
  // || absorbs the error when the other side decides.
  EXPECT_TRUE(matches(R"(device.attributes["nodetopo.dev"].missing == "x" || true)"));
  EXPECT_FALSE(matches(R"(false && device.attributes["nodetopo.dev"].missing == "x")"));
}

TEST(CelDra, QuantityLibrary) {
  EXPECT_TRUE(matches(R"(device.capacity["nodetopo.dev"].memory.compareTo(quantity("40Gi")) > 0)"));
  EXPECT_TRUE(matches(R"(device.capacity["nodetopo.dev"].memory.isGreaterThan(quantity("80G")))"));
  EXPECT_TRUE(matches(
      R"(quantity("1.5").isLessThan(quantity("1501m")) && quantity("1k").asInteger() == 1000)"));
  EXPECT_TRUE(
      matches(R"(isQuantity("10Mi") && !isQuantity("10MB") && quantity("500m").sign() == 1)"));
  EXPECT_TRUE(matches(
      R"(quantity("1Gi").add(quantity("1Gi")) == quantity("2Gi") && quantity("2").sub(1) == quantity("1"))"));
  EXPECT_TRUE(
      matches(R"(!quantity("1.5").isInteger() && quantity("1.5").asApproximateFloat() == 1.5)"));
  EXPECT_NE(eval(R"(quantity("1.5").asInteger() == 1)").error, "");
  EXPECT_NE(eval(R"(quantity("ten") == quantity("10"))").error, "");
}

TEST(CelDra, SemverLibraryAndVersionAttributes) {
  EXPECT_TRUE(matches(
      R"(device.attributes["nodetopo.dev"].driverVersion.isGreaterThan(semver("535.0.0")))"));
  EXPECT_TRUE(matches(R"(device.attributes["nodetopo.dev"].driverVersion.major() == 535)"));
  EXPECT_TRUE(matches(
      R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0")) && semver("1.2.3").compareTo(semver("1.2.3")) == 0)"));
  EXPECT_TRUE(matches(R"(semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta")))"));
  EXPECT_TRUE(matches(R"(isSemver("1.2.3") && !isSemver("535.104.05") && isSemver("v1.2", true))"));
  EXPECT_TRUE(matches(R"(semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3)"));
  EXPECT_NE(eval(R"(semver("1.2") == semver("1.2.0"))").error, "");
}

TEST(CelDra, StringsAndRegex) {
  EXPECT_TRUE(matches(
      R"(device.attributes["nodetopo.dev"].type.startsWith("g") && "H100".lowerAscii() == "h100")"));
  EXPECT_TRUE(
      matches(R"("NVIDIA H100 80GB".matches("^NVIDIA H[0-9]+") && "a,b".split(",").size() == 2)"));
  EXPECT_NE(eval(R"("x".matches("("))").error, "");
}

TEST(CelDra, ConsumableCapacityVariable) {
  Features f;
  f.consumable_capacity = true;
  EXPECT_EQ(eval("!device.allowMultipleAllocations", f).error, "");
  EXPECT_TRUE(eval("!device.allowMultipleAllocations", f).matches);
  EXPECT_NE(eval("device.allowMultipleAllocations", Features{}).error, "");
}

TEST(CelDra, NonBoolResultIsAnError) {
  EXPECT_NE(eval(R"(device.driver)").error.find("could not be converted to bool"),
            std::string::npos);
}

TEST(CelDra, UnsupportedFeaturesFailToCompileWithAClearMessage) {
  for (const char* expr : {"timestamp('2024-01-01T00:00:00Z') > timestamp('2023-01-01T00:00:00Z')",
                           "a.?b", "Foo{x: 1}", "optional.of(1)", "[1].exists(i, v, v > 0)"}) {
    auto r = cel::Program::compile(expr);
    ASSERT_TRUE(std::holds_alternative<cel::CompileError>(r)) << expr;
    EXPECT_NE(std::get<cel::CompileError>(r).message.find("not supported"), std::string::npos)
        << expr << ": " << std::get<cel::CompileError>(r).message;
  }
  auto r = cel::Program::compile("1 +");
  ASSERT_TRUE(std::holds_alternative<cel::CompileError>(r));
  EXPECT_EQ(std::get<cel::CompileError>(r).column, 4);
}

TEST(CelDra, CostGuardStopsRunawayExpressions) {
  auto p = cel::Program::compile(
      "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, "
      "[1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, "
      "[1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))");
  ASSERT_TRUE(std::holds_alternative<cel::Program>(p));
  const cel::Value v = std::get<cel::Program>(p).evaluate({}, {.cost_limit = 10000});
  ASSERT_TRUE(v.is_error());
  EXPECT_NE(v.text().find("cost limit"), std::string::npos);
  const cel::Value ok = std::get<cel::Program>(p).evaluate({}, {.cost_limit = 100'000'000});
  ASSERT_FALSE(ok.is_error()) << ok.text();
  EXPECT_TRUE(ok.as_bool());
  // Doubling a string grows exponentially: stopped by the budget, not by memory.
  auto grow = cel::Program::compile(
      "cel.bind(s, 'xxxxxxxxxxxxxxxx', cel.bind(s, s+s+s+s+s+s+s+s, cel.bind(s, s+s+s+s+s+s+s+s, "
      "cel.bind(s, s+s+s+s+s+s+s+s, cel.bind(s, s+s+s+s+s+s+s+s, cel.bind(s, s+s+s+s+s+s+s+s, "
      "cel.bind(s, s+s+s+s+s+s+s+s, size(s))))))))");
  ASSERT_TRUE(std::holds_alternative<cel::Program>(grow));
  EXPECT_TRUE(std::get<cel::Program>(grow).evaluate({}).is_error());
}

TEST(CelDra, ParserNestingLimit) {
  std::string deep(300, '(');
  deep += "1" + std::string(300, ')');
  auto r = cel::Program::compile(deep);
  ASSERT_TRUE(std::holds_alternative<cel::CompileError>(r));
  EXPECT_NE(std::get<cel::CompileError>(r).message.find("nests too deeply"), std::string::npos);
}

TEST(CelDra, HasRewriteHint) {
  const std::string expr = R"(device.attributes["gpu.nvidia.com"].productName == "H100")";
  EXPECT_EQ(suggest_has_rewrite(expr, "no such key: productName"),
            R"(has(device.attributes["gpu.nvidia.com"].productName) && ()" + expr + ")");
  EXPECT_EQ(suggest_has_rewrite(expr, "divide by zero"), "");
}

}  // namespace
}  // namespace nodetopo::fit
