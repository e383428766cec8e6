#include "devices_fake_host.hpp"

#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <gtest/gtest.h>
#include <sched.h>

#include <nodetopo/probes/accelerator_probe.hpp>
#include <nodetopo/probes/kfd_probe.hpp>
#include <nodetopo/probes/net_probe.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/rdma_probe.hpp>

#include "captures.hpp"
#include "discover.hpp"
#include "fake_tree.hpp"

namespace nodetopo::test {

namespace fs = std::filesystem;

FakeHost::FakeHost() {
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.dir("sys");
  w.dir("proc");
  write_tree(root(), image);
}

void FakeHost::write(const std::string& rel, const std::string& content) const {
  // A test rewrites files (a KFD node's properties) to break them: the old entry is removed,
  // never written through, so a hard-linked capture file stays as it was.
  std::error_code ec;
  fs::remove(root() / rel, ec);
  mock::HostImage image;
  mock::ImageWriter(image).file(rel, content);
  write_tree(root(), image);
}

void FakeHost::link(const std::string& rel, const std::string& target_rel) const {
  mock::HostImage image;
  mock::ImageWriter(image).link(rel, target_rel);
  write_tree(root(), image);
}

void FakeHost::raw_link(const std::string& rel, const std::string& target) const {
  mock::HostImage image;
  mock::ImageWriter(image).raw_link(rel, target);
  write_tree(root(), image);
}

std::string FakeHost::add_pci(const Pci& pci, const std::string& parent_dir) const {
  // "0000:1b:00.0" -> root bus "pci0000:1b"
  const std::size_t colon = pci.bdf.rfind(':');
  const std::string root_bus = "pci" + pci.bdf.substr(0, colon);
  const std::string parent = parent_dir.empty() ? "sys/devices/" + root_bus : parent_dir;
  const std::string dir = parent + "/" + pci.bdf;
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.attr(dir + "/vendor", mock::hex_id(pci.vendor, 4));
  w.attr(dir + "/device", mock::hex_id(pci.device, 4));
  w.attr(dir + "/class", mock::hex_id(pci.class_code, 6));
  w.attr(dir + "/subsystem_vendor", mock::hex_id(pci.vendor, 4));
  w.attr(dir + "/subsystem_device", "0x0000");
  w.attr(dir + "/revision", "0x00");
  // Standard header: ids, class, header type 0, no capabilities.
  std::string config(64, '\0');
  config[0] = static_cast<char>(pci.vendor & 0xff);
  config[1] = static_cast<char>(pci.vendor >> 8);
  config[2] = static_cast<char>(pci.device & 0xff);
  config[3] = static_cast<char>(pci.device >> 8);
  config[6] = 0x10;  // status: a capability list, as every PCI Express function has
  config[9] = static_cast<char>(pci.class_code & 0xff);
  config[10] = static_cast<char>((pci.class_code >> 8) & 0xff);
  config[11] = static_cast<char>((pci.class_code >> 16) & 0xff);
  config[44] = config[0];
  config[45] = config[1];
  w.file(dir + "/config", config);
  if (!pci.driver.empty()) w.link(dir + "/driver", "sys/bus/pci/drivers/" + pci.driver);
  w.link("sys/bus/pci/devices/" + pci.bdf, dir);
  write_tree(root(), image);
  return dir;
}

std::string FakeHost::add_net(const std::string& name, const std::string& device_dir,
                              const std::map<std::string, std::string>& attrs) const {
  const std::string dir =
      device_dir.empty() ? "sys/devices/virtual/net/" + name : device_dir + "/net/" + name;
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.dir(dir);
  for (const auto& [attr, value] : attrs)
    w.attr(dir + "/" + attr, value);
  if (!device_dir.empty()) w.link(dir + "/device", device_dir);
  w.link("sys/class/net/" + name, dir);
  write_tree(root(), image);
  return dir;
}

std::string FakeHost::add_rdma(
    const std::string& name, const std::string& device_dir, const std::string& node_guid,
    const std::map<int, std::map<std::string, std::string>>& ports) const {
  const std::string dir = device_dir.empty() ? "sys/devices/virtual/infiniband/" + name
                                             : device_dir + "/infiniband/" + name;
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.dir(dir);
  if (!node_guid.empty()) w.attr(dir + "/node_guid", node_guid);
  for (const auto& [number, files] : ports) {
    const std::string port_dir = dir + "/ports/" + std::to_string(number);
    w.dir(port_dir);
    for (const auto& [file, value] : files)
      w.attr(port_dir + "/" + file, value);
  }
  if (!device_dir.empty()) w.link(dir + "/device", device_dir);
  w.link("sys/class/infiniband/" + name, dir);
  write_tree(root(), image);
  return dir;
}

void FakeHost::copy_kfd_nodes(const fs::path& nodes_dir) const {
  mock::HostImage image;
  mock::ImageWriter(image).dir("sys/class/kfd/kfd/topology");
  write_tree(root(), image);
  const fs::path target = root() / "sys/class/kfd/kfd/topology/nodes";
  // Hard links spare copying the data of thousands of small files (the MI300X capture has 4000);
  // across file systems they fail, and a plain copy does.
  std::error_code ec;
  fs::copy(nodes_dir, target, fs::copy_options::recursive | fs::copy_options::create_hard_links,
           ec);
  if (ec) {
    fs::remove_all(target);
    fs::copy(nodes_dir, target, fs::copy_options::recursive);
  }
}

probes::SysRoot FakeHost::sys_root(probes::SysRoot::PathWalk walk) const {
  auto opened = probes::SysRoot::open(root(), probes::SysRoot::Liveness::kCapture, walk);
  if (!opened) throw std::runtime_error(opened.error().describe());
  return std::move(opened.value());
}

probes::Discovery discover_capture(const std::string& name) {
  auto root = probes::SysRoot::open(capture_root(name), probes::SysRoot::Liveness::kCapture);
  if (!root) throw std::runtime_error(root.error().describe());
  return ::nodetopo::test::discover(root.value());
}

std::vector<std::unique_ptr<probes::Probe>> device_probes() {
  std::vector<std::unique_ptr<probes::Probe>> list;
  list.push_back(std::make_unique<probes::PciProbe>());
  list.push_back(std::make_unique<probes::NetProbe>());
  list.push_back(std::make_unique<probes::RdmaProbe>());
  list.push_back(std::make_unique<probes::AcceleratorProbe>());
  list.push_back(std::make_unique<probes::KfdProbe>());
  return list;
}

probes::Discovery run(const probes::SysRoot& root,
                      const std::vector<std::unique_ptr<probes::Probe>>& probes) {
  return ::nodetopo::test::run_probes(root, probes, probes::ProbeOptions{});
}

bool several_cpus() {
  cpu_set_t all;
  return ::sched_getaffinity(0, sizeof all, &all) == 0 && CPU_COUNT(&all) > 1;
}

probes::Discovery run_on_one_cpu(const probes::SysRoot& root,
                                 const std::vector<std::unique_ptr<probes::Probe>>& probes) {
  cpu_set_t all;
  if (::sched_getaffinity(0, sizeof all, &all) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_getaffinity");
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &all)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  if (::sched_setaffinity(0, sizeof one, &one) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_setaffinity");
  }
  probes::Discovery d = run(root, probes);
  if (::sched_setaffinity(0, sizeof all, &all) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_setaffinity (restore)");
  }
  return d;
}

const ProbeReport& report_of(const probes::Discovery& discovery, std::string_view name) {
  for (const ProbeReport& r : discovery.reports) {
    if (r.probe == name) return r;
  }
  ADD_FAILURE() << "no report of probe " << name;
  static const ProbeReport kNone;
  return kNone;
}

std::string parent_id(const Topology& topo, std::string_view id) {
  const auto index = topo.find(id);
  if (!index) return "<no node " + std::string(id) + ">";
  const NodeIndex parent = topo.node(*index).parent;
  return parent == kNoNode ? "<root>" : topo.node(parent).id;
}

}  // namespace nodetopo::test
