// Container Device Interface specs for prepared claims: one spec file per claim in the CDI
// directory, kind `<driver>/claim`, one CDI device per allocated device. The spec is pure data
// built from the claim's allocation and the node's devices (byte-stable for the same claim), then
// written atomically (temporary file + fsync + rename), so a runtime never reads half a spec.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::kubelet {

/// The CDI specification version our specs declare (the oldest that has what we use).
inline constexpr const char* kCdiVersion = "0.6.0";

/// One device of our driver in a claim's allocation (status.allocation.devices.results[]).
struct AllocatedDevice {
  std::string request;
  std::string pool;
  std::string device;
  std::string share_id;  ///< shareID of a device with allowMultipleAllocations (may be empty)
  std::map<std::string, std::string> consumed;  ///< consumedCapacity: name -> quantity
};

/// A device found in a vendor's CDI spec on this node (e.g. nvidia.com/gpu=GPU-…).
struct VendorCdiDevice {
  std::string id;  ///< fully qualified "nvidia.com/gpu=<name>"
};

/// Looks up vendor CDI devices for our GPUs in the given directories (*.json, *.yaml).
class VendorCdiIndex {
 public:
  /// Reads every spec file of the directories; a malformed file is skipped with a warning
  /// naming it. Our own specs (kind <driver>/…) are ignored.
  static VendorCdiIndex scan(const std::vector<std::string>& dirs, const std::string& driver);
  /// The vendor device of `device`: same UUID as device name, or the device's vendor index.
  [[nodiscard]] std::optional<VendorCdiDevice> find(const NodeDevice& device) const;

 private:
  std::map<std::string, std::map<std::string, std::string>> by_kind_;  ///< kind -> name -> id
};

/// A prepared device: its CDI ids and its entry in our spec.
struct PreparedDevice {
  AllocatedDevice allocation;
  std::vector<std::string> cdi_ids;
};

/// The spec of one claim and the CDI ids of each of its devices.
struct ClaimSpec {
  nlohmann::ordered_json spec;
  std::vector<PreparedDevice> devices;
};

/// Builds the spec of claim `claim_uid` from its allocated devices (in allocation order) and the
/// node's devices they name. Errors name the device that is missing or cannot be prepared.
Result<ClaimSpec> build_claim_spec(const std::string& driver, const std::string& claim_uid,
                                   const std::vector<AllocatedDevice>& allocated,
                                   const std::vector<NodeDevice>& node_devices,
                                   const VendorCdiIndex& vendor);

/// "<cdi_dir>/<driver>-claim_<uid>.json".
std::string claim_spec_path(const std::string& cdi_dir, const std::string& driver,
                            const std::string& claim_uid);

/// The spec as the bytes written (two-space JSON, newline at the end).
std::string render_spec(const nlohmann::ordered_json& spec);

/// Writes `contents` to `path` atomically (dot-file in the same directory, fsync, rename).
Result<void> write_file_atomic(const std::string& path, const std::string& contents);

/// Quantity ("16Gi", "1500Mi", "2G", "1024") in bytes; nullopt when not a quantity we read.
std::optional<long double> parse_quantity(const std::string& text);

}  // namespace nodetopo::kubelet
