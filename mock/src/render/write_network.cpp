// Network interfaces (sys/class/net) and RDMA devices (sys/class/infiniband) of the PCI
// functions, the loopback interface and the profile's virtual interfaces.
#include <string>

#include "plan/identity.hpp"
#include "plan/net_names.hpp"
#include "render/writers.hpp"

namespace nodetopo::mock::detail {

namespace {

constexpr std::string_view kIbBroadcast =
    "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff";

void write_netdev(const Plan& plan, const PlanNetPort& port, ImageWriter& out) {
  const PlanFunction& f = plan.functions[port.function];
  const std::string dir = f.dir + "/net/" + port.netdev;
  out.attr(dir + "/address", port.mac);
  out.attr(dir + "/addr_len", port.infiniband ? "20" : "6");
  out.attr(dir + "/addr_assign_type", "0");
  out.attr(dir + "/broadcast", port.infiniband ? kIbBroadcast : "ff:ff:ff:ff:ff:ff");
  out.attr(dir + "/carrier", port.up ? "1" : "0");
  out.attr(dir + "/dev_id", "0x0");
  out.attr(dir + "/dev_port", std::to_string(port.dev_port));
  out.attr(dir + "/duplex", port.up ? "full" : "unknown");
  out.attr(dir + "/flags", port.up ? "0x1003" : "0x1002");
  out.attr(dir + "/ifindex", std::to_string(port.ifindex));
  out.attr(dir + "/iflink", std::to_string(port.ifindex));
  out.attr(dir + "/mtu", std::to_string(port.mtu));
  out.attr(dir + "/operstate", port.up ? "up" : "down");
  // Mb/s; the kernel answers -1 (SPEED_UNKNOWN) while the carrier is down.
  out.attr(dir + "/speed", port.up ? std::to_string(std::uint64_t{port.rate_gbps} * 1000) : "-1");
  out.attr(dir + "/tx_queue_len", port.infiniband ? "256" : "1000");
  out.attr(dir + "/type", port.infiniband ? "32" : "1");
  if (!port.phys_port_name.empty()) out.attr(dir + "/phys_port_name", port.phys_port_name);
  out.file(dir + "/uevent",
           "INTERFACE=" + port.netdev + "\nIFINDEX=" + std::to_string(port.ifindex) + "\n");
  out.link(dir + "/device", f.dir);
  out.link(dir + "/subsystem", "sys/class/net");
  out.link("sys/class/net/" + port.netdev, dir);
}

void write_rdma(const Plan& plan, std::size_t index, ImageWriter& out) {
  const PlanRdma& rd = plan.rdma[index];
  const PlanFunction& f = plan.functions[rd.function];
  const std::string dir = f.dir + "/infiniband/" + rd.name;
  const Profile& p = *plan.profile;
  const std::string hostname = p.machine.hostname.empty() ? "mock-" + p.name : p.machine.hostname;
  out.attr(dir + "/node_guid", format_guid(rd.node_guid));
  out.attr(dir + "/sys_image_guid", format_guid(rd.node_guid));
  out.attr(dir + "/node_type", "1: CA");
  out.attr(dir + "/node_desc", hostname + " " + rd.name);
  out.attr(dir + "/fw_ver",
           rd.model != nullptr && !rd.model->fw_ver.empty() ? rd.model->fw_ver : "1.0.0");
  if (rd.model != nullptr && !rd.model->hca_type.empty()) {
    out.attr(dir + "/hca_type", rd.model->hca_type);
    out.attr(dir + "/board_id", rd.model->board_id);
  }
  out.attr(dir + "/hw_rev", "0x0");
  out.file(dir + "/uevent", "NAME=" + rd.name + "\n");
  out.link(dir + "/device", f.dir);
  out.link(dir + "/subsystem", "sys/class/infiniband");
  out.link("sys/class/infiniband/" + rd.name, dir);
  for (std::size_t i = 0; i < rd.ports.size(); ++i) {
    const PlanNetPort& port = plan.net_ports[rd.ports[i]];
    const std::string pdir = dir + "/ports/" + std::to_string(i + 1);
    out.attr(pdir + "/state", port.up ? "4: ACTIVE" : "1: DOWN");
    out.attr(pdir + "/phys_state", port.up ? "5: LinkUp" : "3: Disabled");
    out.attr(pdir + "/rate", rate_text(port.rate_gbps));
    out.attr(pdir + "/link_layer", port.infiniband ? "InfiniBand" : "Ethernet");
    // InfiniBand ports get a LID from the subnet manager; RoCE ports have none.
    const std::uint64_t lid = port.infiniband ? 1 + (port.port_guid % 0xbfff) : 0;
    out.attr(pdir + "/lid", hex_id(static_cast<std::uint32_t>(lid), 1));
    out.attr(pdir + "/sm_lid", port.infiniband ? "0x1" : "0x0");
    out.attr(pdir + "/lid_mask_count", "0");
    out.attr(pdir + "/sm_sl", "0");
    out.attr(pdir + "/cap_mask", port.infiniband ? "0xa651e848" : "0x00010000");
    out.attr(pdir + "/gids/0", format_gid(port.port_guid));
    out.attr(pdir + "/gid_attrs/types/0", port.infiniband ? "IB/RoCE v1" : "RoCE v2");
    if (!port.infiniband) out.attr(pdir + "/gid_attrs/ndevs/0", port.netdev);
  }
  const std::string verbs = f.dir + "/infiniband_verbs/uverbs" + std::to_string(index);
  out.attr(verbs + "/ibdev", rd.name);
  out.link(verbs + "/device", f.dir);
  out.link("sys/class/infiniband_verbs/uverbs" + std::to_string(index), verbs);
}

void write_virtual_netdev(const Plan& plan, const std::string& name, std::uint32_t ifindex,
                          bool loopback, ImageWriter& out) {
  const std::string dir = "sys/devices/virtual/net/" + name;
  const auto tail = identity_bytes3(plan.profile->seed, "virtual-mac", name);
  out.attr(dir + "/address", loopback ? "00:00:00:00:00:00" : format_mac(0x02a0c9, tail));
  out.attr(dir + "/addr_len", "6");
  out.attr(dir + "/broadcast", loopback ? "00:00:00:00:00:00" : "ff:ff:ff:ff:ff:ff");
  out.attr(dir + "/carrier", "1");
  out.attr(dir + "/flags", loopback ? "0x9" : "0x1003");
  out.attr(dir + "/ifindex", std::to_string(ifindex));
  out.attr(dir + "/iflink", std::to_string(ifindex));
  out.attr(dir + "/mtu", loopback ? "65536" : "1500");
  out.attr(dir + "/operstate", loopback ? "unknown" : "up");
  out.attr(dir + "/tx_queue_len", "1000");
  out.attr(dir + "/type", loopback ? "772" : "1");
  out.file(dir + "/uevent", "INTERFACE=" + name + "\nIFINDEX=" + std::to_string(ifindex) + "\n");
  out.link(dir + "/subsystem", "sys/class/net");
  out.link("sys/class/net/" + name, dir);
}

}  // namespace

void write_network(const Plan& plan, ImageWriter& out) {
  out.dir("sys/class/net");
  write_virtual_netdev(plan, "lo", 1, true, out);
  std::uint32_t ifindex = 2;
  for (const PlanNetPort& port : plan.net_ports) {
    write_netdev(plan, port, out);
    ifindex = std::max(ifindex, port.ifindex + 1);
  }
  for (const std::string& name : plan.virtual_netdevs) {
    write_virtual_netdev(plan, name, ifindex++, false, out);
  }
  if (!plan.rdma.empty()) out.dir("sys/class/infiniband");
  for (std::size_t i = 0; i < plan.rdma.size(); ++i)
    write_rdma(plan, i, out);
}

}  // namespace nodetopo::mock::detail
