// The PCI hierarchy: one directory per function nested like the bus topology, the attributes
// the kernel exposes, and the bus/driver/slot indexes that point into it.
#include <array>
#include <cstdio>
#include <set>
#include <string>

#include "plan/config_space.hpp"
#include "render/writers.hpp"

namespace nodetopo::mock::detail {

namespace {

std::string modalias(const PlanFunction& f) {
  std::array<char, 96> buf{};
  std::snprintf(buf.data(), buf.size(), "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", f.vendor,
                f.device, f.subsystem_vendor, f.subsystem_device, (f.class_code >> 16) & 0xff,
                (f.class_code >> 8) & 0xff, f.class_code & 0xff);
  return buf.data();
}

std::string uevent(const PlanFunction& f) {
  std::array<char, 160> buf{};
  std::snprintf(buf.data(), buf.size(),
                "PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\n",
                f.class_code, f.vendor, f.device, f.subsystem_vendor, f.subsystem_device,
                f.address.to_string().c_str());
  std::string out = f.driver.empty() ? "" : "DRIVER=" + f.driver + "\n";
  return out + buf.data() + "MODALIAS=" + modalias(f) + "\n";
}

std::string resource_file() {
  // Seventeen resources (6 BARs, ROM, 6 IOV BARs, 4 bridge windows), none assigned.
  std::string out;
  for (int i = 0; i < 17; ++i)
    out += "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";
  return out;
}

void write_function(const Plan& plan, const PlanFunction& f, ImageWriter& out) {
  const auto total = static_cast<std::uint32_t>(plan.cpus.size());
  const std::string& d = f.dir;
  const CpuSet& cpus = locality(plan, f.numa);
  out.attr(d + "/vendor", hex_id(f.vendor, 4));
  out.attr(d + "/device", hex_id(f.device, 4));
  out.attr(d + "/subsystem_vendor", hex_id(f.subsystem_vendor, 4));
  out.attr(d + "/subsystem_device", hex_id(f.subsystem_device, 4));
  out.attr(d + "/class", hex_id(f.class_code, 6));
  out.attr(d + "/revision", hex_id(f.revision, 2));
  out.file(d + "/config", config_space(f));
  out.attr(d + "/numa_node", std::to_string(f.numa));
  out.attr(d + "/local_cpus", cpumask(cpus, total));
  out.attr(d + "/local_cpulist", cpus.to_list());
  out.attr(d + "/irq", "0");
  out.attr(d + "/modalias", modalias(f));
  out.file(d + "/uevent", uevent(f));
  out.file(d + "/resource", resource_file());
  // Link attributes: VFs and root-complex integrated endpoints have no link of their own.
  out.attr(d + "/current_link_speed", link_speed_text(f.current.speed_mts));
  out.attr(d + "/current_link_width", std::to_string(f.current.width));
  out.attr(d + "/max_link_speed", link_speed_text(f.cap.speed_mts));
  out.attr(d + "/max_link_width", std::to_string(f.cap.width));
  if (f.bridge) {
    out.attr(d + "/secondary_bus_number", std::to_string(f.secondary));
    out.attr(d + "/subordinate_bus_number", std::to_string(f.subordinate));
  }
  out.link(d + "/subsystem", "sys/bus/pci");
  if (!f.driver.empty()) {
    out.link(d + "/driver", "sys/bus/pci/drivers/" + f.driver);
    out.link("sys/bus/pci/drivers/" + f.driver + "/" + f.address.to_string(), d);
  }
  out.link("sys/bus/pci/devices/" + f.address.to_string(), d);
  if (f.total_vfs != 0) {
    out.attr(d + "/sriov_totalvfs", std::to_string(f.total_vfs));
    out.attr(d + "/sriov_numvfs", std::to_string(f.num_vfs));
    out.attr(d + "/sriov_offset", std::to_string(f.vf_offset));
    out.attr(d + "/sriov_stride", std::to_string(f.vf_stride));
    std::array<char, 16> vf{};
    std::snprintf(vf.data(), vf.size(), "%x", f.vf_device);
    out.attr(d + "/sriov_vf_device", vf.data());
    out.attr(d + "/sriov_drivers_autoprobe", "1");
    for (std::size_t i = 0; i < f.vfs.size(); ++i) {
      out.link(d + "/virtfn" + std::to_string(i), plan.functions[f.vfs[i]].dir);
    }
  }
  if (f.pf) out.link(d + "/physfn", plan.functions[*f.pf].dir);
  if (f.physical_slot) {
    // The slot names the device behind the port: domain:bus:device of its secondary bus.
    std::array<char, 32> slot_addr{};
    std::snprintf(slot_addr.data(), slot_addr.size(), "%04x:%02x:00", f.address.domain,
                  f.secondary);
    const std::string slot = "sys/bus/pci/slots/" + std::to_string(*f.physical_slot);
    out.attr(slot + "/address", slot_addr.data());
    out.attr(slot + "/max_bus_speed", link_speed_text(f.cap.speed_mts));
    out.attr(slot + "/cur_bus_speed", link_speed_text(f.current.speed_mts));
  }
}

}  // namespace

void write_pci(const Plan& plan, ImageWriter& out) {
  const auto total = static_cast<std::uint32_t>(plan.cpus.size());
  out.dir("sys/bus/pci/devices");
  out.dir("sys/bus/pci/drivers");
  out.dir("sys/bus/pci/slots");
  std::set<std::string> drivers;
  for (const PlanFunction& f : plan.functions) {
    if (!f.driver.empty()) drivers.insert(f.driver);
  }
  for (const std::string& driver : drivers) {
    out.attr("sys/bus/pci/drivers/" + driver + "/uevent", "");
  }
  for (const RootComplexSpec& rc : plan.profile->pci) {
    // The root bus directory and its pci_bus entry (bus CPU affinity).
    const std::string root = pci_root_name(rc.domain, rc.bus);
    std::array<char, 16> bus{};
    std::snprintf(bus.data(), bus.size(), "%04x:%02x", rc.domain, rc.bus);
    const std::string bus_dir = "sys/devices/" + root + "/pci_bus/" + bus.data();
    const CpuSet& cpus = locality(plan, rc.numa);
    out.attr(bus_dir + "/cpuaffinity", cpumask(cpus, total));
    out.attr(bus_dir + "/cpulistaffinity", cpus.to_list());
    out.link("sys/class/pci_bus/" + std::string(bus.data()), bus_dir);
    out.attr("sys/devices/" + root + "/uevent", "");
  }
  for (std::size_t index : plan.function_order)
    write_function(plan, plan.functions[index], out);
}

}  // namespace nodetopo::mock::detail
