// The devices nodetopo publishes to Kubernetes — accelerators and physical NICs — with the facts
// every Kubernetes exporter (ResourceSlices, labels, NodeResourceTopology) derives from them:
// stable DNS-label names, NUMA node, nearest PCIe switch, NVLink/xGMI domain, RDMA and network
// interface of a NIC. One place, so that a GPU is named and described the same way everywhere.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nodetopo/topology/topology.hpp>

namespace nodetopo::exporters {

enum class K8sDeviceType : std::uint8_t {
  kGpu,          ///< an NVIDIA, AMD or Intel GPU
  kAccelerator,  ///< another AI accelerator (Habana Gaudi, ...)
  kNic,          ///< a physical NIC function (SR-IOV virtual functions excluded)
};

/// "gpu", "accelerator", "nic": the `type` attribute.
std::string_view to_string(K8sDeviceType type);

struct K8sDevice {
  K8sDeviceType type = K8sDeviceType::kNic;
  NodeIndex node = kNoNode;      ///< the accelerator node, or the NIC's PCI function
  NodeIndex function = kNoNode;  ///< the PCI function
  const PciFunctionInfo* pci = nullptr;
  const AcceleratorInfo* accelerator = nullptr;  ///< accelerators only

  /// DNS label from kind and PCI address, stable across runs: "gpu-0000-1b-00-0",
  /// "accel-0000-33-00-0", "nic-0000-1a-00-0".
  std::string name;
  std::optional<std::uint32_t> numa_node;
  /// PCI address of the nearest bridge unit (relations.hpp: a switch's upstream port, or a lone
  /// bridge); devices nvidia-smi calls PIX share it. Empty when the function sits directly on a
  /// host bridge.
  std::string pcie_switch;
  /// NVLink domain: "<fabric cluster UUID>.<clique id>" when NVML reports the fabric, else
  /// "local-<12 hex>" naming the NVLink-connected set of accelerators on this node. Empty for
  /// accelerators without NVLink and for NICs.
  std::string nvlink_domain;
  /// "local-<12 hex>" naming the xGMI-connected set of AMD GPUs; empty without xGMI.
  std::string xgmi_domain;

  // NICs
  std::string rdma_device;                  ///< first RDMA device ("mlx5_0"), empty when none
  std::string if_name;                      ///< first network interface, empty when none
  std::optional<std::uint64_t> speed_mbps;  ///< link speed (netdev, else active RDMA port)
  std::string link_layer;                   ///< "InfiniBand", "Ethernet" (RDMA), else ""
};

/// Accelerators (ordered by PCI address), then physical NICs (ordered by PCI address).
/// `node_name` only seeds the local NVLink/xGMI domain ids, so that they differ between nodes.
std::vector<K8sDevice> collect_k8s_devices(const Topology& topology, std::string_view node_name);

/// Short lower-case vendor name of a PCI vendor id ("nvidia", "amd", "intel", "habana",
/// "mellanox", "broadcom", ...), else the id as four hex digits.
std::string pci_vendor_short_name(std::uint16_t vendor_id);

}  // namespace nodetopo::exporters
