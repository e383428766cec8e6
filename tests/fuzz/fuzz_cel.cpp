// CEL (fit/src/cel): the input as a DRA selector, compiled and evaluated on one fixed device with
// attributes of every type (int, bool, string, version, a malformed version) and capacities, with
// every feature gate on (allowMultipleAllocations visible), as `topo fit` evaluates selectors;
// then the has() rewrite hint for its error. Also Quantity::parse and Semver::parse on the text,
// which the CEL library's quantity() and semver() call.
#include <string>

#include <nodetopo/fit/model.hpp>
#include <nodetopo/fit/quantity.hpp>
#include <nodetopo/fit/selector.hpp>
#include <nodetopo/fit/semver.hpp>

#include "fuzz_target.hpp"

namespace {

using nodetopo::fit::AttributeValue;

nodetopo::fit::Device fixed_device() {
  nodetopo::fit::Device d;
  d.name = "gpu-0";
  auto attr = [&](const std::string& name, AttributeValue::Type type, std::int64_t i, bool b,
                  std::string text) {
    AttributeValue v;
    v.type = type;
    v.int_value = i;
    v.bool_value = b;
    v.text = std::move(text);
    d.attributes[name] = v;
  };
  attr("index", AttributeValue::Type::kInt, 0, false, "");
  attr("numaNode", AttributeValue::Type::kInt, -1, false, "");
  attr("nvlinkClique", AttributeValue::Type::kInt, INT64_MAX, false, "");
  attr("mig", AttributeValue::Type::kBool, 0, true, "");
  attr("productName", AttributeValue::Type::kString, 0, false, "NVIDIA H100 80GB HBM3");
  attr("uuid", AttributeValue::Type::kString, 0, false, "GPU-3f1e7a52-0b4c-5d1e-9a7f-2c8b6e4d1a00");
  attr("driverVersion", AttributeValue::Type::kVersion, 0, false, "550.54.15");
  attr("cudaVersion", AttributeValue::Type::kVersion, 0, false, "not-a-version");
  attr("resource.kubernetes.io/pcieRoot", AttributeValue::Type::kString, 0, false, "pci0000:1a");
  attr("gpu.nvidia.com/brand", AttributeValue::Type::kString, 0, false, "Nvidia");
  d.capacity["memory"].value = *nodetopo::fit::Quantity::parse("80Gi");
  d.capacity["cores"].value = *nodetopo::fit::Quantity::parse("500m");
  d.capacity["example.com/huge"].value = *nodetopo::fit::Quantity::parse("9Ei");
  d.allow_multiple_allocations = true;
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const nodetopo::fit::Device device = fixed_device();
  const std::string expression(reinterpret_cast<const char*>(data), size);
  nodetopo::fit::SelectorEvaluator evaluator(
      nodetopo::fit::Features::for_version(nodetopo::fit::K8sVersion::k1_36));
  const auto outcome = evaluator.evaluate(expression, device, "gpu.nvidia.com");
  if (!outcome.error.empty()) {
    (void)nodetopo::fit::suggest_has_rewrite(expression, outcome.error);
  }
  (void)nodetopo::fit::Quantity::parse(expression);
  (void)nodetopo::fit::Semver::parse(expression);
  (void)nodetopo::fit::Semver::parse(expression, true);
  return 0;
}
