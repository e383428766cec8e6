// Kubernetes quantity parsing: <sign><digits>[.<digits>]<suffix>, where the suffix is a binary
// SI multiple (Ki..Ei), a decimal SI multiple (n, u, m, "", k, M, G, T, P, E) or a decimal
// exponent (e3, E-2). Values are kept as an exact count of nano-units.
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/fit/quantity.hpp>

namespace nodetopo::fit {

namespace {

using Nanos = Quantity::Nanos;

constexpr Nanos kNanoPerUnit = 1'000'000'000;
// Bound on |value| in nanos, far below the __int128 limit, so sums of many never overflow.
constexpr Nanos kLimit = static_cast<Nanos>(1'000'000'000'000'000'000) * kNanoPerUnit * 1000;

Nanos pow10(int n) {
  Nanos r = 1;
  for (int i = 0; i < n; ++i)
    r *= 10;
  return r;
}

}  // namespace

std::optional<Quantity> Quantity::parse(std::string_view text) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    negative = text[i] == '-';
    ++i;
  }
  std::string digits;  // integer and fraction digits, without the point
  int fraction_digits = 0;
  bool any = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
    digits += text[i++];
    any = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      digits += text[i++];
      ++fraction_digits;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  const std::string_view suffix = text.substr(i);
  int exponent10 = 0;  // decimal exponent applied to the digits
  Nanos binary = 1;    // binary multiplier
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    const std::string_view units = "KMGTPE";
    const auto at = units.find(suffix[0]);
    if (at == std::string_view::npos) return std::nullopt;
    for (std::size_t k = 0; k <= at; ++k)
      binary *= 1024;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
      eneg = e[0] == '-';
      e.remove_prefix(1);
    }
    if (e.empty() || e.size() > 3) return std::nullopt;
    int v = 0;
    for (char c : e) {
      if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
      v = v * 10 + (c - '0');
    }
    exponent10 = eneg ? -v : v;
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n':
        exponent10 = -9;
        break;
      case 'u':
        exponent10 = -6;
        break;
      case 'm':
        exponent10 = -3;
        break;
      case 'k':
        exponent10 = 3;
        break;
      case 'M':
        exponent10 = 6;
        break;
      case 'G':
        exponent10 = 9;
        break;
      case 'T':
        exponent10 = 12;
        break;
      case 'P':
        exponent10 = 15;
        break;
      case 'E':
        exponent10 = 18;
        break;
      default:
        return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  // value = digits * 10^(exponent10 - fraction_digits) * binary, in nanos: shift by 9 more.
  const std::size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "0" : digits.substr(first);
  if (digits.size() > 30) return std::nullopt;
  Nanos mantissa = 0;
  for (char c : digits)
    mantissa = mantissa * 10 + (c - '0');
  const int shift = exponent10 - fraction_digits + 9;
  Nanos value = 0;
  if (shift >= 0) {
    if (shift > 27 || (mantissa != 0 && mantissa > kLimit / pow10(shift))) return std::nullopt;
    value = mantissa * pow10(shift);
  } else {
    // Finer than a nano-unit: round up, as resource.Quantity does.
    const Nanos div = -shift > 30 ? pow10(30) : pow10(-shift);
    value = mantissa / div + (mantissa % div != 0 ? 1 : 0);
  }
  if (binary != 1) {
    if (value != 0 && value > kLimit / binary) return std::nullopt;
    value *= binary;
  }
  Quantity q;
  q.nanos_ = negative ? -value : value;
  q.text_ = std::string(text);
  return q;
}

Quantity Quantity::from_int(std::int64_t v) {
  Quantity q;
  q.nanos_ = static_cast<Nanos>(v) * kNanoPerUnit;
  return q;
}

bool Quantity::is_integer() const {
  return nanos_ % kNanoPerUnit == 0;
}

std::optional<std::int64_t> Quantity::as_int64() const {
  if (!is_integer()) return std::nullopt;
  const Nanos units = nanos_ / kNanoPerUnit;
  if (units > std::numeric_limits<std::int64_t>::max() ||
      units < std::numeric_limits<std::int64_t>::min()) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(units);
}

double Quantity::as_double() const {
  return static_cast<double>(nanos_) / 1e9;
}

int Quantity::sign() const {
  return nanos_ > 0 ? 1 : (nanos_ < 0 ? -1 : 0);
}

std::string Quantity::to_string() const {
  if (!text_.empty()) return text_;
  Nanos v = nanos_ < 0 ? -nanos_ : nanos_;
  if (v != 0 && v % kNanoPerUnit == 0) {
    // Computed values print in the largest binary unit that divides them: 3Gi, not 3221225472.
    static constexpr const char* kUnits[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};
    Nanos units = v / kNanoPerUnit;
    for (int k = 0; k < 6; ++k) {
      Nanos div = 1;
      for (int i = 0; i < 6 - k; ++i)
        div *= 1024;
      if (units % div == 0) {
        const Nanos n = units / div;
        std::string digits;
        Nanos m = n;
        do {
          digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
          m /= 10;
        } while (m != 0);
        return (nanos_ < 0 ? "-" : "") + digits + kUnits[k];
      }
    }
  }
  std::string s;
  Nanos units = v / kNanoPerUnit;
  Nanos frac = v % kNanoPerUnit;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(units % 10)));
    units /= 10;
  } while (units != 0);
  if (frac != 0) {
    std::string f(9, '0');
    for (int k = 8; k >= 0; --k) {
      f[static_cast<std::size_t>(k)] = static_cast<char>('0' + static_cast<int>(frac % 10));
      frac /= 10;
    }
    f.erase(f.find_last_not_of('0') + 1);
    s += "." + f;
  }
  return (nanos_ < 0 ? "-" : "") + s;
}

}  // namespace nodetopo::fit
