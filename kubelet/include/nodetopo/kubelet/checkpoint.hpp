// The prepared claims, kept in one JSON file in the state directory and replaced atomically after
// every change, so that a plugin restarted between prepare and unprepare still knows which spec
// files belong to which claim and answers a repeated prepare with the same devices.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/kubelet/cdi.hpp>

namespace nodetopo::kubelet {

struct PreparedClaim {
  std::string name_space;
  std::string name;
  std::string spec_file;  ///< the CDI spec written for it
  std::vector<PreparedDevice> devices;
};

struct Checkpoint {
  std::map<std::string, PreparedClaim> claims;  ///< by claim UID
};

/// Reads the checkpoint; a missing file is an empty checkpoint, a malformed one an error naming
/// the file (the plugin then refuses to start rather than forget prepared claims).
Result<Checkpoint> load_checkpoint(const std::string& path);
/// Writes it atomically.
Result<void> save_checkpoint(const std::string& path, const Checkpoint& checkpoint);

}  // namespace nodetopo::kubelet
