// Node ids: the model's public contract (docs/schema.md), built from hardware identities so that
// output is deterministic and diffable. Every id is made here; a misspelt prefix then fails to
// compile instead of quietly splitting the tree.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include <nodetopo/topology/pci.hpp>

namespace nodetopo::node_id {

/// "pci/0000:1b:00.0": a PCI function (device or bridge).
inline std::string pci(std::string_view bdf) {
  return "pci/" + std::string(bdf);
}
inline std::string pci(const PciAddress& a) {
  return pci(a.to_string());
}

/// "accelerator/0000:1b:00.0": the GPU or other accelerator of a PCI function.
inline std::string accelerator(std::string_view bdf) {
  return "accelerator/" + std::string(bdf);
}
inline std::string accelerator(const PciAddress& a) {
  return accelerator(a.to_string());
}

/// "nvswitch/0000:05:00.0".
inline std::string nvswitch(std::string_view bdf) {
  return "nvswitch/" + std::string(bdf);
}
inline std::string nvswitch(const PciAddress& a) {
  return nvswitch(a.to_string());
}

/// "hostbridge/pci0000:00": a PCI root bus without an enumerated bridge above it.
inline std::string host_bridge(std::string_view root_bus) {
  return "hostbridge/" + std::string(root_bus);
}

/// "package/1" and "numa/1": by the OS index.
template <std::integral T>
std::string package(T os_index) {
  return "package/" + std::to_string(os_index);
}
template <std::integral T>
std::string numa(T os_index) {
  return "numa/" + std::to_string(os_index);
}

/// "net/ens1f0" and "rdma/mlx5_0": by the kernel's name.
inline std::string net(std::string_view ifname) {
  return "net/" + std::string(ifname);
}
inline std::string rdma(std::string_view name) {
  return "rdma/" + std::string(name);
}

}  // namespace nodetopo::node_id
