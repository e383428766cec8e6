#include "render/image.hpp"

#include <array>
#include <cstdio>

namespace nodetopo::mock::detail {

std::string cpumask(const CpuSet& set, std::uint32_t nbits) {
  const std::uint32_t words = nbits == 0 ? 1 : (nbits + 31) / 32;
  std::vector<std::uint32_t> value(words, 0);
  for (std::uint32_t cpu : set.members()) {
    if (cpu / 32 < words) value[cpu / 32] |= 1U << (cpu % 32);
  }
  std::string out;
  for (std::uint32_t w = words; w-- > 0;) {
    std::array<char, 16> buf{};
    int digits = 8;
    if (w == words - 1 && nbits % 32 != 0) digits = static_cast<int>((nbits % 32 + 3) / 4);
    std::snprintf(buf.data(), buf.size(), "%0*x", digits, value[w]);
    if (!out.empty()) out += ',';
    out += buf.data();
  }
  return out;
}

std::string link_speed_text(std::uint32_t mts) {
  switch (mts) {
    case 2500:
      return "2.5 GT/s PCIe";
    case 5000:
      return "5.0 GT/s PCIe";
    case 8000:
      return "8.0 GT/s PCIe";
    case 16000:
      return "16.0 GT/s PCIe";
    case 32000:
      return "32.0 GT/s PCIe";
    case 64000:
      return "64.0 GT/s PCIe";
    default:
      return "Unknown";
  }
}

std::string kb_field(std::uint64_t bytes, int width) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%*llu kB", width,
                static_cast<unsigned long long>(bytes / 1024));
  return buf.data();
}

}  // namespace nodetopo::mock::detail
