// CEL runtime values: the dynamic types of the Common Expression Language (null, bool, int, uint,
// double, string, bytes, list, map, type) plus the two opaque types of the Kubernetes CEL
// libraries that DRA selectors use (Quantity, Semver), and the error value.
//
// Errors are values, not exceptions, because CEL's logical operators absorb them: `a || b` is
// true when either side is true even if the other is an error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nodetopo/fit/quantity.hpp>
#include <nodetopo/fit/semver.hpp>

namespace nodetopo::fit::cel {

class Value;
using List = std::vector<Value>;

/// A CEL map. Keys are compared with CEL equality (1 and 1u are the same key), so the entries
/// are a vector looked up linearly: selector maps hold at most 32 entries.
struct Map {
  std::vector<std::pair<Value, Value>> entries;
  /// A missing key reads as an empty map instead of a "no such key" error: the DRA
  /// `device.attributes` and `device.capacity` maps behave so for unknown domains.
  bool missing_is_empty_map = false;
};

class Value {
 public:
  enum class Kind : std::uint8_t {
    kNull,
    kBool,
    kInt,
    kUint,
    kDouble,
    kString,
    kBytes,
    kList,
    kMap,
    kType,
    kQuantity,
    kSemver,
    kError,
  };

  Value() = default;  ///< null
  static Value null() { return {}; }
  static Value boolean(bool v);
  static Value integer(std::int64_t v);
  static Value uinteger(std::uint64_t v);
  static Value dbl(double v);
  static Value string(std::string v);
  static Value bytes(std::string v);
  static Value list(List items);
  static Value map(Map m);
  static Value type(std::string name);
  static Value quantity(Quantity q);
  static Value semver(Semver v);
  static Value error(std::string message);

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] bool is_error() const { return kind_ == Kind::kError; }
  [[nodiscard]] bool as_bool() const { return std::get<bool>(data_); }
  [[nodiscard]] std::int64_t as_int() const { return std::get<std::int64_t>(data_); }
  [[nodiscard]] std::uint64_t as_uint() const { return std::get<std::uint64_t>(data_); }
  [[nodiscard]] double as_double() const { return std::get<double>(data_); }
  /// string, bytes, type name or error message
  [[nodiscard]] const std::string& text() const { return std::get<std::string>(data_); }
  [[nodiscard]] const List& as_list() const {
    return *std::get<std::shared_ptr<const List>>(data_);
  }
  [[nodiscard]] const Map& as_map() const { return *std::get<std::shared_ptr<const Map>>(data_); }
  [[nodiscard]] const Quantity& as_quantity() const { return std::get<Quantity>(data_); }
  [[nodiscard]] const Semver& as_semver() const { return std::get<Semver>(data_); }

  /// The CEL type name: "int", "string", "list", "kubernetes.Quantity", ...
  [[nodiscard]] std::string type_name() const;
  /// A readable rendering for messages and test output (strings quoted).
  [[nodiscard]] std::string debug_string() const;

 private:
  Kind kind_ = Kind::kNull;
  std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string,
               std::shared_ptr<const List>, std::shared_ptr<const Map>, Quantity, Semver>
      data_;
};

/// CEL equality (`==`): numbers compare by value across int, uint and double, lists and maps
/// element-wise, values of different types are unequal. An error operand is not handled here.
bool equal(const Value& a, const Value& b);

/// Map lookup with CEL key equality; nullptr when absent.
const Value* map_find(const Map& map, const Value& key);

}  // namespace nodetopo::fit::cel
