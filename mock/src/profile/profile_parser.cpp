// YAML -> Profile. This file checks form (keys, types, ranges); the planner (plan.cpp) checks
// what needs the whole host (references, bus numbers, NUMA nodes, names).
#include <algorithm>
#include <cctype>
#include <exception>
#include <string>

#include <nodetopo/base/strings.hpp>
#include <nodetopo/mock/profile.hpp>

#include "plan/plan.hpp"
#include "profile/catalog.hpp"
#include "profile/profile_yaml.hpp"
#include "profile/synthetic.hpp"

namespace nodetopo::mock {

using detail::Fields;
using detail::Reader;

std::string Origin::at(std::string_view subfield) const {
  std::string out;
  if (line > 0) out = "line " + std::to_string(line) + ": ";
  out += field;
  if (!subfield.empty()) out += (field.empty() ? "" : ".") + std::string(subfield);
  return out;
}

std::string_view to_string(DeviceType type) {
  switch (type) {
    case DeviceType::kGpu:
      return "gpu";
    case DeviceType::kNvSwitch:
      return "nvswitch";
    case DeviceType::kNic:
      return "nic";
    case DeviceType::kNvme:
      return "nvme";
    case DeviceType::kAccelerator:
      return "accelerator";
    case DeviceType::kOther:
      return "other";
  }
  return "other";
}

std::string_view to_string(FabricKind kind) {
  return kind == FabricKind::kNvlink ? "nvlink" : "xgmi";
}

namespace {

bool absent(const YAML::Node& n) {
  return !n.IsDefined() || n.IsNull();
}

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// A list node: absent gives an empty list; anything else but a sequence is an error.
std::vector<YAML::Node> list_items(Reader& r, const YAML::Node& n, const std::string& path) {
  std::vector<YAML::Node> items;
  if (absent(n)) return items;
  if (!n.IsSequence()) {
    r.fail(n, path, "expected a list");
    return items;
  }
  for (std::size_t i = 0; i < n.size(); ++i)
    items.push_back(n[i]);
  return items;
}

template <class T>
void assign(std::optional<T>& target, const std::optional<std::uint64_t>& value) {
  if (value) target = static_cast<T>(*value);
}

class ProfileParser {
 public:
  explicit ProfileParser(Reader& reader) : r_(reader) {}

  Profile parse(const YAML::Node& root) {
    Profile p;
    Fields f(r_, root, "");
    // Only version 1 exists; read_uint records a wrong one, require() a missing one.
    (void)detail::read_uint(r_, f.require("version"), "version", 1, 1);
    p.name = detail::read_string(r_, f.require("name"), "name").value_or("");
    if (!p.name.empty() && !valid_name(p.name)) {
      r_.fail(root["name"], "name", "'" + p.name + "' must be lowercase letters, digits and '-'");
    }
    p.description = detail::read_string(r_, f.require("description"), "description").value_or("");
    if (p.description.find('\n') != std::string::npos) {
      r_.fail(root["description"], "description", "must be one line");
    }
    p.seed = detail::read_string(r_, f.take("seed"), "seed").value_or(p.name);
    parse_machine(f.take("machine"), p);
    parse_nvidia(f.take("nvidia"), p.nvidia);
    parse_network(f.take("network"), p);
    const YAML::Node synthetic = f.take("synthetic");
    const YAML::Node cpu = f.take("cpu");
    const YAML::Node numa = f.take("numa");
    const YAML::Node pci = f.take("pci");
    const YAML::Node links = f.take("links");
    f.done();
    if (!absent(synthetic)) {
      for (const auto& [key, node] : {std::pair{"cpu", cpu}, std::pair{"numa", numa},
                                      std::pair{"pci", pci}, std::pair{"links", links}}) {
        if (!absent(node)) {
          r_.fail(node, key,
                  "a synthetic profile generates cpu, numa, pci and links; remove this section");
        }
      }
      p.synthetic = parse_synthetic(synthetic);
      return p;
    }
    parse_cpu(cpu, p.cpu);
    for (std::size_t i = 0; const YAML::Node& n : list_items(r_, numa, "numa")) {
      p.numa.push_back(parse_numa(n, index_path("numa", i++)));
    }
    if (absent(numa)) r_.fail(root, "numa", "required field is missing");
    for (std::size_t i = 0; const YAML::Node& n : list_items(r_, pci, "pci")) {
      p.pci.push_back(parse_root_complex(n, index_path("pci", i++)));
    }
    for (std::size_t i = 0; const YAML::Node& n : list_items(r_, links, "links")) {
      p.links.push_back(parse_link(n, index_path("links", i++)));
    }
    return p;
  }

