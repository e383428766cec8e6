// The planner's private state, shared by the files that make up make_plan() (plan.hpp).
//
// make_plan() resolves a profile in five passes, one file each, in this order (Planner::run):
//   plan_cpus.cpp      logical CPU numbering, NUMA nodes and their SLIT distances
//   plan_pci.cpp       root complexes, ports and switches: addresses, bus numbers, link state
//   plan_endpoints.cpp the functions of each device (multi-function, SR-IOV) under its port
//   plan_devices.cpp   devices sorted by address, named and numbered, identities filled in
//   plan_network.cpp   network interfaces and RDMA devices of NICs and accelerators
//   plan_links.cpp     NVLink and xGMI wiring between the named devices
// Each pass reads what the earlier ones decided (a link names devices, so names come first), and
// each matches a writer in render/ (write_system, write_pci, write_accelerators, write_network).
//
// The first error stops the plan: fail() keeps only the first message, and every pass returns
// as soon as error_ is set, so a message always points at the field that caused it rather than
// at a later consequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace nodetopo::mock::detail {

/// Identity and link capability of a bridge port (root port or switch port): the part of a
/// BridgeModel a port takes, after a profile's vendor/device overrides.
struct BridgeIds {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  std::uint16_t subsystem_vendor = 0;
  std::uint16_t subsystem_device = 0;
  std::uint8_t revision = 0;
  PcieLink link;
};

/// A bus or function number as the profile writes it ("0x1b"), for messages.
std::string hex2(unsigned v);

/// `link` with its unknown parts (0) taken from `fallback` (a model's default).
PcieLink complete(PcieLink link, const PcieLink& fallback);

class Planner {
 public:
  explicit Planner(const Profile& profile) : p_(profile) { plan_.profile = &profile; }

  /// Runs the passes in order; the plan, or the first error.
  Result<Plan> run();

 private:
  /// Records the first error only (see above). `subfield` is appended to the origin's path.
  void fail(const Origin& origin, std::string_view subfield, const std::string& message);

  // plan_cpus.cpp
  void plan_cpus();
  void plan_distances();
  /// A device's NUMA node must exist and hold CPUs (or be -1, the kernel's "unknown").
  void check_numa(const Origin& origin, std::string_view subfield, int numa);

  // plan_pci.cpp
  void plan_pci();
  bool claim(const PciAddress& addr, const Origin& origin, std::string_view subfield);
  std::optional<std::uint8_t> take_bus(const std::optional<std::uint8_t>& wanted,
                                       std::uint8_t primary, const Origin& origin);
  PcieLink negotiate(const PcieLink& a, const PcieLink& b, const std::optional<PcieLink>& forced,
                     const Origin& origin);
  PcieLink device_cap(const DeviceSpec& d);
  BridgeIds switch_ids(const SwitchSpec& sw);
  std::size_t push(PlanFunction f);
  void add_port(const PortSpec& port, FunctionRole role, std::uint8_t bus, std::uint8_t dev,
                std::uint8_t fn, const std::string& parent_dir, const BridgeIds& ids);
  void add_switch(const SwitchSpec& sw, const BridgeIds& ids, std::uint8_t bus,
                  const std::string& parent_dir, const PcieLink& upstream_current);

  // plan_endpoints.cpp
  void add_device(const DeviceSpec& d, std::uint8_t bus, std::uint8_t dev, std::uint8_t fn_base,
                  const std::string& parent_dir, const PcieLink& cap, const PcieLink& current,
                  bool integrated);
  void check_device_fields(const DeviceSpec& d, const Model* model, const PlanDevice& pd);
  static std::uint16_t vendor_of(const DeviceSpec& d, const Model* model);

  // plan_devices.cpp
  void sort_devices();
  void name_devices();
  [[nodiscard]] std::string default_serial(const PlanDevice& d, const std::string& key) const;

  // plan_network.cpp
  void plan_network();

  // plan_links.cpp
  std::vector<std::size_t> resolve(const std::vector<std::string>& names, const Origin& origin,
                                   std::string_view subfield, bool& wildcard);
  void plan_links();
  void wire_nvlink(const LinkSpec& link, std::size_t a, std::size_t b,
                   std::map<std::size_t, std::uint32_t>& switch_ports,
                   std::map<std::size_t, const LinkSpec*>& last_entry);
  void wire_xgmi(const LinkSpec& link, std::size_t a, std::size_t b);

  const Profile& p_;
  Plan plan_;
  std::optional<Error> error_;
  std::map<std::uint64_t, std::string> used_;  // PCI address sort key -> field that took it
  // The root complex being planned (plan_pci): its domain, NUMA node, spec, and the next bus
  // number free below it. Buses are handed out depth-first, as firmware enumerates them.
  std::uint32_t next_bus_ = 0;
  std::uint32_t domain_ = 0;
  int numa_ = -1;
  const RootComplexSpec* rc_ = nullptr;
};

}  // namespace nodetopo::mock::detail
