// The node's export settings: which DRA driver name to publish under and whether GPUs are
// published for fractional sharing. Read from `etc/nodetopo/export.yaml` under the host root (the
// command reads the file through SysRoot; this parser only sees its text), overridden by the
// command line. A mock host (e.g. the hami-lab profile) enables sharing by shipping that file.
//
//   # etc/nodetopo/export.yaml
//   driver: nodetopo.dev          # optional, DRA driver name and attribute domain
//   sharing:
//     mode: consumable            # none | consumable | partitionable
//     cores: 100                  # "cores" capacity of one GPU (percent of its compute)
//     memoryStep: 1Gi             # consumable: granularity of memory requests
//     partitions: [2, 4]          # partitionable: also publish halves and quarters
//   instance:                     # optional, the operator's explicit instance facts; each key
//     type: g4dn.12xlarge         # wins over the Node's labels and cloud-init
//     (instance_labels.hpp) capacityType: reserved      # on-demand | spot | reserved reservation:
//     cr-0123456789abcdef0
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/base/error.hpp>

namespace nodetopo::exporters {

/// Root-relative path of the settings file.
inline constexpr std::string_view kExportConfigPath = "etc/nodetopo/export.yaml";

enum class SharingMode : std::uint8_t {
  kNone,           ///< one device per GPU, allocated whole
  kConsumable,     ///< allowMultipleAllocations + consumable memory/cores capacity
  kPartitionable,  ///< sharedCounters per GPU + partition devices consuming them (1.35+)
};

/// "none", "consumable", "partitionable".
std::string_view to_string(SharingMode mode);
/// Inverse of to_string(); an error listing the accepted names otherwise.
Result<SharingMode> parse_sharing_mode(std::string_view text);

struct SharingConfig {
  SharingMode mode = SharingMode::kNone;
  std::uint32_t cores = 100;                           ///< 1..10000
  std::uint64_t memory_step = std::uint64_t{1} << 30;  ///< bytes, at least 1 MiB
  std::vector<std::uint32_t> partitions = {2, 4};      ///< each 2..16, ascending, unique
};

struct ExportConfig {
  std::optional<std::string> driver;
  std::optional<SharingConfig> sharing;  ///< absent: the file says nothing about sharing
  /// `instance:` values by label name ("instance-type", "capacity-type", "reservation"), each
  /// with its source ("etc/nodetopo/export.yaml instance.type").
  std::map<std::string, std::string> instance;
};

/// Parses the YAML text of the settings file with base's strict reader (nodetopo/base/
/// yaml_reader.hpp). Unknown or duplicate keys, wrong types and out-of-range values are errors
/// naming `source`, the line and the key ("line 3: sharing.cores: must be between 1 and 10000").
Result<ExportConfig> parse_export_config(std::string_view text, std::string_view source);

}  // namespace nodetopo::exporters