  static bool valid_name(const std::string& name) {
    return std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    });
  }

 private:
  void parse_machine(const YAML::Node& n, Profile& p) {
    Fields f(r_, n, "machine");
    MachineSpec& m = p.machine;
    auto str = [&](const char* key, std::string& out) {
      if (auto v = detail::read_string(r_, f.take(key), f.path(key))) out = *v;
    };
    str("hostname", m.hostname);
    str("product_name", m.product_name);
    str("sys_vendor", m.sys_vendor);
    str("board_vendor", m.board_vendor);
    str("board_name", m.board_name);
    str("bios_vendor", m.bios_vendor);
    str("bios_version", m.bios_version);
    str("kernel_release", m.kernel_release);
    const YAML::Node ci = f.take("cloud_init");
    if (!absent(ci)) {
      Fields c(r_, ci, "machine.cloud_init");
      MachineSpec::CloudInit& d = m.cloud_init;
      d.present = true;
      auto cstr = [&](const char* key, std::string& out) {
        if (auto v = detail::read_string(r_, c.take(key), c.path(key))) out = *v;
      };
      cstr("cloud_name", d.cloud_name);
      cstr("platform", d.platform);
      cstr("region", d.region);
      cstr("availability_zone", d.availability_zone);
      cstr("instance_id", d.instance_id);
      cstr("instance_type", d.instance_type);
      const YAML::Node lc = c.take("life_cycle");
      if (auto v = detail::read_string(r_, lc, c.path("life_cycle"))) {
        if (*v != "spot" && *v != "on-demand") {
          r_.fail(lc, c.path("life_cycle"), "expected spot or on-demand");
        } else {
          d.life_cycle = *v;
        }
      }
      c.done();
    }
    f.done();
  }

  void parse_nvidia(const YAML::Node& n, NvidiaSpec& nv) {
    Fields f(r_, n, "nvidia");
    if (auto v = detail::read_string(r_, f.take("driver_version"), f.path("driver_version"))) {
      nv.driver_version = *v;
    }
    if (auto v = detail::read_uint(r_, f.take("cuda_driver_version"), f.path("cuda_driver_version"),
                                   99999, 1000)) {
      nv.cuda_driver_version = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_bool(r_, f.take("fabric"), f.path("fabric"))) nv.fabric = *v;
    if (auto v = detail::read_uint(r_, f.take("clique_id"), f.path("clique_id"), UINT32_MAX)) {
      nv.clique_id = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_int_map(r_, f.take("fail"), f.path("fail"))) {
      for (const auto& [k, code] : *v)
        nv.fail[k] = static_cast<int>(code);
    }
    f.done();
  }

  void parse_network(const YAML::Node& n, Profile& p) {
    Fields f(r_, n, "network");
    if (auto v = detail::read_string_list(r_, f.take("virtual"), f.path("virtual"))) {
      p.virtual_netdevs = *v;
    }
    f.done();
  }

