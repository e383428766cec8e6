// DRA CEL selectors evaluated on one device, as k8s.io/dynamic-resource-allocation/cel does:
// the `device` variable holds `driver`, `attributes` and `capacity` (maps of domain -> name ->
// value, where a short name belongs to the driver's domain and an unknown domain reads as an
// empty map) and, with consumable capacity, `allowMultipleAllocations`. Version attributes are
// semver values, capacities quantities. A result that is not a bool is an error.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>

#include <nodetopo/fit/cel.hpp>
#include <nodetopo/fit/model.hpp>

namespace nodetopo::fit {

struct SelectorOutcome {
  bool matches = false;
  std::string error;  ///< non-empty: a compile or runtime error (the allocation stops)
  bool compile_error = false;
};

/// Compiles each distinct expression once.
class SelectorEvaluator {
 public:
  explicit SelectorEvaluator(Features features) : features_(features) {}
  SelectorOutcome evaluate(const std::string& expression, const Device& device,
                           const std::string& driver);
  /// The `device` variable for a device, for tests and the explanation.
  [[nodiscard]] cel::Value device_value(const Device& device, const std::string& driver) const;

 private:
  Features features_;
  std::map<std::string, std::variant<cel::Program, cel::CompileError>> cache_;
};

/// For a "no such key: NAME" error in `expression`, a rewrite that guards the lookup with
/// has() ("has(device.attributes[\"d\"].NAME) && ..." for the failing term), else "".
std::string suggest_has_rewrite(const std::string& expression, const std::string& error);

}  // namespace nodetopo::fit
