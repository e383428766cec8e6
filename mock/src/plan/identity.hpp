// Deterministic identities (UUIDs, serials, MACs, GUIDs) derived from a profile's seed: the same
// profile always yields the same machine, two seeds yield two different machines.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace nodetopo::mock::detail {

/// 64-bit hash of (seed, purpose, key): FNV-1a over the three strings, then a SplitMix64 mix.
std::uint64_t identity_hash(std::string_view seed, std::string_view purpose, std::string_view key);

/// A version-4-shaped UUID text ("3f1e7a52-0b4c-4d1e-9a7f-2c8b6e4d1a00").
std::string identity_uuid(std::string_view seed, std::string_view purpose, std::string_view key);

/// `count` decimal digits.
std::string identity_digits(std::string_view seed, std::string_view purpose, std::string_view key,
                            std::size_t count);

/// Three bytes for the device-specific half of a MAC or GUID.
std::array<std::uint8_t, 3> identity_bytes3(std::string_view seed, std::string_view purpose,
                                            std::string_view key);

/// "b8:3f:d2:a1:b2:c4" from an OUI and three device bytes.
std::string format_mac(std::uint32_t oui, const std::array<std::uint8_t, 3>& tail);
/// An EUI-64 built the way ConnectX derives its GUIDs from the MAC: OUI, 03:00, device bytes.
std::uint64_t guid_from(std::uint32_t oui, const std::array<std::uint8_t, 3>& tail);
/// "b83f:d203:00a1:b2c4" (sysfs node_guid form).
std::string format_guid(std::uint64_t guid);
/// "fe80:0000:0000:0000:b83f:d203:00a1:b2c4" (link-local GID of a port).
std::string format_gid(std::uint64_t guid);

}  // namespace nodetopo::mock::detail
