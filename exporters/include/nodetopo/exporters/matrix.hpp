// The device relation matrix of `topo matrix`, laid out like `nvidia-smi topo -m`: accelerators
// (ordered by PCI address), then NICs, every pair's connection class, and CPU/NUMA affinity.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nodetopo/topology/relations.hpp>
#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

struct MatrixDevice {
  std::string name;          ///< "GPU0", "NIC3"
  std::string kind;          ///< "gpu" (any accelerator) or "nic"
  NodeIndex node = kNoNode;  ///< accelerator node, or the NIC's PCI function
  std::string pci;           ///< "0000:1b:00.0"
  std::string product;
  std::string rdma;          ///< first RDMA device of a NIC ("mlx5_0"), "" if none
  std::string netdev;        ///< first network interface of a NIC, "" if none
  std::string cpu_affinity;  ///< cpulist, "" when unknown
  std::optional<std::uint32_t> numa_affinity;
  std::optional<std::uint32_t> gpu_numa_id;  ///< NUMA node made of the GPU's own memory
};

struct DeviceMatrix {
  std::vector<MatrixDevice> devices;
  std::vector<std::vector<Relation>> cells;  ///< cells[i][j]: devices[i] to devices[j]
};

/// Accelerators (not NVSwitches), then physical NICs: PCI functions of network class or with an
/// RDMA device, SR-IOV virtual functions excluded.
DeviceMatrix build_device_matrix(const Topology& topology);

/// Tab-separated like nvidia-smi, followed by the legend and the NIC legend.
std::string render_matrix_text(const DeviceMatrix& matrix);

/// {"devices":[...], "cells":{"GPU0":{"NIC0":"PIX",...}}, "cpu_affinity":{...},
///  "numa_affinity":{...}}, two-space indented, with a final newline.
std::string render_matrix_json(const DeviceMatrix& matrix);

}  // namespace nodetopo::exporters
