// Prepare and unprepare of claims (see state.hpp): the claim's allocation is read from the API
// server, our driver's results become a CDI spec file and an entry in the checkpoint.
#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include <nodetopo/kubelet/state.hpp>

namespace nodetopo::kubelet {

namespace {

std::string claim_name(const ClaimRef& c) {
  return "ResourceClaim " + c.name_space + "/" + c.name;
}

}  // namespace

DriverState::DriverState(PluginConfig config, DeviceSource source, ClaimReader reader)
    : config_(std::move(config)), source_(std::move(source)), reader_(std::move(reader)) {}

Result<std::unique_ptr<DriverState>> DriverState::create(PluginConfig config, DeviceSource source,
                                                         ClaimReader reader) {
  std::unique_ptr<DriverState> state(
      new DriverState(std::move(config), std::move(source), std::move(reader)));
  auto checkpoint = load_checkpoint(state->config_.checkpoint_file());
  if (!checkpoint) return checkpoint.error();
  state->checkpoint_ = std::move(*checkpoint);
  auto devices = state->source_();
  if (!devices) return devices.error();
  state->devices_ = std::move(*devices);
  return state;
}

NodeDevices DriverState::devices() const {
  std::lock_guard lock(mutex_);
  return devices_;
}

Result<void> DriverState::refresh() {
  auto devices = source_();
  if (!devices) return devices.error();
  std::lock_guard lock(mutex_);
  devices_ = std::move(*devices);
  return {};
}

Result<std::vector<AllocatedDevice>> DriverState::our_devices(const nlohmann::json& claim,
                                                              const ClaimRef& ref,
                                                              const std::string& driver,
                                                              const std::string& pool) {
  const std::string what = claim_name(ref);
  const auto uid = claim.contains("metadata") ? claim["metadata"].value("uid", "") : "";
  if (uid != ref.uid)
    return make_error(ErrorCode::kInvalid, what + " has UID " + uid + ", the kubelet asked for " +
                                               ref.uid + " (the claim was replaced)");
  const nlohmann::json* results = nullptr;
  if (claim.contains("status") && claim["status"].contains("allocation")) {
    const auto& alloc = claim["status"]["allocation"];
    if (alloc.contains("devices") && alloc["devices"].contains("results"))
      results = &alloc["devices"]["results"];
  }
  if (results == nullptr || !results->is_array())
    return make_error(ErrorCode::kInvalid, what + " is not allocated");
  std::vector<AllocatedDevice> out;
  std::vector<std::string> others;
  for (const auto& r : *results) {
    const std::string d = r.value("driver", "");
    if (d != driver) {
      others.push_back(d);
      continue;
    }
    AllocatedDevice a;
    a.request = r.value("request", "");
    a.pool = r.value("pool", "");
    a.device = r.value("device", "");
    a.share_id = r.value("shareID", "");
    if (r.contains("consumedCapacity") && r["consumedCapacity"].is_object())
      for (const auto& [k, v] : r["consumedCapacity"].items())
        if (v.is_string()) a.consumed[k] = v.get<std::string>();
    if (a.pool != pool)
      return make_error(ErrorCode::kInvalid, what + ": device " + a.device + " is from pool " +
                                                 a.pool + ", not from this node's pool " + pool);
    out.push_back(std::move(a));
  }
  if (out.empty()) {
    std::string list;
    for (const std::string& o : others)
      list += (list.empty() ? "" : ", ") + o;
    return make_error(ErrorCode::kInvalid,
                      what + " has no device of driver " + driver +
                          " allocated (drivers: " + (list.empty() ? "none" : list) + ")");
  }
  return out;
}

PrepareResult DriverState::prepare(const ClaimRef& claim) {
  // Serialised as a whole, API read included: the kubelet calls seldom, and one claim must never
  // be prepared twice at once by two of its retries.
  std::lock_guard lock(mutex_);
  return prepare_locked(claim);
}

PrepareResult DriverState::prepare_locked(const ClaimRef& claim) {
  if (auto it = checkpoint_.claims.find(claim.uid); it != checkpoint_.claims.end()) {
    return PrepareResult{it->second.devices, {}};  // prepared before: the same answer
  }
  auto object = reader_(claim);
  if (!object) return PrepareResult{{}, object.error().describe()};
  auto allocated = our_devices(*object, claim, config_.driver, config_.node_name);
  if (!allocated) return PrepareResult{{}, allocated.error().message};
  const VendorCdiIndex vendor = VendorCdiIndex::scan(config_.vendor_cdi_dirs, config_.driver);
  auto spec = build_claim_spec(config_.driver, claim.uid, *allocated, devices_.devices, vendor);
  if (!spec && spec.error().code == ErrorCode::kNotFound) {
    // A device we have not seen: the host may have changed since the last discovery.
    if (auto fresh = source_(); fresh) devices_ = std::move(*fresh);
    spec = build_claim_spec(config_.driver, claim.uid, *allocated, devices_.devices, vendor);
  }
  if (!spec) return PrepareResult{{}, claim_name(claim) + ": " + spec.error().message};
  const std::string file = claim_spec_path(config_.cdi_dir, config_.driver, claim.uid);
  if (auto w = write_file_atomic(file, render_spec(spec->spec)); !w)
    return PrepareResult{{}, claim_name(claim) + ": CDI spec: " + w.error().describe()};
  checkpoint_.claims[claim.uid] = PreparedClaim{claim.name_space, claim.name, file, spec->devices};
  if (auto s = save_checkpoint(config_.checkpoint_file(), checkpoint_); !s) {
    checkpoint_.claims.erase(claim.uid);
    std::remove(file.c_str());
    return PrepareResult{{}, claim_name(claim) + ": checkpoint: " + s.error().describe()};
  }
  spdlog::info("prepared {} ({} device(s)), CDI spec {}", claim_name(claim), spec->devices.size(),
               file);
  return PrepareResult{spec->devices, {}};
}

std::string DriverState::unprepare(const ClaimRef& claim) {
  std::lock_guard lock(mutex_);
  const auto it = checkpoint_.claims.find(claim.uid);
  const std::string file = it != checkpoint_.claims.end()
                               ? it->second.spec_file
                               : claim_spec_path(config_.cdi_dir, config_.driver, claim.uid);
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (ec) return claim_name(claim) + ": cannot remove " + file + ": " + ec.message();
  if (it == checkpoint_.claims.end()) return {};  // never prepared, or unprepared before
  const PreparedClaim saved = it->second;
  checkpoint_.claims.erase(it);
  if (auto s = save_checkpoint(config_.checkpoint_file(), checkpoint_); !s) {
    checkpoint_.claims[claim.uid] = saved;
    return claim_name(claim) + ": checkpoint: " + s.error().describe();
  }
  spdlog::info("unprepared {}", claim_name(claim));
  return {};
}

}  // namespace nodetopo::kubelet