  void parse_cpu(const YAML::Node& n, CpuSpec& cpu) {
    if (absent(n)) {
      r_.fail(n, "cpu", "required field is missing");
      return;
    }
    Fields f(r_, n, "cpu");
    cpu.origin = {"cpu", f.line()};
    if (auto v = detail::read_string(r_, f.take("vendor"), f.path("vendor"))) {
      if (*v != "GenuineIntel" && *v != "AuthenticAMD") {
        r_.fail(n["vendor"], f.path("vendor"), "'" + *v + "' must be GenuineIntel or AuthenticAMD");
      }
      cpu.vendor = *v;
    }
    cpu.model_name =
        detail::read_string(r_, f.require("model_name"), f.path("model_name")).value_or("");
    auto u32 = [&](const char* key, std::uint32_t& out, std::uint64_t max, std::uint64_t min,
                   bool required) {
      YAML::Node v = required ? f.require(key) : f.take(key);
      if (auto x = detail::read_uint(r_, v, f.path(key), max, min)) {
        out = static_cast<std::uint32_t>(*x);
      }
    };
    u32("family", cpu.family, 255, 0, false);
    u32("model", cpu.model, 255, 0, false);
    u32("stepping", cpu.stepping, 15, 0, false);
    u32("mhz", cpu.mhz, 10000, 100, false);
    u32("sockets", cpu.sockets, 16, 1, true);
    u32("cores_per_socket", cpu.cores_per_socket, 512, 1, true);
    u32("threads_per_core", cpu.threads_per_core, 8, 1, true);
    const YAML::Node caches = f.take("caches");
    if (!absent(caches)) {
      Fields c(r_, caches, f.path("caches"));
      CacheSpec spec;
      auto size = [&](const char* key, std::uint64_t& out) {
        if (auto v = detail::read_size(r_, c.require(key), c.path(key))) out = *v;
      };
      size("l1d", spec.l1d_bytes);
      size("l1i", spec.l1i_bytes);
      size("l2", spec.l2_bytes);
      size("l3", spec.l3_bytes);
      if (auto v = detail::read_uint(r_, c.take("l3_cores"), c.path("l3_cores"), 512, 1)) {
        spec.l3_cores = static_cast<std::uint32_t>(*v);
      }
      c.done();
      cpu.caches = spec;
    }
    f.done();
  }

  NumaSpec parse_numa(const YAML::Node& n, const std::string& path) {
    Fields f(r_, n, path);
    NumaSpec numa;
    numa.origin = {path, f.line()};
    if (auto v = detail::read_uint(r_, f.require("id"), f.path("id"), 1023)) {
      numa.id = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_uint(r_, f.take("socket"), f.path("socket"), 15)) {
      numa.socket = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_size(r_, f.require("memory"), f.path("memory"))) {
      numa.memory_bytes = *v;
    }
    const YAML::Node dist = f.take("distances");
    for (std::size_t i = 0; const YAML::Node& d : list_items(r_, dist, f.path("distances"))) {
      if (auto v = detail::read_uint(r_, d, index_path(f.path("distances"), i++), 254, 10)) {
        numa.distances.push_back(static_cast<std::uint32_t>(*v));
      }
    }
    f.done();
    return numa;
  }

  RootComplexSpec parse_root_complex(const YAML::Node& n, const std::string& path) {
    Fields f(r_, n, path);
    RootComplexSpec rc;
    rc.origin = {path, f.line()};
    if (auto v = detail::read_uint(r_, f.take("domain"), f.path("domain"), 0xffff)) {
      rc.domain = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_uint(r_, f.require("bus"), f.path("bus"), 0xff)) {
      rc.bus = static_cast<std::uint8_t>(*v);
    }
    if (auto v = detail::read_int(r_, f.require("numa"), f.path("numa"), -1, 1023)) {
      rc.numa = static_cast<int>(*v);
    }
    rc.port_model =
        detail::read_string(r_, f.take("port_model"), f.path("port_model")).value_or("");
    for (std::size_t i = 0;
         const YAML::Node& p : list_items(r_, f.take("ports"), f.path("ports"))) {
      rc.ports.push_back(parse_port(p, index_path(f.path("ports"), i++), true));
    }
    for (std::size_t i = 0;
         const YAML::Node& d : list_items(r_, f.take("devices"), f.path("devices"))) {
      rc.devices.push_back(parse_device(d, index_path(f.path("devices"), i++), true));
    }
    f.done();
    return rc;
  }

