#include "test_topologies.hpp"

#include <cstdio>
#include <stdexcept>

namespace nodetopo::test {

namespace {

class Builder {
 public:
  NodeIndex add(NodeKind kind, const std::string& id, NodeIndex parent, NodePayload payload) {
    auto r = b_.add(kind, id, parent, std::move(payload));
    if (!r) throw std::runtime_error(r.error().describe());
    return r.value();
  }
  NodeIndex function(NodeKind kind, PciAddress addr, NodeIndex parent, std::uint16_t vendor,
                     std::uint16_t device, std::uint32_t cls, std::optional<PciePortType> role,
                     PcieLink link, std::optional<std::uint32_t> numa) {
    PciFunctionInfo f;
    f.address = addr;
    f.vendor_id = vendor;
    f.device_id = device;
    f.class_code = cls;
    f.port_type = role;
    f.link_max = link;
    f.link_current = link;
    f.numa_node = numa;
    f.pcie_root = pci_root_name(addr.domain, root_bus_);
    if (vendor == 0x10de && (cls >> 8) == 0x0302) {
      f.device_name = "GH100 [H100 SXM5 80GB]";
      f.driver = "nvidia";
    } else if (vendor == 0x10de) {
      f.device_name = "NVSwitch";
      f.driver = "nvidia";
    } else if (vendor == 0x15b3) {
      f.device_name = "MT2910 Family [ConnectX-7]";
      f.driver = "mlx5_core";
    } else if (vendor == 0x8086 && (cls >> 16) == 0x02) {
      f.device_name = "Ethernet Controller X710 for 10GbE SFP+";
      f.driver = "i40e";
    } else {
      f.driver = "pcieport";
    }
    return add(kind, "pci/" + addr.to_string(), parent, f);
  }
  void set_root_bus(std::uint8_t bus) { root_bus_ = bus; }
  TopologyBuilder& raw() { return b_; }

