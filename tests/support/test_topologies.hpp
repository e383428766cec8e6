// Hand-built topologies for the Kubernetes exporter tests, shaped like the machines the mock
// profiles imitate: a DGX-H100-like node (8 GPUs, each with a ConnectX-7 behind the same PCIe
// switch, 4 NVSwitches, NVLink 5+4+4+5 per GPU) and a bare NIC farm for the slice limits.
#pragma once

#include <cstdint>
#include <string>

#include <nodetopo/topology/topology.hpp>

namespace nodetopo::test {

struct DgxOptions {
  int gpus = 8;
  /// Identity seed: UUIDs, serials, MACs, node GUIDs and interface names change with it; the
  /// hardware does not.
  int identity = 0;
  /// Added to every bus number below the root ports: another BIOS enumeration of the same board.
  int bus_offset = 0;
  /// Moves NIC 0 from GPU 0's switch to GPU 1's switch (a different machine).
  bool move_nic0 = false;
  bool nvlink = true;
  /// Fill fabric cluster UUID / clique id (NVL multi-node domain) on every GPU.
  bool fabric = false;
  /// GPU memory in bytes (H100 SXM as NVML reports it).
  std::uint64_t gpu_memory = 85520809984ULL;
  std::string driver_version = "535.104.05";
  /// Link state of the compute NICs ("up" with speed, or "down" without).
  bool links_up = true;
  /// Number of SR-IOV VFs under NIC 0 (software configuration).
  int nic0_vfs = 1;
};

Topology make_dgx(const DgxOptions& options = {});

/// One NUMA node, one host bridge, `nics` single-function NICs each under its own root port.
Topology make_nic_farm(int nics);

}  // namespace nodetopo::test
