// Pass 2, continued: the PCI functions of one device, below the port plan_pci.cpp planned for it
// or on a root bus (integrated endpoints) — identity from the profile over its model, one
// function per port on NICs whose ports are functions (ConnectX), and SR-IOV virtual functions
// (written by render/write_pci.cpp and render/write_accelerators.cpp).
#include <algorithm>
#include <cstdint>
#include <string>

#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

// Every field the profile leaves out comes from the model; a device given by IDs only (no
// model) gets zeros and no driver. Devices are appended in profile order here and sorted by
// address afterwards (plan_devices.cpp), so the device_index each function records is
// provisional until sort_devices() renumbers it.
void Planner::add_device(const DeviceSpec& d, std::uint8_t bus, std::uint8_t dev,
                         std::uint8_t fn_base, const std::string& parent_dir, const PcieLink& cap,
                         const PcieLink& current, bool integrated) {
  const Model* model = d.model.empty() ? nullptr : find_model(d.model);
  PlanDevice pd;
  pd.spec = &d;
  pd.model = model;
  pd.type = d.type;
  pd.numa = d.numa.value_or(numa_);
  if (d.numa) check_numa(d.origin, "numa", *d.numa);
  pd.product = d.product.value_or(model != nullptr ? std::string(model->product) : "");
  pd.memory_bytes =
      d.memory_bytes != 0 ? d.memory_bytes : (model != nullptr ? model->memory_bytes : 0);
  pd.capacity_bytes =
      d.capacity_bytes != 0 ? d.capacity_bytes : (model != nullptr ? model->capacity_bytes : 0);
  pd.serial = d.serial;
  pd.uuid = d.uuid;
  check_device_fields(d, model, pd);
  if (error_) return;

  const bool port_functions =
      d.type == DeviceType::kNic && (model == nullptr || model->port_per_function);
  std::uint32_t nfunc = d.functions != 0 ? d.functions : 1;
  if (port_functions)
    nfunc = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(d.ports.size()));
  if (fn_base + nfunc > 8) {
    fail(d.origin, port_functions ? "ports" : "functions",
         "a PCI device has at most 8 functions (" + std::to_string(fn_base) + " + " +
             std::to_string(nfunc) + " asked)");
    return;
  }
  // A NIC gets the InfiniBand controller class only when every port is InfiniBand; a card with
  // any Ethernet port is planned as an Ethernet controller (one class code per function).
  bool infiniband = !d.ports.empty();
  for (const NetPortSpec& port : d.ports) {
    const std::string layer = !port.link_layer.empty() ? port.link_layer
                              : model != nullptr       ? std::string(model->default_link_layer)
                                                       : "Ethernet";
    infiniband = infiniband && layer == "InfiniBand";
  }
  if (d.ports.empty() && d.type == DeviceType::kNic) {
    infiniband = model != nullptr && model->default_link_layer == "InfiniBand";
  }
  std::uint32_t class_code = 0;
  if (d.class_code) {
    class_code = *d.class_code;
  } else if (model != nullptr) {
    class_code = nic_class(*model, infiniband);
  }
  const std::size_t device_index = plan_.devices.size();
  std::uint32_t next_rid = (std::uint32_t{dev} << 3) + fn_base + nfunc;
  for (std::uint32_t i = 0; i < nfunc; ++i) {
    const PciAddress addr{domain_, bus, dev, static_cast<std::uint8_t>(fn_base + i)};
    if (!claim(addr, d.origin, integrated ? "address" : "")) return;
    PlanFunction f;
    f.address = addr;
    f.dir = parent_dir + "/" + addr.to_string();
    f.role = integrated ? FunctionRole::kIntegratedEndpoint : FunctionRole::kEndpoint;
    f.vendor = d.vendor.value_or(model != nullptr ? model->vendor : 0);
    f.device = d.device.value_or(model != nullptr ? model->device : 0);
    f.subsystem_vendor =
        d.subsystem_vendor.value_or(model != nullptr ? model->subsystem_vendor : f.vendor);
    f.subsystem_device =
        d.subsystem_device.value_or(model != nullptr ? model->subsystem_device : 0);
    f.class_code = class_code;
    f.revision = d.revision.value_or(model != nullptr ? model->revision : 0);
    f.driver = d.driver.value_or(model != nullptr ? std::string(model->driver) : "");
    f.cap = cap;
    f.current = current;
    f.numa = pd.numa;
    f.multifunction = nfunc > 1;
    f.device_index = device_index;
    f.function_index = i;
    const std::size_t pf_index = push(std::move(f));
    pd.functions.push_back(pf_index);
    if (d.sriov.total_vfs == 0) continue;
    // VFs follow all physical functions: VF routing IDs = PF's + offset + stride * n.
    PlanFunction& pf = plan_.functions[pf_index];
    const std::uint32_t pf_rid = (std::uint32_t{dev} << 3) + fn_base + i;
    pf.total_vfs = d.sriov.total_vfs;
    pf.num_vfs = d.sriov.num_vfs;
    pf.vf_offset = static_cast<std::uint16_t>(next_rid - pf_rid);
    pf.vf_stride = 1;
    pf.vf_device = model != nullptr ? model->vf_device : 0;
    if (pf.vf_device == 0) {
      fail(d.origin, "sriov",
           "SR-IOV needs a model with virtual functions (cx7, cx6, bf3); this device has "
           "none");
      return;
    }
    if (next_rid + d.sriov.total_vfs > 256) {
      fail(d.origin, "sriov.total_vfs",
           "the VFs do not fit on bus " + hex2(bus) + " (at most 256 functions per bus)");
      return;
    }
    const std::uint16_t vf_device = pf.vf_device;
    for (std::uint32_t v = 0; v < d.sriov.num_vfs; ++v) {
      const std::uint32_t rid = next_rid + v;
      const PciAddress vaddr{domain_, bus, static_cast<std::uint8_t>(rid >> 3),
                             static_cast<std::uint8_t>(rid & 7)};
      if (!claim(vaddr, d.origin, "sriov")) return;
      PlanFunction vf = plan_.functions[pf_index];
      vf.address = vaddr;
      vf.dir = parent_dir + "/" + vaddr.to_string();
      vf.role = FunctionRole::kVirtualFunction;
      vf.device = vf_device;
      vf.cap = {};
      vf.current = {};
      vf.multifunction = false;
      vf.total_vfs = 0;
      vf.num_vfs = 0;
      vf.vf_offset = 0;
      vf.vf_device = 0;
      vf.pf = pf_index;
      const std::size_t vf_index = push(std::move(vf));
      plan_.functions[pf_index].vfs.push_back(vf_index);
    }
    next_rid += d.sriov.total_vfs;
  }
  plan_.devices.push_back(std::move(pd));
}

