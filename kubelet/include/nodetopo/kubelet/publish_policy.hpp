// The publish policy: which of our devices go into our ResourceSlices when another DRA driver
// (a vendor's GPU driver, an SR-IOV NIC driver) may already publish the same hardware on this
// node. Two drivers publishing one PCI function would let the scheduler hand it out twice.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/kubelet/config.hpp>
#include <nodetopo/kubelet/devices.hpp>

namespace nodetopo::kubelet {

/// PCI bus ids ("0000:1b:00.0", lower case) of the devices that drivers other than `driver`
/// publish in `node_slices` (the node's ResourceSlices as the API returns them): through the
/// standard resource.kubernetes.io/pciBusID attribute, or any attribute named pciBusID /
/// pci_bus_id / pciAddress in the driver's own domain (vendors published it so before 1.36).
std::set<std::string> foreign_pci_bus_ids(const std::vector<nlohmann::json>& node_slices,
                                          const std::string& driver);

/// The names of our devices to publish: kAlways and kAuto devices, minus kAuto devices whose
/// bus id is in `foreign`; kNever never.
std::set<std::string> devices_to_publish(const std::vector<NodeDevice>& devices,
                                         const std::map<DeviceKind, PublishPolicy>& policy,
                                         const std::set<std::string>& foreign);

/// `slices` (exporter output) with only the devices named in `keep`; slices left empty are
/// dropped, except that one empty slice stays when nothing is kept (an empty pool is valid and
/// tells the scheduler the node has none).
std::vector<nlohmann::json> filter_slices(const std::vector<nlohmann::json>& slices,
                                          const std::set<std::string>& keep);

}  // namespace nodetopo::kubelet
