// SHA-256 of a byte string, as 64 lowercase hex digits. Used for the shape fingerprint and for
// a snapshot's digest (the canonical JSON model), where two equal digests mean "nothing changed".
#pragma once

#include <string>
#include <string_view>

namespace nodetopo {

/// SHA-256 (FIPS 180-4) of `data`, 64 lowercase hex digits.
std::string sha256_hex(std::string_view data);

}  // namespace nodetopo
