// make_plan(): the passes in order (plan_state.hpp lists them and their files), the first-error
// rule, and the small helpers several passes share.
#include "plan/plan.hpp"

#include <array>
#include <cstdio>
#include <utility>

#include "plan/identity.hpp"
#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

std::string hex2(unsigned v) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%02x", v);
  return buf.data();
}

PcieLink complete(PcieLink link, const PcieLink& fallback) {
  if (link.speed_mts == 0) link.speed_mts = fallback.speed_mts;
  if (link.width == 0) link.width = fallback.width;
  return link;
}

// Devices are sorted and named before the network and link passes because both refer to
// devices by index and by name; the fabric UUID comes last because it depends on nothing but
// the seed, and only a valid plan needs it.
Result<Plan> Planner::run() {
  plan_cpus();
  if (!error_) plan_pci();
  if (!error_) sort_devices();
  if (!error_) name_devices();
  if (!error_) plan_network();
  if (!error_) plan_links();
  if (error_) return *error_;
  if (p_.nvidia.fabric) {
    plan_.fabric_cluster_uuid = identity_uuid(p_.seed, "nvlink-fabric", "cluster");
  }
  return std::move(plan_);
}

void Planner::fail(const Origin& origin, std::string_view subfield, const std::string& message) {
  if (error_) return;
  const std::string where = origin.at(subfield);
  error_ =
      make_error(ErrorCode::kInvalid, (where.empty() ? "" : where + ": ") + message, p_.source);
}

Result<Plan> make_plan(const Profile& profile) {
  return Planner(profile).run();
}

const CpuSet& locality(const Plan& plan, int numa) {
  if (numa < 0 || static_cast<std::size_t>(numa) >= plan.numa_cpus.size()) return plan.all_cpus;
  return plan.numa_cpus[static_cast<std::size_t>(numa)];
}

}  // namespace nodetopo::mock::detail