  PortSpec parse_port(const YAML::Node& n, const std::string& path, bool root_port) {
    Fields f(r_, n, path);
    PortSpec port;
    port.origin = {path, f.line()};
    if (auto v = detail::read_devfn(r_, f.take("address"), f.path("address"))) {
      port.slot = v->device;
      port.function = v->function;
      if (!root_port && v->function != 0) {
        r_.fail(n["address"], f.path("address"), "switch downstream ports are function 0");
      }
    }
    if (auto v = detail::read_link(r_, f.take("link"), f.path("link"))) port.link = *v;
    if (auto v = detail::read_uint(r_, f.take("bus"), f.path("bus"), 0xff)) {
      port.bus = static_cast<std::uint8_t>(*v);
    }
    if (auto v = detail::read_uint(r_, f.take("slot"), f.path("slot"), 8191)) {
      port.physical_slot = static_cast<std::uint32_t>(*v);
    }
    const YAML::Node sw = f.take("switch");
    const YAML::Node dev = f.take("device");
    f.done();
    if (!absent(sw) && !absent(dev)) {
      r_.fail(dev, f.path("device"), "a port leads to a switch or a device, not both");
    } else if (!absent(sw)) {
      port.below_switch = std::make_unique<SwitchSpec>(parse_switch(sw, f.path("switch")));
    } else if (!absent(dev)) {
      port.device = parse_device(dev, f.path("device"), false);
    }
    return port;
  }

  SwitchSpec parse_switch(const YAML::Node& n, const std::string& path) {
    Fields f(r_, n, path);
    SwitchSpec sw;
    sw.origin = {path, f.line()};
    sw.name = detail::read_string(r_, f.take("name"), f.path("name")).value_or("");
    sw.model = detail::read_string(r_, f.take("model"), f.path("model")).value_or("");
    if (!sw.model.empty() && detail::find_switch_model(sw.model) == nullptr) {
      r_.fail(
          n["model"], f.path("model"),
          "unknown switch model '" + sw.model + "' (known: " + detail::switch_model_keys() + ")");
    }
    assign(sw.vendor, detail::read_uint(r_, f.take("vendor"), f.path("vendor"), 0xfffe));
    assign(sw.device, detail::read_uint(r_, f.take("device"), f.path("device"), 0xffff));
    if (auto v = detail::read_link(r_, f.take("link"), f.path("link"))) sw.link = *v;
    if (auto v = detail::read_link(r_, f.take("current_link"), f.path("current_link"))) {
      sw.current_link = *v;
    }
    if (auto v = detail::read_uint(r_, f.take("bus"), f.path("bus"), 0xff)) {
      sw.bus = static_cast<std::uint8_t>(*v);
    }
    const YAML::Node ports = f.require("ports");
    for (std::size_t i = 0; const YAML::Node& p : list_items(r_, ports, f.path("ports"))) {
      sw.ports.push_back(parse_port(p, index_path(f.path("ports"), i++), false));
    }
    if (!absent(ports) && sw.ports.empty() && !r_.failed()) {
      r_.fail(ports, f.path("ports"), "a switch needs at least one downstream port");
    }
    if (sw.ports.size() > 32) {
      r_.fail(ports, f.path("ports"), "a switch has at most 32 downstream ports (device 00-1f)");
    }
    f.done();
    return sw;
  }

  std::optional<DeviceType> parse_type(const YAML::Node& n, const std::string& path) {
    auto text = detail::read_string(r_, n, path);
    if (!text) return std::nullopt;
    for (DeviceType t : {DeviceType::kGpu, DeviceType::kNvSwitch, DeviceType::kNic,
                         DeviceType::kNvme, DeviceType::kAccelerator, DeviceType::kOther}) {
      if (*text == to_string(t)) return t;
    }
    r_.fail(n, path,
            "'" + *text + "' is not a device type (gpu, nvswitch, nic, nvme, accelerator, other)");
    return std::nullopt;
  }

