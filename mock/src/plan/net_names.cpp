#include "plan/net_names.hpp"

#include <array>
#include <cstdio>
#include <utility>

namespace nodetopo::mock::detail {

namespace {

// Per-rate names as the kernel prints them for 4X (or 1X) links.
constexpr std::array<std::pair<std::uint32_t, const char*>, 8> kIbRates{{
    {25, "1X EDR"},
    {40, "4X QDR"},
    {50, "1X HDR"},
    {56, "4X FDR"},
    {100, "4X EDR"},
    {200, "4X HDR"},
    {400, "4X NDR"},
    {800, "4X XDR"},
}};

}  // namespace

std::string predictable_name(const PciAddress& address, bool infiniband, bool multifunction,
                             std::optional<std::uint32_t> dev_port,
                             const std::string& phys_port_name) {
  std::string name = infiniband ? "ib" : "en";
  if (address.domain != 0) name += "P" + std::to_string(address.domain);
  name += "p" + std::to_string(address.bus) + "s" + std::to_string(address.device);
  if (multifunction) name += "f" + std::to_string(address.function);
  if (dev_port && *dev_port != 0) name += "d" + std::to_string(*dev_port);
  if (!phys_port_name.empty()) name += "n" + phys_port_name;
  return name;
}

std::string netdev_name_problem(const std::string& name) {
  if (name.empty() || name.size() > 15) return "must be 1 to 15 characters (IFNAMSIZ)";
  if (name == "." || name == "..") return "is not a valid interface name";
  for (char c : name) {
    if (c == '/' || c == ':' || c == ' ' || c == '\t' || c == '\n') {
      return "must not contain '/', ':' or whitespace";
    }
  }
  return {};
}

std::string ipoib_address(std::uint64_t port_guid) {
  // 4 bytes of flags + QPN (a fixed, plausible value), then the 16-byte GID fe80::<guid>.
  std::string out = "00:00:10:87:fe:80:00:00:00:00:00:00";
  for (int shift = 56; shift >= 0; shift -= 8) {
    std::array<char, 4> buf{};
    std::snprintf(buf.data(), buf.size(), ":%02x",
                  static_cast<unsigned>((port_guid >> shift) & 0xff));
    out += buf.data();
  }
  return out;
}

std::string infiniband_rate_name(std::uint32_t gbps) {
  for (const auto& [rate, name] : kIbRates) {
    if (rate == gbps) return name;
  }
  return {};
}

std::string infiniband_rates() {
  std::string out;
  for (const auto& [rate, name] : kIbRates) {
    if (!out.empty()) out += ", ";
    out += std::to_string(rate);
  }
  return out;
}

std::string rate_text(std::uint32_t gbps) {
  const std::string name = infiniband_rate_name(gbps);
  std::string out = std::to_string(gbps) + " Gb/sec";
  if (!name.empty()) out += " (" + name + ")";
  return out;
}

}  // namespace nodetopo::mock::detail
