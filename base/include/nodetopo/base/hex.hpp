// Lowercase hexadecimal formatting of IDs ("10de", "030200"), shared by the model and renderers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nodetopo {

/// `value` in lowercase hex, zero-padded to at least `width` digits: to_hex(0x10de, 4) == "10de",
/// to_hex(0x10000, 4) == "10000".
std::string to_hex(std::uint64_t value, int width);

/// Appends to_hex(value, width) to `out`.
void append_hex(std::string& out, std::uint64_t value, int width);

/// Length of to_hex(value, width).
std::size_t hex_size(std::uint64_t value, int width);

/// Writes to_hex(value, width) at `out`, which has room for hex_size(value, width) characters,
/// and returns the end: for renderers that format into a buffer of their own, without a
/// std::string per number.
char* write_hex(char* out, std::uint64_t value, int width);

}  // namespace nodetopo