// Field checks that depend on the type and the model.
void Planner::check_device_fields(const DeviceSpec& d, const Model* model, const PlanDevice& pd) {
  const bool compute = d.type == DeviceType::kGpu || d.type == DeviceType::kAccelerator;
  if (compute && pd.memory_bytes == 0) {
    fail(d.origin, "memory", "required field is missing (no model gives it)");
  }
  if (d.sharing && !compute) {
    fail(d.origin, "sharing", "only gpus and accelerators are shared");
  }
  if (!d.ports.empty() && d.type != DeviceType::kNic && d.type != DeviceType::kAccelerator) {
    fail(d.origin, "ports", "only nics and accelerators have network ports");
  }
  if (d.sriov.total_vfs != 0 && d.type != DeviceType::kNic) {
    fail(d.origin, "sriov", "only nics have SR-IOV virtual functions here");
  }
  const bool port_functions =
      d.type == DeviceType::kNic && (model == nullptr || model->port_per_function);
  if (!d.rdma.empty() && port_functions) {
    fail(d.origin, "rdma", "each port of this NIC is its own function: set rdma on the ports");
  }
  if (d.functions > 1 && d.type != DeviceType::kOther) {
    fail(d.origin, "functions", "only `other` devices take a function count");
  }
  if (d.type == DeviceType::kNvme && pd.capacity_bytes == 0) {
    fail(d.origin, "capacity", "required field is missing (no model gives it)");
  }
  if (!d.nvml_fail.empty() &&
      !(d.type == DeviceType::kGpu && vendor_of(d, model) == pci_vendor::kNvidia)) {
    fail(d.origin, "nvml_fail", "only NVIDIA GPUs are NVML devices");
  }
}

std::uint16_t Planner::vendor_of(const DeviceSpec& d, const Model* model) {
  return d.vendor.value_or(model != nullptr ? model->vendor : 0);
}

}  // namespace nodetopo::mock::detail
