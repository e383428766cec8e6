// Kubernetes resource quantities ("80Gi", "500m", "1e3"), as resource.Quantity parses them, for
// the CEL quantity library and for consumable capacity. The value is kept exactly in units of
// 10^-9 (the finest scale Kubernetes keeps; finer digits round up, as upstream does).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nodetopo::fit {

class Quantity {
 public:
  __extension__ typedef __int128 Nanos;  // NOLINT: the exact range Ei * 10^9 needs

  Quantity() = default;
  /// Parses the canonical Kubernetes quantity syntax; nullopt when malformed.
  static std::optional<Quantity> parse(std::string_view text);
  static Quantity from_int(std::int64_t v);
  static Quantity from_nanos(Nanos n) { return with(n); }

  [[nodiscard]] Nanos nanos() const { return nanos_; }
  [[nodiscard]] bool is_integer() const;
  /// The value as int64 when it is an integer that fits.
  [[nodiscard]] std::optional<std::int64_t> as_int64() const;
  [[nodiscard]] double as_double() const;
  [[nodiscard]] int sign() const;
  /// The text it was parsed from, else a canonical decimal form.
  [[nodiscard]] std::string to_string() const;

  Quantity operator+(const Quantity& o) const { return with(nanos_ + o.nanos_); }
  Quantity operator-(const Quantity& o) const { return with(nanos_ - o.nanos_); }
  auto operator<=>(const Quantity& o) const { return nanos_ <=> o.nanos_; }
  bool operator==(const Quantity& o) const { return nanos_ == o.nanos_; }

 private:
  static Quantity with(Nanos n) {
    Quantity q;
    q.nanos_ = n;
    return q;
  }
  Nanos nanos_ = 0;
  std::string text_;
};

}  // namespace nodetopo::fit