  DeviceSpec parse_device(const YAML::Node& n, const std::string& path, bool integrated) {
    Fields f(r_, n, path);
    DeviceSpec d;
    d.origin = {path, f.line()};
    const YAML::Node type_node = f.take("type");
    const auto type = parse_type(type_node, f.path("type"));
    d.model = detail::read_string(r_, f.take("model"), f.path("model")).value_or("");
    const detail::Model* model = nullptr;
    if (!d.model.empty()) {
      model = detail::find_model(d.model);
      if (model == nullptr) {
        std::string known;
        for (DeviceType t : {DeviceType::kGpu, DeviceType::kNvSwitch, DeviceType::kNic,
                             DeviceType::kNvme, DeviceType::kAccelerator}) {
          known += std::string(known.empty() ? "" : "; ") + std::string(to_string(t)) + ": " +
                   detail::model_keys(t);
        }
        r_.fail(n["model"], f.path("model"),
                "unknown model '" + d.model + "' (known: " + known + ")");
      }
    }
    if (type) {
      d.type = *type;
      if (model != nullptr && model->type != *type) {
        r_.fail(type_node, f.path("type"),
                std::string(to_string(*type)) + " does not match model " + d.model + " (a " +
                    std::string(to_string(model->type)) + ")");
      }
    } else if (model != nullptr) {
      d.type = model->type;
    } else if (!r_.failed()) {
      r_.fail(n, f.path("type"), "required field is missing (or give a model)");
    }
    d.name = detail::read_string(r_, f.take("name"), f.path("name")).value_or("");
    assign(d.vendor, detail::read_uint(r_, f.take("vendor"), f.path("vendor"), 0xfffe, 1));
    assign(d.device, detail::read_uint(r_, f.take("device"), f.path("device"), 0xffff));
    assign(d.subsystem_vendor,
           detail::read_uint(r_, f.take("subsystem_vendor"), f.path("subsystem_vendor"), 0xffff));
    assign(d.subsystem_device,
           detail::read_uint(r_, f.take("subsystem_device"), f.path("subsystem_device"), 0xffff));
    assign(d.class_code, detail::read_uint(r_, f.take("class"), f.path("class"), 0xffffff));
    assign(d.revision, detail::read_uint(r_, f.take("revision"), f.path("revision"), 0xff));
    if (model == nullptr && !r_.failed()) {
      for (const char* key : {"vendor", "device", "class"}) {
        if (absent(n[key])) {
          r_.fail(n, f.path(key), "required field is missing (no model gives it)");
        }
      }
    }
    if (auto v = detail::read_string(r_, f.take("driver"), f.path("driver"))) d.driver = *v;
    if (auto v = detail::read_string(r_, f.take("product"), f.path("product"))) d.product = *v;
    if (auto v = detail::read_link(r_, f.take("link"), f.path("link"))) d.link = *v;
    if (auto v = detail::read_link(r_, f.take("current_link"), f.path("current_link"))) {
      d.current_link = *v;
    }
    if (auto v = detail::read_int(r_, f.take("numa"), f.path("numa"), -1, 1023)) {
      d.numa = static_cast<int>(*v);
    }
    const YAML::Node address = f.take("address");
    if (integrated) {
      if (auto v = detail::read_devfn(r_, address, f.path("address"))) {
        d.slot = v->device;
        d.function = v->function;
      } else if (absent(address)) {
        r_.fail(n, f.path("address"), "required field is missing (devices on a root bus)");
      }
    } else if (!absent(address)) {
      r_.fail(address, f.path("address"),
              "a device behind a port is always device 00 on the port's secondary bus; set the "
              "port's address or bus instead");
    }
    if (auto v = detail::read_uint(r_, f.take("functions"), f.path("functions"), 8, 1)) {
      d.functions = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_size(r_, f.take("memory"), f.path("memory"))) d.memory_bytes = *v;
    if (auto v = detail::read_size(r_, f.take("capacity"), f.path("capacity"))) {
      d.capacity_bytes = *v;
    }
    d.serial = detail::read_string(r_, f.take("serial"), f.path("serial")).value_or("");
    d.uuid = detail::read_string(r_, f.take("uuid"), f.path("uuid")).value_or("");
    for (std::size_t i = 0;
         const YAML::Node& p : list_items(r_, f.take("ports"), f.path("ports"))) {
      d.ports.push_back(parse_net_port(p, index_path(f.path("ports"), i++)));
    }
    d.rdma = detail::read_string(r_, f.take("rdma"), f.path("rdma")).value_or("");
    const YAML::Node sriov = f.take("sriov");
    if (!absent(sriov)) {
      Fields s(r_, sriov, f.path("sriov"));
      if (auto v = detail::read_uint(r_, s.require("total_vfs"), s.path("total_vfs"), 255, 1)) {
        d.sriov.total_vfs = static_cast<std::uint32_t>(*v);
      }
      if (auto v = detail::read_uint(r_, s.take("num_vfs"), s.path("num_vfs"), 255)) {
        d.sriov.num_vfs = static_cast<std::uint32_t>(*v);
      }
      s.done();
      if (d.sriov.num_vfs > d.sriov.total_vfs) {
        r_.fail(sriov["num_vfs"], s.path("num_vfs"),
                std::to_string(d.sriov.num_vfs) + " is more than total_vfs (" +
                    std::to_string(d.sriov.total_vfs) + ")");
      }
    }
    const YAML::Node sharing = f.take("sharing");
    if (!absent(sharing)) {
      Fields s(r_, sharing, f.path("sharing"));
      SharingSpec spec;
      spec.mode = detail::read_string(r_, s.require("mode"), s.path("mode")).value_or("");
      if (!spec.mode.empty() && spec.mode != "fractional" && spec.mode != "time-sliced") {
        r_.fail(sharing["mode"], s.path("mode"),
                "'" + spec.mode + "' is not a sharing mode (fractional, time-sliced)");
      }
      if (auto v = detail::read_uint(r_, s.require("replicas"), s.path("replicas"), 1024, 1)) {
        spec.replicas = static_cast<std::uint32_t>(*v);
      }
      s.done();
      d.sharing = spec;
    }
    if (auto v = detail::read_int_map(r_, f.take("nvml_fail"), f.path("nvml_fail"))) {
      for (const auto& [k, code] : *v)
        d.nvml_fail[k] = static_cast<int>(code);
    }
    f.done();
    return d;
  }

