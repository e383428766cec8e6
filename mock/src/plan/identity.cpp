#include "plan/identity.hpp"

#include <cstdio>

namespace nodetopo::mock::detail {

namespace {

std::uint64_t fnv1a(std::uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  // A separator byte keeps ("ab","c") and ("a","bc") apart.
  h ^= 0xffU;
  h *= 0x100000001b3ULL;
  return h;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t identity_hash(std::string_view seed, std::string_view purpose, std::string_view key) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv1a(h, seed);
  h = fnv1a(h, purpose);
  h = fnv1a(h, key);
  return splitmix64(h);
}

std::string identity_uuid(std::string_view seed, std::string_view purpose, std::string_view key) {
  std::uint64_t hi = identity_hash(seed, purpose, key);
  std::uint64_t lo = splitmix64(hi ^ 0x5bd1e995ULL);
  hi = (hi & ~0xf000ULL) | 0x4000ULL;              // version 4
  lo = (lo & ~(0xc0ULL << 56)) | (0x80ULL << 56);  // RFC 4122 variant
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::string identity_digits(std::string_view seed, std::string_view purpose, std::string_view key,
                            std::size_t count) {
  std::string out;
  std::uint64_t h = identity_hash(seed, purpose, key);
  while (out.size() < count) {
    out.push_back(static_cast<char>('0' + h % 10));
    h /= 10;
    if (h == 0) h = splitmix64(out.size());
  }
  return out;
}

std::array<std::uint8_t, 3> identity_bytes3(std::string_view seed, std::string_view purpose,
                                            std::string_view key) {
  const std::uint64_t h = identity_hash(seed, purpose, key);
  return {static_cast<std::uint8_t>(h >> 16), static_cast<std::uint8_t>(h >> 8),
          static_cast<std::uint8_t>(h)};
}

std::string format_mac(std::uint32_t oui, const std::array<std::uint8_t, 3>& tail) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", (oui >> 16) & 0xff,
                (oui >> 8) & 0xff, oui & 0xff, tail[0], tail[1], tail[2]);
  return buf;
}

std::uint64_t guid_from(std::uint32_t oui, const std::array<std::uint8_t, 3>& tail) {
  return (std::uint64_t{oui} << 40) | (0x0300ULL << 24) | (std::uint64_t{tail[0]} << 16) |
         (std::uint64_t{tail[1]} << 8) | tail[2];
}

std::string format_guid(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%04x:%04x:%04x:%04x", static_cast<unsigned>(guid >> 48),
                static_cast<unsigned>((guid >> 32) & 0xffff),
                static_cast<unsigned>((guid >> 16) & 0xffff), static_cast<unsigned>(guid & 0xffff));
  return buf;
}

std::string format_gid(std::uint64_t guid) {
  return "fe80:0000:0000:0000:" + format_guid(guid);
}

}  // namespace nodetopo::mock::detail
