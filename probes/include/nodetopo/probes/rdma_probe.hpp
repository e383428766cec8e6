// RDMA devices: every entry of sys/class/infiniband (InfiniBand HCAs, RoCE NICs, iWARP, soft RDMA).
#pragma once

#include <memory>

#include <nodetopo/probes/probe.hpp>

namespace nodetopo::probes {

/// Adds one `rdma/<dev>` node (RdmaDeviceInfo) per entry of sys/class/infiniband, under the
/// `pci/<bdf>` node of its PCI function; software devices without a PCI parent (rxe, siw) hang
/// under the Machine with `is_virtual` set. Reads node_guid and, per port, state ("4: ACTIVE" ->
/// "ACTIVE"), rate and link_layer. A port's network interface comes from
/// ports/N/gid_attrs/ndevs/0 (RoCE); where that is absent (InfiniBand, older kernels) from the
/// interfaces of the same PCI function that the NIC probe found, matched by `dev_port` (or
/// `dev_id` on old kernels), child interfaces (iflink != ifindex) excluded; left empty when that
/// stays ambiguous. Runs after the NIC probe (same phase, later in the registry).
class RdmaProbe final : public Probe {
 public:
  [[nodiscard]] std::string_view name() const override { return "rdma"; }
  [[nodiscard]] ProbePhase phase() const override { return ProbePhase::kDevices; }
  Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) override;

  /// Reading the class entries needs no topology: it runs as a prefetch (beside hwloc and the
  /// PCI walk); discover() attaches what it read to the PCI functions.
  [[nodiscard]] bool prefetches() const override { return true; }
  void prefetch(ProbeContext& ctx) override;

  RdmaProbe();
  ~RdmaProbe() override;
  RdmaProbe(const RdmaProbe&) = delete;
  RdmaProbe& operator=(const RdmaProbe&) = delete;

 private:
  struct Read;
  std::unique_ptr<Read> read_;
};

}  // namespace nodetopo::probes