 private:
  TopologyBuilder b_;
  std::uint8_t root_bus_ = 0;
};

std::string hex2(int v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02x", v & 0xff);
  return buf;
}

}  // namespace

Topology make_dgx(const DgxOptions& o) {
  Builder b;
  auto& raw = b.raw();
  raw.node(raw.root()).as<MachineInfo>().architecture = "x86_64";
  raw.node(raw.root()).as<MachineInfo>().product_name =
      "DGX H100 serial " + std::to_string(1000 + o.identity);
  NodeIndex numa[2];
  for (std::uint32_t s = 0; s < 2; ++s) {
    PackageInfo p;
    p.os_index = s;
    p.cpus.insert_range(56 * s, 56 * s + 55);
    p.cpu_vendor = "GenuineIntel";
    p.cpu_model = "Intel(R) Xeon(R) Platinum 8480C";
    const NodeIndex pkg = b.add(NodeKind::kPackage, "package/" + std::to_string(s), raw.root(), p);
    NumaInfo n;
    n.os_index = s;
    n.cpus = p.cpus;
    // What the kernel reports varies with firmware reservations between identical machines.
    n.memory_bytes = (std::uint64_t{1} << 40) - (std::uint64_t{20} << 30) -
                     std::uint64_t(o.identity) * 4096 * 1024;
    numa[s] = b.add(NodeKind::kNumaNode, "numa/" + std::to_string(s), pkg, n);
  }
  for (std::uint32_t a = 0; a < 2; ++a) {
    for (std::uint32_t c = 0; c < 2; ++c) {
      raw.add_link(Link{LinkKind::kNumaDistance, numa[a], numa[c], a == c ? 10 : 21, 0});
    }
  }
  const PcieLink gen5{32000, 16};
  const PcieLink gen4{16000, 16};
  std::vector<NodeIndex> gpu_nodes;
  std::vector<NodeIndex> nic_dsp;  // downstream port reserved for each GPU's NIC
  std::vector<NodeIndex> gpu_dsp;
  std::vector<std::uint8_t> nic_bus;
  for (int k = 0; k < o.gpus; ++k) {
    const std::uint32_t socket = k < o.gpus / 2 ? 0 : 1;
    const auto root = static_cast<std::uint8_t>(0x10 + 0x10 * k);
    b.set_root_bus(root);
    HostBridgeInfo hb;
    hb.bus = root;
    hb.root_name = pci_root_name(0, root);
    hb.numa_node = socket;
    const NodeIndex host =
        b.add(NodeKind::kHostBridge, "hostbridge/" + hb.root_name, numa[socket], hb);
    auto bus = [&](int rel) { return static_cast<std::uint8_t>(root + o.bus_offset + rel); };
    const NodeIndex rp = b.function(NodeKind::kPciBridge, {0, root, 1, 0}, host, 0x8086, 0x1bbc,
                                    0x060400, PciePortType::kRootPort, gen5, socket);
    const NodeIndex usp = b.function(NodeKind::kPciBridge, {0, bus(1), 0, 0}, rp, 0x1000, 0xc030,
                                     0x060400, PciePortType::kUpstreamPort, gen5, socket);
    const NodeIndex d0 = b.function(NodeKind::kPciBridge, {0, bus(2), 0, 0}, usp, 0x1000, 0xc030,
                                    0x060400, PciePortType::kDownstreamPort, gen5, socket);
    const NodeIndex d1 = b.function(NodeKind::kPciBridge, {0, bus(2), 1, 0}, usp, 0x1000, 0xc030,
                                    0x060400, PciePortType::kDownstreamPort, gen5, socket);
    const NodeIndex gpu_fn = b.function(NodeKind::kPciDevice, {0, bus(3), 0, 0}, d0, 0x10de, 0x2330,
                                        0x030200, PciePortType::kEndpoint, gen5, socket);
    AcceleratorInfo a;
    a.vendor = AcceleratorVendor::kNvidia;
    a.product = "NVIDIA H100 80GB HBM3";
    a.architecture = "hopper";
    a.uuid = "GPU-" + hex2(o.identity) + "3f1e7a5-0b4c-5d1e-9a7f-2c8b6e4d1a" + hex2(k);
    a.serial = std::to_string(1654922000000 + 1000 * o.identity + k);
    a.memory_bytes = o.gpu_memory;
    a.driver_version = o.driver_version;
    a.index = static_cast<std::uint32_t>(k);
    if (o.fabric) {
      a.fabric_cluster_uuid = "6a0f4c1e-7d2b-4e8a-9c3f-0b1d2e3f4a5b";
      a.fabric_clique_id = 1;
    }
    const std::string bdf = raw.node(gpu_fn).as<PciFunctionInfo>().address.to_string();
    gpu_nodes.push_back(b.add(NodeKind::kAccelerator, "accelerator/" + bdf, gpu_fn, a));
    gpu_dsp.push_back(d0);
    nic_dsp.push_back(d1);
    nic_bus.push_back(bus(4));
  }
  for (int k = 0; k < o.gpus; ++k) {
    // NIC 0 moves to GPU 1's switch when asked: same parts, different wiring.
    const int host_k = (o.move_nic0 && k == 0) ? 1 : k;
    NodeIndex parent = nic_dsp[static_cast<std::size_t>(host_k)];
    std::uint8_t bus = nic_bus[static_cast<std::size_t>(k)];
    if (o.move_nic0 && k == 0) {
      // A second downstream port on GPU 1's switch carries the moved NIC.
      const auto& usp_addr =
          raw.node(raw.node(parent).parent).as<PciFunctionInfo>().address;  // the USP
      const NodeIndex extra =
          b.function(NodeKind::kPciBridge, {0, static_cast<std::uint8_t>(usp_addr.bus + 1), 2, 0},
                     raw.node(parent).parent, 0x1000, 0xc030, 0x060400,
                     PciePortType::kDownstreamPort, gen5, 0);
      parent = extra;
      bus = static_cast<std::uint8_t>(nic_bus[1] + 1);
    }
    const std::uint32_t socket = k < o.gpus / 2 ? 0 : 1;
    const NodeIndex nic = b.function(NodeKind::kPciDevice, {0, bus, 0, 0}, parent, 0x15b3, 0x1021,
                                     0x020700, PciePortType::kEndpoint, gen5, socket);
    NetDeviceInfo net;
    net.name = "ibp" + std::to_string(bus + 10 * o.identity) + "s0";
    net.mac = "00:00:" + hex2(o.identity) + ":00:00:" + hex2(k);
    net.link_type = "infiniband";
    net.operstate = o.links_up ? "up" : "down";
    if (o.links_up) net.speed_mbps = 400000;
    b.add(NodeKind::kNetDevice, "net/" + net.name, nic, net);
    RdmaDeviceInfo rdma;
    rdma.name = "mlx5_" + std::to_string(k);
    rdma.node_guid = "a088:c203:00" + hex2(o.identity) + ":" + hex2(k) + "00";
    rdma.ports.push_back(RdmaPort{1, o.links_up ? "ACTIVE" : "DOWN",
                                  o.links_up ? "400 Gb/sec (4X NDR)" : "", "InfiniBand", ""});
    b.add(NodeKind::kRdmaDevice, "rdma/" + rdma.name, nic, rdma);
    if (k == 0) {
      for (int v = 0; v < o.nic0_vfs; ++v) {
        const NodeIndex vf =
            b.function(NodeKind::kPciDevice, {0, bus, 0, static_cast<std::uint8_t>(1 + v)}, parent,
                       0x15b3, 0x101e, 0x020700, PciePortType::kEndpoint, gen5, socket);
        raw.node(vf).as<PciFunctionInfo>().is_virtual_function = true;
      }
    }
  }
  (void)gpu_dsp;
  // NVSwitches on their own host bridge of socket 0, each under a root port.
  b.set_root_bus(0xa0);
  HostBridgeInfo hb;
  hb.bus = 0xa0;
  hb.root_name = pci_root_name(0, 0xa0);
  hb.numa_node = 0;
  const NodeIndex sw_host = b.add(NodeKind::kHostBridge, "hostbridge/" + hb.root_name, numa[0], hb);
  std::vector<NodeIndex> switches;
  for (int s = 0; s < 4; ++s) {
    const NodeIndex rp =
        b.function(NodeKind::kPciBridge, {0, 0xa0, static_cast<std::uint8_t>(1 + s), 0}, sw_host,
                   0x8086, 0x1bbd, 0x060400, PciePortType::kRootPort, gen4, 0);
    const NodeIndex fn = b.function(NodeKind::kPciDevice,
                                    {0, static_cast<std::uint8_t>(0xa1 + s + o.bus_offset), 0, 0},
                                    rp, 0x10de, 0x22a3, 0x068000, PciePortType::kEndpoint, gen4, 0);
    AcceleratorInfo sw;
    sw.vendor = AcceleratorVendor::kNvidia;
    sw.product = "NVSwitch";
    const std::string bdf = raw.node(fn).as<PciFunctionInfo>().address.to_string();
    switches.push_back(b.add(NodeKind::kNvSwitch, "nvswitch/" + bdf, fn, sw));
  }
  // Management NIC on socket 0, directly on a root port: no RDMA.
  b.set_root_bus(0xb0);
  HostBridgeInfo mhb;
  mhb.bus = 0xb0;
  mhb.root_name = pci_root_name(0, 0xb0);
  mhb.numa_node = 0;
  const NodeIndex mgmt_host =
      b.add(NodeKind::kHostBridge, "hostbridge/" + mhb.root_name, numa[0], mhb);
  const NodeIndex mrp = b.function(NodeKind::kPciBridge, {0, 0xb0, 1, 0}, mgmt_host, 0x8086, 0x1bbe,
                                   0x060400, PciePortType::kRootPort, PcieLink{8000, 8}, 0);
  const NodeIndex mgmt = b.function(NodeKind::kPciDevice, {0, 0xb1, 0, 0}, mrp, 0x8086, 0x1572,
                                    0x020000, PciePortType::kEndpoint, PcieLink{8000, 8}, 0);
  NetDeviceInfo eth;
  eth.name = "eno" + std::to_string(1 + o.identity);
  eth.link_type = "ether";
  eth.speed_mbps = 10000;
  b.add(NodeKind::kNetDevice, "net/" + eth.name, mgmt, eth);

  if (o.nvlink) {
    const int per_switch[4] = {5, 4, 4, 5};
    for (NodeIndex g : gpu_nodes) {
      for (int s = 0; s < 4; ++s) {
        raw.add_link(
            Link{LinkKind::kNvLink, g, switches[static_cast<std::size_t>(s)], per_switch[s], 0});
      }
    }
  }
  return std::move(raw).freeze();
}

Topology make_nic_farm(int nics) {
  TopologyBuilder b;
  NumaInfo n;
  n.os_index = 0;
  n.cpus.insert_range(0, 7);
  n.memory_bytes = std::uint64_t{64} << 30;
  const NodeIndex numa = b.add(NodeKind::kNumaNode, "numa/0", b.root(), n).value();
  int domain = 0;
  NodeIndex host = kNoNode;
  for (int i = 0; i < nics; ++i) {
    // 32 root ports per host bridge, one NIC behind each.
    if (i % 32 == 0) {
      HostBridgeInfo hb;
      hb.domain = static_cast<std::uint32_t>(domain);
      hb.root_name = pci_root_name(hb.domain, 0);
      host = b.add(NodeKind::kHostBridge, "hostbridge/" + hb.root_name, numa, hb).value();
      ++domain;
    }
    PciFunctionInfo rp;
    rp.address = {static_cast<std::uint32_t>(domain - 1), 0, static_cast<std::uint8_t>(i % 32), 0};
    rp.class_code = 0x060400;
    rp.port_type = PciePortType::kRootPort;
    const NodeIndex port =
        b.add(NodeKind::kPciBridge, "pci/" + rp.address.to_string(), host, rp).value();
    PciFunctionInfo f;
    f.address = {static_cast<std::uint32_t>(domain - 1), static_cast<std::uint8_t>(1 + i % 32), 0,
                 0};
    f.vendor_id = 0x8086;
    f.device_id = 0x1572;
    f.class_code = 0x020000;
    f.driver = "i40e";
    f.numa_node = 0;
    f.pcie_root = pci_root_name(f.address.domain, 0);
    b.add(NodeKind::kPciDevice, "pci/" + f.address.to_string(), port, f).value();
  }
  return std::move(b).freeze();
}

}  // namespace nodetopo::test
