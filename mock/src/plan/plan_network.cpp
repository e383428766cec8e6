// Pass 4: network interfaces and RDMA devices of the planned NICs and accelerators, then the
// profile's virtual interfaces (written by render/write_network.cpp).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/identity.hpp"
#include "plan/net_names.hpp"
#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

// Interfaces are planned in device (address) order, so ifindexes count up from 2 (1 is lo) the
// way a kernel that probes the bus in order assigns them, and virtual interfaces come after.
// Names default to systemd's predictable names (net_names.cpp), so profiles read like the hosts
// they copy. MACs and GUIDs come from the seed and the function's address under the vendor's
// OUI (a locally administered one for other vendors), stable across builds of a profile.
void Planner::plan_network() {
  // Name -> field that took it (copied: default ports live only during this loop).
  std::map<std::string, std::string> netdevs{{"lo", "the loopback interface"}};
  std::map<std::string, std::string> rdma_names;
  std::map<std::string, std::size_t> rdma_counters;
  std::uint32_t ifindex = 2;
  for (std::size_t di = 0; di < plan_.devices.size(); ++di) {
    PlanDevice& d = plan_.devices[di];
    const DeviceSpec& spec = *d.spec;
    std::vector<NetPortSpec> ports = spec.ports;
    if (ports.empty() && d.type == DeviceType::kNic) {
      NetPortSpec one;
      one.link_layer.clear();
      one.origin = spec.origin;
      ports.push_back(one);
    }
    if (ports.empty()) continue;
    const Model* model = d.model;
    const bool port_functions =
        d.type == DeviceType::kNic && (model == nullptr || model->port_per_function);
    const std::string prefix = model != nullptr ? std::string(model->rdma_prefix) : "";
    std::optional<std::size_t> shared_rdma;
    for (std::uint32_t pi = 0; pi < ports.size(); ++pi) {
      const NetPortSpec& port = ports[pi];
      const std::size_t fi = d.functions[port_functions ? pi : 0];
      const PlanFunction& f = plan_.functions[fi];
      PlanNetPort np;
      np.function = fi;
      np.dev_port = port_functions ? 0 : pi;
      const std::string layer = !port.link_layer.empty() ? port.link_layer
                                : model != nullptr       ? std::string(model->default_link_layer)
                                                         : "Ethernet";
      np.infiniband = layer == "InfiniBand";
      np.rate_gbps =
          port.rate_gbps != 0 ? port.rate_gbps : (model != nullptr ? model->default_rate_gbps : 0);
      if (np.rate_gbps == 0) {
        fail(port.origin, "rate", "required field is missing (no model gives it)");
        return;
      }
      if (np.infiniband && infiniband_rate_name(np.rate_gbps).empty()) {
        fail(port.origin, "rate",
             std::to_string(np.rate_gbps) + " Gb/s is not an InfiniBand rate (" +
                 infiniband_rates() + ")");
        return;
      }
      np.up = port.up;
      np.mtu = port.mtu != 0 ? port.mtu : (np.infiniband ? 4092 : 1500);
      np.driver = model != nullptr && !model->netdev_driver.empty()
                      ? std::string(model->netdev_driver)
                      : f.driver;
      // ConnectX Ethernet uplinks report phys_port_name p<port>, which systemd appends.
      if (port_functions && f.vendor == pci_vendor::kMellanox && !np.infiniband) {
        np.phys_port_name = "p" + std::to_string(f.function_index);
      }
      np.netdev =
          !port.netdev.empty()
              ? port.netdev
              : predictable_name(f.address, np.infiniband, f.multifunction,
                                 port_functions ? std::nullopt : std::optional<std::uint32_t>(pi),
                                 np.phys_port_name);
      if (auto problem = netdev_name_problem(np.netdev); !problem.empty()) {
        fail(port.origin, "netdev", "'" + np.netdev + "' " + problem);
        return;
      }
      if (auto [it, inserted] = netdevs.emplace(np.netdev, port.origin.field); !inserted) {
        fail(port.origin, "netdev",
             "interface name '" + np.netdev + "' is already used by " + it->second);
        return;
      }
      const std::uint32_t oui =
          f.vendor == pci_vendor::kMellanox ? 0xb83fd2U : 0x02dd00U | (f.vendor & 0xffU);
      const auto tail =
          identity_bytes3(p_.seed, "mac", f.address.to_string() + "/" + std::to_string(pi));
      np.port_guid = guid_from(oui, tail);
      np.mac = np.infiniband ? ipoib_address(np.port_guid) : format_mac(oui, tail);
      np.ifindex = ifindex++;

      // RDMA: ConnectX gives each function its own device, Gaudi one device for all ports.
      const bool wants_rdma = !prefix.empty() || !port.rdma.empty() || !spec.rdma.empty();
      if (wants_rdma) {
        if (port_functions || !shared_rdma) {
          std::string name = port_functions ? port.rdma : spec.rdma;
          const Origin& where = port_functions ? port.origin : spec.origin;
          if (name.empty()) {
            const std::string pre = prefix.empty() ? "rdma" : prefix;
            name = pre + std::to_string(rdma_counters[pre]++);
          }
          if (auto [it, inserted] = rdma_names.emplace(name, where.field); !inserted) {
            fail(where, "rdma", "RDMA device name '" + name + "' is already used by " + it->second);
            return;
          }
          PlanRdma rd;
          rd.name = name;
          rd.function = fi;
          rd.model = model;
          rd.node_guid =
              port_functions
                  ? np.port_guid
                  : guid_from(oui, identity_bytes3(p_.seed, "node-guid", f.address.to_string()));
          plan_.rdma.push_back(rd);
          if (!port_functions) shared_rdma = plan_.rdma.size() - 1;
          np.rdma = plan_.rdma.size() - 1;
        } else {
          np.rdma = shared_rdma;
        }
        PlanRdma& rd = plan_.rdma[*np.rdma];
        np.rdma_port = static_cast<std::uint32_t>(rd.ports.size()) + 1;
        if (!port_functions) np.port_guid = rd.node_guid + np.rdma_port;
        rd.ports.push_back(plan_.net_ports.size());
        plan_.functions[fi].dsn = rd.node_guid;
      }
      d.net_ports.push_back(plan_.net_ports.size());
      plan_.net_ports.push_back(np);
    }
  }
  for (const std::string& name : p_.virtual_netdevs) {
    static const Origin kVirtual{"network.virtual", 0};
    if (auto problem = netdev_name_problem(name); !problem.empty()) {
      fail(kVirtual, "", "'" + name + "' " + problem);
      return;
    }
    if (auto [it, inserted] = netdevs.emplace(name, kVirtual.field); !inserted) {
      fail(kVirtual, "", "interface name '" + name + "' is already used by " + it->second);
      return;
    }
    plan_.virtual_netdevs.push_back(name);
  }
}

}  // namespace nodetopo::mock::detail
