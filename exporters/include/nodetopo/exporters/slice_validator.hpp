// The project's own validator of the rules the API server enforces on ResourceSlices (and which
// the OpenAPI schema cannot express): counts, lengths, name formats, semantic versions, request
// policies, counter references and the consistency of one pool's slices. Every violation names
// the object and the field, so that a failing export says exactly what to fix.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <nodetopo/exporters/dra_types.hpp>

namespace nodetopo::exporters::dra {

// Limits of k8s.io/api resource/v1 (types.go) as of Kubernetes 1.34-1.36.
inline constexpr std::size_t kMaxDevicesPerSlice = 128;
inline constexpr std::size_t kMaxDevicesPerSliceWithTaintsOrCounters = 64;
inline constexpr std::size_t kMaxAttributesAndCapacities = 32;
inline constexpr std::size_t kMaxAttributeValueBytes = 64;
inline constexpr std::size_t kMaxDriverNameLength = 63;
inline constexpr std::size_t kMaxPoolNameLength = 253;
inline constexpr std::size_t kMaxCounterSetsPerSlice = 8;
inline constexpr std::size_t kMaxCountersPerSet = 32;
inline constexpr std::size_t kMaxCounterConsumptionsPerDevice = 2;
inline constexpr std::size_t kMaxCountersPerConsumption = 32;
inline constexpr std::size_t kMaxTaintsPerDevice = 16;
inline constexpr std::size_t kMaxValidValues = 10;
/// The API server's name generator keeps at most 58 characters of generateName and appends 5.
inline constexpr std::size_t kGenerateNameKept = 58;

struct Violation {
  std::string object;  ///< `ResourceSlice node1-nodetopo.dev-* (pool node1, slice 2 of 3)`
  std::string field;   ///< `spec.devices[3].attributes["productName"].string`
  std::string message;
  /// "object: field: message".
  [[nodiscard]] std::string describe() const;
};

/// Checks the slices of one export (all of one or more pools) for `version`. Empty when valid.
std::vector<Violation> validate_slices(std::span<const ResourceSlice> slices, K8sVersion version);

/// How violations name a slice: generateName (the API server completes it), pool and position.
std::string slice_object_name(const ResourceSlice& slice, std::size_t index_in_pool);

}  // namespace nodetopo::exporters::dra
