// Internal: the per-device checks the allocator makes and the explanation counts — consumable
// capacity with request policies, taints and tolerations, shared counters, attribute lookup.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/model.hpp>

namespace nodetopo::fit::detail {

using CapacityMap = std::map<std::string, Quantity>;

/// The capacity one allocation of `device` for `request` consumes: every capacity of the
/// device, the requested amount rounded by the request policy, else the policy default, else
/// the whole capacity. nullopt (with `why`) when a requested amount has no valid value.
std::optional<CapacityMap> consumed_capacity(const ExactRequest& request, const Device& device,
                                             std::string& why);

/// Whether the request's capacity fits the device given what is already consumed.
bool capacity_fits(const ExactRequest& request, const Device& device, const CapacityMap& used,
                   bool consumable_feature, std::string& why);

/// Whether a NoSchedule/NoExecute taint of the device is not tolerated by the request.
bool taint_blocks(const Device& device, const ExactRequest& request, std::string& which);

/// upstream lookupAttribute: the fully qualified name, else the short name when the domain is
/// the device's driver.
const AttributeValue* lookup_attribute(const Device& device, const std::string& driver,
                                       const std::string& qualified);

/// Counters per (driver, pool): counter set -> counter -> amount.
using Counters = std::map<std::string, std::map<std::string, Quantity>>;
/// What the pool's counter sets hold minus what allocated devices consume.
Counters available_counters(const Pool& pool, const std::vector<AllocatedDevice>& allocated);

}  // namespace nodetopo::fit::detail
