#include "profile/profile_yaml.hpp"

#include <algorithm>
#include <vector>

#include <nodetopo/base/str_cat.hpp>
#include <nodetopo/base/strings.hpp>

namespace nodetopo::mock::detail {

namespace {

// The widths a PCIe link can train to (PCIe base spec, Link Capabilities "Maximum Link Width").
constexpr std::uint32_t kWidths[] = {1, 2, 4, 8, 12, 16, 32};

bool valid_width(std::uint64_t w) {
  return std::find(std::begin(kWidths), std::end(kWidths), w) != std::end(kWidths);
}

}  // namespace

std::optional<std::uint32_t> parse_pcie_speed(std::string_view text) {
  std::string t = ascii_lower(trim(text));
  if (t.starts_with("gen")) {
    auto gen = parse_number(std::string_view(t).substr(3));
    static constexpr std::uint32_t kByGen[] = {0, 2500, 5000, 8000, 16000, 32000, 64000};
    if (!gen || *gen < 1 || *gen > 6) return std::nullopt;
    return kByGen[*gen];
  }
  if (t.ends_with("gt/s")) t = std::string(trim(std::string_view(t).substr(0, t.size() - 4)));
  if (t == "2.5") return 2500;
  if (t == "5" || t == "5.0") return 5000;
  if (t == "8" || t == "8.0") return 8000;
  if (t == "16" || t == "16.0") return 16000;
  if (t == "32" || t == "32.0") return 32000;
  if (t == "64" || t == "64.0") return 64000;
  return std::nullopt;
}

std::optional<PcieLink> read_link(Reader& r, const YAML::Node& n, const std::string& path) {
  if (yaml::is_absent(n)) return std::nullopt;
  PcieLink link;
  const std::string help =
      " (expected e.g. \"gen5 x16\", \"32 GT/s x16\" or {speed: 32 GT/s, width: 16}; speeds 2.5, "
      "5, 8, 16, 32, 64 GT/s; widths 1, 2, 4, 8, 12, 16, 32)";
  if (n.IsMap()) {
    Fields f(r, n, path);
    YAML::Node speed = f.take("speed");
    YAML::Node width = f.take("width");
    f.done();
    if (auto s = yaml::read_scalar(r, speed, f.path("speed"), "a speed")) {
      auto mts = parse_pcie_speed(*s);
      if (!mts) {
        r.fail(speed, f.path("speed"), "'" + *s + "' is not a PCIe speed" + help);
        return std::nullopt;
      }
      link.speed_mts = *mts;
    }
    if (auto w = read_uint(r, width, f.path("width"), 32, 1)) {
      if (!valid_width(*w)) {
        r.fail(width, f.path("width"),
               str_cat('x', std::to_string(*w), " is not a PCIe width", help));
        return std::nullopt;
      }
      link.width = static_cast<std::uint32_t>(*w);
    }
    return r.failed() ? std::nullopt : std::optional<PcieLink>(link);
  }
  auto text = yaml::read_scalar(r, n, path, "a PCIe link");
  if (!text) return std::nullopt;
  // Split into words; the width word starts with 'x'.
  std::string t = ascii_lower(*text);
  std::vector<std::string> words;
  std::size_t pos = 0;
  while (pos < t.size()) {
    while (pos < t.size() && t[pos] == ' ')
      ++pos;
    std::size_t end = t.find(' ', pos);
    if (end == std::string::npos) end = t.size();
    if (end > pos) words.push_back(t.substr(pos, end - pos));
    pos = end;
  }
  // "32 gt/s" arrives as two words: glue the unit back.
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i + 1] == "gt/s") {
      words[i] += "gt/s";
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    }
  }
  bool ok = !words.empty() && words.size() <= 2;
  for (const std::string& w : words) {
    if (!ok) break;
    if (w.size() > 1 && w[0] == 'x') {
      auto width = parse_number(std::string_view(w).substr(1));
      ok = width && valid_width(*width) && link.width == 0;
      if (ok) link.width = static_cast<std::uint32_t>(*width);
    } else {
      auto mts = parse_pcie_speed(w);
      ok = mts && link.speed_mts == 0;
      if (ok) link.speed_mts = *mts;
    }
  }
  if (!ok) {
    r.fail(n, path, "'" + *text + "' is not a PCIe link" + help);
    return std::nullopt;
  }
  return link;
}

std::optional<DevFn> read_devfn(Reader& r, const YAML::Node& n, const std::string& path) {
  auto text = yaml::read_scalar(r, n, path, "a device.function such as \"01.0\"");
  if (!text) return std::nullopt;
  const std::string_view t = trim(*text);
  const std::size_t dot = t.find('.');
  std::optional<std::uint64_t> dev;
  std::optional<std::uint64_t> fn;
  if (dot != std::string_view::npos && dot > 0 && dot <= 2 && t.size() == dot + 2) {
    // Hex like lspci prints it ("1f.3"), without a 0x prefix.
    dev = parse_number("0x" + std::string(t.substr(0, dot)));
    fn = parse_number(t.substr(dot + 1));
  }
  if (!dev || !fn || *dev > 31 || *fn > 7) {
    r.fail(n, path,
           "'" + *text +
               "' is not a device.function (hex device 00-1f, function 0-7, e.g. "
               "\"01.0\")");
    return std::nullopt;
  }
  return DevFn{static_cast<std::uint8_t>(*dev), static_cast<std::uint8_t>(*fn)};
}

}  // namespace nodetopo::mock::detail
