// SHA-256 with its compression function chosen by the caller, so that the tests compare the
// SHA extensions and the portable code on every build (sha256.cpp; the public sha256_hex()
// takes the fastest the build and the CPU have).
#pragma once

#include <string>
#include <string_view>

namespace nodetopo::detail {

/// How the 64-byte blocks are compressed. kShaNi falls back to kPortable where the build or the
/// CPU lacks the SHA extensions (x86-64 CPUs that have them, chosen at run time); both give the
/// same digest.
enum class Sha256Impl { kShaNi, kPortable };

/// sha256_hex(data) with the given compression.
std::string sha256_hex(std::string_view data, Sha256Impl impl);

}  // namespace nodetopo::detail
