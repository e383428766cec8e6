#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/link.hpp>
#include <nodetopo/topology/node.hpp>

namespace nodetopo {

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kMachine:
      return "machine";
    case NodeKind::kPackage:
      return "package";
    case NodeKind::kNumaNode:
      return "numa_node";
    case NodeKind::kHostBridge:
      return "host_bridge";
    case NodeKind::kPciBridge:
      return "pci_bridge";
    case NodeKind::kPciDevice:
      return "pci_device";
    case NodeKind::kAccelerator:
      return "accelerator";
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kNetDevice:
      return "net_device";
    case NodeKind::kRdmaDevice:
      return "rdma_device";
  }
  return "unknown";
}

std::string_view to_string(AcceleratorVendor vendor) {
  switch (vendor) {
    case AcceleratorVendor::kNvidia:
      return "nvidia";
    case AcceleratorVendor::kAmd:
      return "amd";
    case AcceleratorVendor::kIntel:
      return "intel";
    case AcceleratorVendor::kHabana:
      return "habana";
    case AcceleratorVendor::kOther:
      return "other";
  }
  return "other";
}

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNumaDistance:
      return "numa_distance";
    case LinkKind::kNvLink:
      return "nvlink";
    case LinkKind::kXgmi:
      return "xgmi";
  }
  return "unknown";
}

std::string_view to_string(ProbeStatus status) {
  switch (status) {
    case ProbeStatus::kOk:
      return "ok";
    case ProbeStatus::kWarnings:
      return "warnings";
    case ProbeStatus::kUnavailable:
      return "unavailable";
    case ProbeStatus::kFailed:
      return "failed";
  }
  return "unknown";
}

bool payload_matches(NodeKind kind, const NodePayload& payload) {
  switch (kind) {
    case NodeKind::kMachine:
      return std::holds_alternative<MachineInfo>(payload);
    case NodeKind::kPackage:
      return std::holds_alternative<PackageInfo>(payload);
    case NodeKind::kNumaNode:
      return std::holds_alternative<NumaInfo>(payload);
    case NodeKind::kHostBridge:
      return std::holds_alternative<HostBridgeInfo>(payload);
    case NodeKind::kPciBridge:
    case NodeKind::kPciDevice:
      return std::holds_alternative<PciFunctionInfo>(payload);
    case NodeKind::kAccelerator:
    case NodeKind::kNvSwitch:
      return std::holds_alternative<AcceleratorInfo>(payload);
    case NodeKind::kNetDevice:
      return std::holds_alternative<NetDeviceInfo>(payload);
    case NodeKind::kRdmaDevice:
      return std::holds_alternative<RdmaDeviceInfo>(payload);
  }
  return false;
}

}  // namespace nodetopo
