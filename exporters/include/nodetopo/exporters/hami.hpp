// The Node annotations and the extended-resource count HAMi (github.com/Project-HAMi/HAMi) reads
// for NVIDIA GPUs, rendered from the discovered topology, so that HAMi's scheduler works on a node
// where HAMi's own device plugin does not run (the no-GPU lab with a mock host, docs/hami.md).
//
// Format followed: HAMi v2.10.0 (commit 4707fb02c91c, pkg/device/devices.go DeviceInfo and
// MarshalNodeDevices; pkg/device/nvidia/calculate_score.go and links.go for the pair score;
// pkg/device-plugin/nvidiadevice/nvinternal/plugin/register.go for how the device plugin fills
// the fields). What HAMi writes, and so what this writes:
//
//   hami.io/node-nvidia-register: JSON array, one object per GPU, keys in this order and each
//     left out when it is the zero value (Go's `omitempty`): id (GPU UUID), index (NVML index),
//     count (split count), devmem (MiB x memory scaling, truncated), devcore (core scaling x 100,
//     truncated), type (NVML name, "NVIDIA-" prefixed when it does not start with "NVIDIA"),
//     numa (NUMA node, 0 when unknown), mode ("hami-core" or "mps"), health (true);
//   hami.io/node-nvidia-score: JSON array of {"uuid": id, "score": {peer id: score}} (peers in
//     Go's sorted map order), score = the PCIe class weight (single switch PIX 50, several
//     switches PXB 40, host bridge PHB 30, same NUMA node NODE 20, across sockets SYS 10) plus
//     100 per bonded NVLink (1..18; more reads as none, as in HAMi);
//   status.capacity/allocatable[nvidia.com/gpu]: GPUs x split count (HAMi's device plugin
//     advertises split-count virtual devices per GPU; its mock device plugin requires this
//     capacity to be non-zero before it advertises memory and cores).
//
// Pure: no clock, no I/O. The handshake (hami.io/node-handshake) is a protocol with the
// scheduler, kept by the kube reconciler (kube/src/reconcile/hami.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

inline constexpr std::string_view kHamiRegisterAnnotation = "hami.io/node-nvidia-register";
inline constexpr std::string_view kHamiScoreAnnotation = "hami.io/node-nvidia-score";
inline constexpr std::string_view kHamiHandshakeAnnotation = "hami.io/node-handshake";

/// What HAMi's device plugin takes from its config (deviceSplitCount, deviceMemoryScaling,
/// deviceCoreScaling, the operating mode), with its defaults.
struct HamiOptions {
  std::uint32_t split_count = 10;  ///< 1..1024
  double memory_scaling = 1.0;     ///< > 0, at most 100 (above 1: memory oversubscription)
  double core_scaling = 1.0;       ///< > 0, at most 100
  std::string mode = "hami-core";  ///< "hami-core" or "mps" (MIG is not bridged)
  std::string resource_name = "nvidia.com/gpu";
  bool score = true;  ///< also render hami.io/node-nvidia-score
  bool operator==(const HamiOptions&) const = default;
};

/// One entry of the register annotation (HAMi's DeviceInfo, the fields its device plugin sets).
struct HamiDevice {
  std::string id;  ///< GPU UUID
  std::uint32_t index = 0;
  std::int32_t count = 0;
  std::int32_t devmem = 0;  ///< MiB
  std::int32_t devcore = 0;
  std::string type;
  std::int64_t numa = 0;
  std::string mode;
  bool health = true;
  NodeIndex node = kNoNode;  ///< the accelerator in the topology (not encoded)
};

struct HamiDocuments {
  std::vector<HamiDevice> devices;  ///< NVIDIA GPUs with a UUID, by index
  std::string register_json;        ///< the hami.io/node-nvidia-register value
  std::string score_json;           ///< the hami.io/node-nvidia-score value; empty without score
  std::uint64_t gpu_count = 0;      ///< devices x split count
  /// GPUs left out (no UUID: NVML did not report one), one message each, naming the device.
  std::vector<std::string> warnings;
};

/// Checks `options` (ranges, mode, resource name); the message names the field.
[[nodiscard]] Result<void> check_hami_options(const HamiOptions& options);

/// The HAMi documents of `topology`. Errors: invalid options.
[[nodiscard]] Result<HamiDocuments> render_hami(const Topology& topology,
                                                const HamiOptions& options);

/// HAMi's pair score of two GPUs from nodetopo's relations (see the file comment).
[[nodiscard]] int hami_pair_score(const Topology& topology, NodeIndex a, NodeIndex b);

/// A JSON string as Go's encoding/json writes it (HTML-safe: <, > and & as \u003c..., U+2028
/// and U+2029 escaped), so the annotation is byte for byte what HAMi's own plugin would write.
[[nodiscard]] std::string go_json_string(std::string_view text);

}  // namespace nodetopo::exporters
