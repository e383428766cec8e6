// PCI configuration space of a planned function, as the sysfs `config` file of a root reader
// returns it: a type 0 or type 1 header, the PCI Express capability (port type, link
// capabilities and status matching the sysfs link attributes), power management, the bridge
// subsystem ID capability, and extended capabilities (Device Serial Number, ARI, SR-IOV).
#pragma once

#include <cstddef>
#include <string>

#include "plan/plan.hpp"

namespace nodetopo::mock::detail {

/// Size of every config file the builder writes (PCIe extended configuration space).
inline constexpr std::size_t kConfigSize = 4096;
/// Offset of the PCI Express capability in the files the builder writes.
inline constexpr std::size_t kPcieCapOffset = 0x40;

/// The `config` bytes of a function.
std::string config_space(const PlanFunction& function);

/// PCIe generation code of a speed (1 = 2.5 GT/s ... 6 = 64 GT/s), 0 for unknown.
unsigned speed_code(std::uint32_t mts);

}  // namespace nodetopo::mock::detail