  NetPortSpec parse_net_port(const YAML::Node& n, const std::string& path) {
    Fields f(r_, n, path);
    NetPortSpec port;
    port.origin = {path, f.line()};
    port.link_layer.clear();  // empty: the model's default, filled by the planner
    port.netdev = detail::read_string(r_, f.take("netdev"), f.path("netdev")).value_or("");
    port.rdma = detail::read_string(r_, f.take("rdma"), f.path("rdma")).value_or("");
    if (auto v = detail::read_string(r_, f.take("link_layer"), f.path("link_layer"))) {
      const std::string l = ascii_lower(*v);
      if (l == "ethernet") {
        port.link_layer = "Ethernet";
      } else if (l == "infiniband") {
        port.link_layer = "InfiniBand";
      } else {
        r_.fail(n["link_layer"], f.path("link_layer"),
                "'" + *v + "' is not a link layer (Ethernet, InfiniBand)");
      }
    }
    if (auto v = detail::read_uint(r_, f.take("rate"), f.path("rate"), 1600, 1)) {
      port.rate_gbps = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_string(r_, f.take("state"), f.path("state"))) {
      if (*v == "up") {
        port.up = true;
      } else if (*v == "down") {
        port.up = false;
      } else {
        r_.fail(n["state"], f.path("state"), "'" + *v + "' is not a port state (up, down)");
      }
    }
    if (auto v = detail::read_uint(r_, f.take("mtu"), f.path("mtu"), 65520, 68)) {
      port.mtu = static_cast<std::uint32_t>(*v);
    }
    f.done();
    return port;
  }

