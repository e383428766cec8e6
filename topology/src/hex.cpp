#include <array>

#include <nodetopo/topology/hex.hpp>

namespace nodetopo {

void append_hex(std::string& out, std::uint64_t value, int width) {
  // Written by hand: snprintf's format parsing dominated the cost of formatting thousands of IDs.
  static constexpr char kDigits[] = "0123456789abcdef";
  std::array<char, 16> buf{};
  int n = 0;
  do {
    buf[static_cast<std::size_t>(n++)] = kDigits[value & 0xf];
    value >>= 4;
  } while (value != 0 && n < 16);
  for (int i = n; i < width; ++i)
    out += '0';
  while (n > 0)
    out += buf[static_cast<std::size_t>(--n)];
}

std::string to_hex(std::uint64_t value, int width) {
  std::string out;
  append_hex(out, value, width);
  return out;
}

}  // namespace nodetopo
