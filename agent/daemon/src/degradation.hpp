// What a degraded discovery is: the rule that keeps the last good topology published.
#pragma once

#include <string>

#include "snapshot_source.hpp"

namespace nodetopo::daemon {

/// Compares a new snapshot with the last good one. A discovery is degraded, and not published,
/// when
/// - a probe that was ok (or had warnings) is now failed or unavailable: a subsystem became
///   unreadable, or a library (NVML) vanished; or
/// - a probe that was ok now has warnings AND some kind of device is fewer: a device was
///   skipped because one of its files could not be read.
/// A device that disappears while every probe stays as healthy as before is a real removal
/// (hot-unplug) and is published. Returns the reason, or an empty string when not degraded.
std::string degradation(const Snapshot& last_good, const Snapshot& now);

/// Probes that failed in `snapshot` ("probe pci failed: ..."), "; "-joined; empty when none.
std::string failed_probes(const Snapshot& snapshot);

}  // namespace nodetopo::daemon