  LinkSpec parse_link(const YAML::Node& n, const std::string& path) {
    Fields f(r_, n, path);
    LinkSpec link;
    link.origin = {path, f.line()};
    if (auto v = detail::read_string(r_, f.require("kind"), f.path("kind"))) {
      if (*v == "nvlink") {
        link.kind = FabricKind::kNvlink;
      } else if (*v == "xgmi") {
        link.kind = FabricKind::kXgmi;
      } else {
        r_.fail(n["kind"], f.path("kind"), "'" + *v + "' is not a link kind (nvlink, xgmi)");
      }
    }
    link.from = detail::read_string_list(r_, f.require("from"), f.path("from"))
                    .value_or(std::vector<std::string>{});
    link.to = detail::read_string_list(r_, f.require("to"), f.path("to"))
                  .value_or(std::vector<std::string>{});
    if (auto v = detail::read_uint(r_, f.take("count"), f.path("count"), 18, 1)) {
      link.count = static_cast<std::uint32_t>(*v);
    }
    if (auto v = detail::read_uint(r_, f.take("down"), f.path("down"), 18)) {
      link.down = static_cast<std::uint32_t>(*v);
      if (link.down > link.count) {
        r_.fail(
            n["down"], f.path("down"),
            std::to_string(link.down) + " is more than count (" + std::to_string(link.count) + ")");
      }
    }
    f.done();
    return link;
  }

  SyntheticSpec parse_synthetic(const YAML::Node& n) {
    Fields f(r_, n, "synthetic");
    SyntheticSpec s;
    auto u32 = [&](const char* key, std::uint32_t& out, std::uint64_t min, std::uint64_t max) {
      if (auto v = detail::read_uint(r_, f.take(key), f.path(key), max, min)) {
        out = static_cast<std::uint32_t>(*v);
      }
    };
    if (auto v = detail::read_string(r_, f.take("cpu_vendor"), f.path("cpu_vendor"))) {
      if (*v != "intel" && *v != "amd") {
        r_.fail(n["cpu_vendor"], f.path("cpu_vendor"), "'" + *v + "' must be intel or amd");
      }
      s.cpu_vendor = *v;
    }
    u32("sockets", s.sockets, 1, 8);
    u32("numa_per_socket", s.numa_per_socket, 1, 8);
    u32("cores_per_socket", s.cores_per_socket, 1, 256);
    u32("threads_per_core", s.threads_per_core, 1, 2);
    if (auto v = detail::read_size(r_, f.take("memory_per_numa"), f.path("memory_per_numa"))) {
      s.memory_per_numa = *v;
    }
    u32("gpus", s.gpus, 0, 128);
    if (auto v = detail::read_string(r_, f.take("gpu_model"), f.path("gpu_model"))) {
      s.gpu_model = *v;
    }
    u32("nics", s.nics, 0, 128);
    if (auto v = detail::read_string(r_, f.take("nic_model"), f.path("nic_model"))) {
      s.nic_model = *v;
    }
    u32("nic_vfs", s.nic_vfs, 0, 64);
    u32("nvme", s.nvme, 0, 64);
    u32("switch_depth", s.switch_depth, 0, 4);
    u32("nvswitches", s.nvswitches, 0, 16);
    u32("nvlinks_per_gpu", s.nvlinks_per_gpu, 0, 18);
    f.done();
    return s;
  }

  Reader& r_;
};

