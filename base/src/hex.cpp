#include <algorithm>
#include <bit>

#include <nodetopo/base/hex.hpp>

namespace nodetopo {

std::size_t hex_size(std::uint64_t value, int width) {
  const auto digits =
      static_cast<std::size_t>(std::max((static_cast<int>(std::bit_width(value)) + 3) / 4, 1));
  return std::max(digits, static_cast<std::size_t>(std::max(width, 0)));
}

char* write_hex(char* out, std::uint64_t value, int width) {
  // Written by hand: snprintf's format parsing dominated the cost of formatting thousands of IDs.
  // Digits are written from the last one backwards; past the value's own digits, value is 0 and
  // the padding comes out as '0'.
  static constexpr char kDigits[] = "0123456789abcdef";
  const std::size_t size = hex_size(value, width);
  for (std::size_t i = size; i > 0; --i) {
    out[i - 1] = kDigits[value & 0xf];
    value >>= 4;
  }
  return out + size;
}

void append_hex(std::string& out, std::uint64_t value, int width) {
  const std::size_t at = out.size();
  out.resize(at + hex_size(value, width));
  write_hex(out.data() + at, value, width);
}

std::string to_hex(std::uint64_t value, int width) {
  std::string out;
  append_hex(out, value, width);
  return out;
}

}  // namespace nodetopo
