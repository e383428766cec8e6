// Network interfaces: every entry of sys/class/net.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Adds one `net/<ifname>` node (NetDeviceInfo) per interface of sys/class/net. An interface
/// whose device sits on a PCI function (directly, or through a bus such as virtio) hangs under
/// that function's `pci/<bdf>` node; one without a PCI parent in the topology (lo, bridges,
/// bonds, VLANs, veth, tunnels) hangs under the Machine with `is_virtual` set.
///
/// Fields: address, mtu, speed (absent when the kernel reports -1/unknown or refuses the read, as
/// it does for a link that is down), operstate, driver (device/driver link), link type (from the
/// ARPHRD number in `type`). For the interface of an SR-IOV virtual function, the interface of its
/// physical function is noted too. Runs after the PCI probe (phase kDevices).
class NetProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view name() const override { return "net"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kDevices; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;

  /// Reading the class entries needs no topology: it runs as a prefetch (beside hwloc and the
  /// PCI walk); discover() attaches what it read to the PCI functions.
  [[nodiscard]] bool prefetches() const override { return true; }
  void prefetch(ProbeContext& ctx) override;

  NetProbe();
  ~NetProbe() override;
  NetProbe(const NetProbe&) = delete;
  NetProbe& operator=(const NetProbe&) = delete;

 private:
  struct Read;
  std::unique_ptr<Read> read_;
};

/// Name of an ARPHRD link type number as sysfs `type` reports it: 1 "ether", 32 "infiniband",
/// 772 "loopback", ...; unknown numbers give "arphrd_<n>".
std::string link_type_name(std::uint32_t arphrd);

}  // namespace nodetopo::probes