// Applies "key=value" overrides to the profile's `synthetic` section.
void apply_overrides(Reader& r, YAML::Node& root,
                     const std::map<std::string, std::string>& overrides) {
  if (overrides.empty()) return;
  if (!root.IsMap() || !root["synthetic"] || !root["synthetic"].IsMap()) {
    r.fail(0, "overrides",
           "only synthetic profiles take parameters (this profile has no synthetic section)");
    return;
  }
  YAML::Node synthetic = root["synthetic"];
  static const char* const kKeys[] = {"cpu_vendor",
                                      "sockets",
                                      "numa_per_socket",
                                      "cores_per_socket",
                                      "threads_per_core",
                                      "memory_per_numa",
                                      "gpus",
                                      "gpu_model",
                                      "nics",
                                      "nic_model",
                                      "nic_vfs",
                                      "nvme",
                                      "switch_depth",
                                      "nvswitches",
                                      "nvlinks_per_gpu"};
  for (const auto& [key, value] : overrides) {
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      std::string list;
      for (const char* k : kKeys)
        list += std::string(list.empty() ? "" : ", ") + k;
      r.fail(0, "synthetic." + key, "unknown parameter (known: " + list + ")");
      return;
    }
    synthetic[key] = value;
  }
}

}  // namespace

namespace {

// The line (from 1) of the first byte that is not part of valid UTF-8, or 0 when all is valid.
// Profile strings end up in JSON (the manifest, the NVML fixture), which must be UTF-8: refused
// here, with the line, instead of failing deep in rendering.
std::size_t first_invalid_utf8_line(std::string_view text) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n') ++line;
    std::size_t n = 1;
    unsigned lo = 0x80;
    unsigned hi = 0xbf;
    if (b < 0x80) {
      ++i;
      continue;
    }
    if (b >= 0xc2 && b <= 0xdf) {
      n = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      lo = b == 0xe0 ? 0xa0 : lo;
      hi = b == 0xed ? 0x9f : hi;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      lo = b == 0xf0 ? 0x90 : lo;
      hi = b == 0xf4 ? 0x8f : hi;
    } else {
      return line;
    }
    if (i + n > text.size()) return line;
    const auto second = static_cast<unsigned char>(text[i + 1]);
    if (second < lo || second > hi) return line;
    for (std::size_t k = 2; k < n; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (c < 0x80 || c > 0xbf) return line;
    }
    i += n;
  }
  return 0;
}

}  // namespace

Result<Profile> parse_profile(std::string_view yaml, std::string_view source,
                              const std::map<std::string, std::string>& overrides) {
  if (const std::size_t line = first_invalid_utf8_line(yaml); line != 0) {
    return make_error(
        ErrorCode::kInvalid,
        "line " + std::to_string(line) + ": not valid UTF-8 (profiles are UTF-8 text)",
        std::string(source));
  }
  for (const auto& [key, value] : overrides) {
    if (first_invalid_utf8_line(key) != 0 || first_invalid_utf8_line(value) != 0) {
      return make_error(ErrorCode::kInvalid, "override is not valid UTF-8", std::string(source));
    }
  }
  Reader reader{std::string(source), "profile"};
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    // yaml-cpp reports syntax errors by exception: this is the boundary that turns it into a
    // Result.
    return make_error(ErrorCode::kInvalid,
                      "line " + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg,
                      std::string(source));
  }
  if (!root.IsMap()) {
    return make_error(ErrorCode::kInvalid, "a profile is a YAML mapping (version, name, ...)",
                      std::string(source));
  }
  apply_overrides(reader, root, overrides);
  if (reader.failed()) return reader.error();
  ProfileParser parser(reader);
  Profile profile = parser.parse(root);
  if (reader.failed()) return reader.error();
  profile.source = std::string(source);
  if (profile.synthetic) {
    auto generated = detail::generate_synthetic(profile);
    if (!generated) return generated.error();
  }
  // The planner checks everything that needs the whole host; its plan is rebuilt by the builder.
  auto plan = detail::make_plan(profile);
  if (!plan) return plan.error();
  return profile;
}

}  // namespace nodetopo::mock
