#include "devices_fake_host.hpp"

#include <array>
#include <cstdio>
#include <stdexcept>

#include <gtest/gtest.h>

#include <nodetopo/probes/accelerator_probe.hpp>
#include <nodetopo/probes/kfd_probe.hpp>
#include <nodetopo/probes/net_probe.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/probes/rdma_probe.hpp>

#include "discover.hpp"

namespace nodetopo::test {

namespace fs = std::filesystem;

namespace {

std::string hex(std::uint32_t value, int digits) {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "0x%0*x", digits, value);
  return buf.data();
}

// "../" for each directory above `rel`'s parent, so that a relative link reaches the root.
std::string up_to_root(const std::string& rel) {
  std::string out;
  for (char c : rel) {
    if (c == '/') out += "../";
  }
  return out;
}

}  // namespace

FakeHost::FakeHost() {
  fs::create_directories(root() / "sys");
  fs::create_directories(root() / "proc");
}

void FakeHost::write(const std::string& rel, const std::string& content) const {
  write_file(root() / rel, content);
}

void FakeHost::link(const std::string& rel, const std::string& target_rel) const {
  make_symlink(up_to_root(rel) + target_rel, root() / rel);
}

void FakeHost::raw_link(const std::string& rel, const std::string& target) const {
  make_symlink(target, root() / rel);
}

std::string FakeHost::add_pci(const Pci& pci, const std::string& parent_dir) const {
  // "0000:1b:00.0" -> root bus "pci0000:1b"
  const std::size_t colon = pci.bdf.rfind(':');
  const std::string root_bus = "pci" + pci.bdf.substr(0, colon);
  const std::string parent = parent_dir.empty() ? "sys/devices/" + root_bus : parent_dir;
  const std::string dir = parent + "/" + pci.bdf;
  write(dir + "/vendor", hex(pci.vendor, 4) + "\n");
  write(dir + "/device", hex(pci.device, 4) + "\n");
  write(dir + "/class", hex(pci.class_code, 6) + "\n");
  write(dir + "/subsystem_vendor", hex(pci.vendor, 4) + "\n");
  write(dir + "/subsystem_device", "0x0000\n");
  write(dir + "/revision", "0x00\n");
  // Standard header: ids, class, header type 0, no capabilities.
  std::string config(64, '\0');
  config[0] = static_cast<char>(pci.vendor & 0xff);
  config[1] = static_cast<char>(pci.vendor >> 8);
  config[2] = static_cast<char>(pci.device & 0xff);
  config[3] = static_cast<char>(pci.device >> 8);
  config[9] = static_cast<char>(pci.class_code & 0xff);
  config[10] = static_cast<char>((pci.class_code >> 8) & 0xff);
  config[11] = static_cast<char>((pci.class_code >> 16) & 0xff);
  config[44] = config[0];
  config[45] = config[1];
  write(dir + "/config", config);
  if (!pci.driver.empty()) link(dir + "/driver", "sys/bus/pci/drivers/" + pci.driver);
  link("sys/bus/pci/devices/" + pci.bdf, dir);
  return dir;
}

std::string FakeHost::add_net(const std::string& name, const std::string& device_dir,
                              const std::map<std::string, std::string>& attrs) const {
  const std::string dir =
      device_dir.empty() ? "sys/devices/virtual/net/" + name : device_dir + "/net/" + name;
  fs::create_directories(root() / dir);
  for (const auto& [attr, value] : attrs)
    write(dir + "/" + attr, value + "\n");
  if (!device_dir.empty()) link(dir + "/device", device_dir);
  link("sys/class/net/" + name, dir);
  return dir;
}

std::string FakeHost::add_rdma(
    const std::string& name, const std::string& device_dir, const std::string& node_guid,
    const std::map<int, std::map<std::string, std::string>>& ports) const {
  const std::string dir = device_dir.empty() ? "sys/devices/virtual/infiniband/" + name
                                             : device_dir + "/infiniband/" + name;
  fs::create_directories(root() / dir);
  if (!node_guid.empty()) write(dir + "/node_guid", node_guid + "\n");
  for (const auto& [number, files] : ports) {
    const std::string port_dir = dir + "/ports/" + std::to_string(number);
    fs::create_directories(root() / port_dir);
    for (const auto& [file, value] : files)
      write(port_dir + "/" + file, value + "\n");
  }
  if (!device_dir.empty()) link(dir + "/device", device_dir);
  link("sys/class/infiniband/" + name, dir);
  return dir;
}

void FakeHost::copy_kfd_nodes(const fs::path& nodes_dir) const {
  const fs::path target = root() / "sys/class/kfd/kfd/topology/nodes";
  fs::create_directories(target.parent_path());
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

probes::SysRoot FakeHost::sys_root() const {
  auto opened = probes::SysRoot::open(root(), probes::SysRoot::Liveness::kCapture);
  if (!opened) throw std::runtime_error(opened.error().describe());
  return std::move(opened.value());
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
