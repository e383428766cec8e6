// The driver's state: the node's devices and the prepared claims. Prepare and unprepare are
// idempotent and serialised (one mutex, as the upstream helper serialises its gRPC calls): a
// claim already prepared is answered from the checkpoint, one unknown to unprepare succeeds.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kubelet/cdi.hpp>
#include <nodetopo/kubelet/checkpoint.hpp>
#include <nodetopo/kubelet/config.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::kubelet {

/// A claim as the kubelet names it.
struct ClaimRef {
  std::string name_space;
  std::string uid;
  std::string name;
};

/// Reads a ResourceClaim object from the API server (GET); errors name the claim.
using ClaimReader = std::function<Result<nlohmann::json>(const ClaimRef&)>;

/// The answer for one claim.
struct PrepareResult {
  std::vector<PreparedDevice> devices;
  std::string error;  ///< non-empty: the claim failed
};

class DriverState {
 public:
  /// Loads the checkpoint and discovers the devices; an error when either fails.
  static Result<std::unique_ptr<DriverState>> create(PluginConfig config, DeviceSource source,
                                                     ClaimReader reader);

  PrepareResult prepare(const ClaimRef& claim);
  std::string unprepare(const ClaimRef& claim);  ///< empty on success

  /// A copy of the node's devices (for publishing).
  [[nodiscard]] NodeDevices devices() const;
  /// Discovers again; keeps the previous devices when discovery fails.
  Result<void> refresh();

  /// The allocated devices of our driver in a claim object (status.allocation), or an error
  /// naming the claim: not allocated, UID changed, or nothing allocated from our driver.
  static Result<std::vector<AllocatedDevice>> our_devices(const nlohmann::json& claim,
                                                          const ClaimRef& ref,
                                                          const std::string& driver,
                                                          const std::string& pool);

 private:
  DriverState(PluginConfig config, DeviceSource source, ClaimReader reader);
  PrepareResult prepare_locked(const ClaimRef& claim);

  PluginConfig config_;
  DeviceSource source_;
  ClaimReader reader_;
  mutable std::mutex mutex_;
  NodeDevices devices_;
  Checkpoint checkpoint_;
};

}  // namespace nodetopo::kubelet
