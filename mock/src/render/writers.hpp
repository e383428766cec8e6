// Writers: each renders one part of the fake root from the plan.
#pragma once

#include "plan/plan.hpp"
#include "render/image.hpp"

namespace nodetopo::mock::detail {

/// sys/devices/system/{cpu,node}, sys/bus/{cpu,node}, hugepages, DMI, /proc/{cpuinfo,meminfo}.
void write_system(const Plan& plan, ImageWriter& out);

/// sys/devices/pciDDDD:BB/..., sys/bus/pci/{devices,drivers,slots}, sys/class/pci_bus.
void write_pci(const Plan& plan, ImageWriter& out);

/// sys/class/net (PCI and virtual interfaces), sys/class/infiniband, infiniband_verbs.
void write_network(const Plan& plan, ImageWriter& out);

/// Vendor extras: DRM cards and the KFD topology (AMD), accel devices (Habana), NVMe
/// controllers and namespaces, /proc/driver/nvidia (NVIDIA).
void write_accelerators(const Plan& plan, ImageWriter& out);

/// nodetopo-mock/nvml.json (when there are NVIDIA GPUs) and nodetopo-mock/manifest.json.
void write_fixtures(const Plan& plan, ImageWriter& out);

}  // namespace nodetopo::mock::detail
