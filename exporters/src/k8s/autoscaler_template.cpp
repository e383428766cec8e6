#include <algorithm>
#include <array>
#include <map>
#include <set>

#include <nodetopo/exporters/autoscaler_template.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::exporters::autoscaler {

namespace {

using C = AttributeClass;

constexpr std::string_view kModel = "the device model: the same on every machine of this shape";
constexpr std::string_view kPciLayout =
    "PCIe layout: bus numbers come from the platform firmware's enumeration, the same on every "
    "machine of one model and firmware; a machine that enumerates differently gets another "
    "template fingerprint";
constexpr std::string_view kImage =
    "set by the node image (kernel driver, its version): the same on every node of a group that "
    "boots one image; a new image is a new template";

// The one classification table (docs/autoscaler.md prints it). Keys as the slice builder
// (resource_slices.cpp) writes them; a key the builder adds later and this table lacks is
// treated as node-unique until it is classified here.
constexpr std::array kRules = {
    AttributeRule{"type", C::kShapeStable, kModel},
    AttributeRule{"vendor", C::kShapeStable, kModel},
    AttributeRule{"productName", C::kShapeStable, kModel},
    AttributeRule{"pciVendorID", C::kShapeStable, kModel},
    AttributeRule{"pciDeviceID", C::kShapeStable, kModel},
    AttributeRule{"architecture", C::kShapeStable, kModel},
    AttributeRule{"pcieGen", C::kShapeStable, "the link's maximum generation: the device model"},
    AttributeRule{"pcieWidth", C::kShapeStable, "the link's maximum width: the device model"},
    AttributeRule{"linkLayer", C::kShapeStable, "InfiniBand or Ethernet: the NIC model and port"},
    AttributeRule{"linkSpeed", C::kShapeStable,
                  "the port speed of an active link: export from a node whose links are up"},
    AttributeRule{"resource.kubernetes.io/numaNode", C::kShapeStable,
                  "NUMA layout: which socket's PCIe lanes a slot is wired to"},
    AttributeRule{"resource.kubernetes.io/pcieRoot", C::kShapeStable, kPciLayout},
    AttributeRule{"resource.kubernetes.io/pciBusID", C::kShapeStable, kPciLayout},
    AttributeRule{"pciBusID", C::kShapeStable, kPciLayout},
    AttributeRule{"pcieSwitch", C::kShapeStable, kPciLayout},
    AttributeRule{"ifName", C::kBinding,
                  "interface names follow the node's naming policy (udev, firmware slot numbers, "
                  "renames by network operators) and the shape fingerprint ignores them: kept as "
                  "a template-local id, so that a test for its presence works from zero and a "
                  "selector on its value does not"},
    AttributeRule{"rdmaDevice", C::kBinding,
                  "RDMA device names (mlx5_<n>, or names from the rdma naming policy) follow the "
                  "order drivers bind and the node's policy: kept as a template-local id, so that "
                  "`\"rdmaDevice\" in ...` works from zero and a selector on the name does not"},
    AttributeRule{"driver", C::kShapeStable, kImage},
    AttributeRule{"driverVersion", C::kShapeStable, kImage},
    AttributeRule{"sharing", C::kShapeStable, "the node's export settings"},
    AttributeRule{"partitionCount", C::kShapeStable, "the node's export settings"},
    AttributeRule{"parentDevice", C::kShapeStable,
                  "the name of the whole GPU, derived from its PCI address"},
    AttributeRule{"nvlinkDomain", C::kBinding,
                  "names this node's NVLink-connected set (a hash seeded with the node name) or "
                  "the fabric's cluster UUID: differs per node, so the template keeps which GPUs "
                  "share it under a template-local id; matchAttribute works from zero, a selector "
                  "on the value does not"},
    AttributeRule{"xgmiDomain", C::kBinding,
                  "names this node's xGMI-connected set (a hash seeded with the node name): kept "
                  "as a template-local id, like nvlinkDomain"},
    AttributeRule{"uuid", C::kNodeUnique,
                  "the vendor's device UUID (or one derived from the node name): unique to one "
                  "physical device"},
};

// The relations a provider must reproduce, by the attribute that carries them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kRelations = {{
    {"pcieRoot", "resource.kubernetes.io/pcieRoot"},
    {"pcieSwitch", "pcieSwitch"},
    {"numaNode", "resource.kubernetes.io/numaNode"},
    {"nvlinkDomain", "nvlinkDomain"},
    {"xgmiDomain", "xgmiDomain"},
}};

std::string value_text(const dra::AttributeValue& v) {
  switch (v.type) {
    case dra::AttributeValue::Type::kInt:
      return "int:" + std::to_string(v.int_value);
    case dra::AttributeValue::Type::kBool:
      return std::string("bool:") + (v.bool_value ? "true" : "false");
    case dra::AttributeValue::Type::kString:
      return "string:" + v.text;
    case dra::AttributeValue::Type::kVersion:
      return "version:" + v.text;
  }
  return "string:" + v.text;
}

std::string plain_value(const dra::AttributeValue& v) {
  if (v.type == dra::AttributeValue::Type::kInt) return std::to_string(v.int_value);
  if (v.type == dra::AttributeValue::Type::kBool) return v.bool_value ? "true" : "false";
  return v.text;
}

// Binding values become "<prefix>-<n>", numbered by the first device (in slice order) that
// carries each value: a function of the layout only.
std::string binding_prefix(std::string_view key) {
  if (key == "nvlinkDomain") return "template-nvlink";
  if (key == "xgmiDomain") return "template-xgmi";
  if (key == "ifName") return "template-if";
  if (key == "rdmaDevice") return "template-rdma";
  return "template-" + std::string(key);
}

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// The memory an autoscaler should assume: identical on every machine of the shape and not above
// what a node reports. Firmware and the kernel keep a varying few percent of DRAM, so the
// reported size differs a little between machines and boots; rounding each NUMA node's DRAM up
// to an 8 GiB step recovers the installed DIMMs (as the shape fingerprint does), and 1/32 of that
// is taken off for what firmware and the kernel keep.
std::uint64_t template_memory(const Topology& topology) {
  std::uint64_t installed = 0;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kNumaNode)) {
    const auto& n = topology.node(i).as<NumaInfo>();
    if (!n.subtype.empty() || n.memory_bytes == 0) continue;  // GPU or CXL memory
    const std::uint64_t gib = (n.memory_bytes + kGiB - 1) / kGiB;
    installed += (gib <= 8 ? gib : (gib + 7) / 8 * 8) * kGiB;
  }
  return installed - installed / 32;
}

NodeCapacity capacity_of(const Topology& topology) {
  NodeCapacity c;
  if (const auto* m = topology.root().get_if<MachineInfo>()) c.architecture = m->architecture;
  CpuSet cpus;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kPackage))
    cpus |= topology.node(i).as<PackageInfo>().cpus;
  c.cpus = static_cast<std::uint32_t>(cpus.count());
  c.memory_bytes = template_memory(topology);
  return c;
}

}  // namespace

std::string_view to_string(AttributeClass c) {
  switch (c) {
    case AttributeClass::kShapeStable:
      return "shape-stable";
    case AttributeClass::kBinding:
      return "binding";
    case AttributeClass::kNodeUnique:
      return "node-unique";
  }
  return "node-unique";
}

std::span<const AttributeRule> attribute_rules() {
  return kRules;
}

const AttributeRule* find_rule(std::string_view key) {
  for (const AttributeRule& r : kRules) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

AttributeClass classify_attribute(std::string_view key) {
  const AttributeRule* r = find_rule(key);
  return r != nullptr ? r->cls : AttributeClass::kNodeUnique;
}

std::vector<std::string> Template::warnings() const {
  std::vector<std::string> out;
  for (const OmittedAttribute& o : omitted) {
    out.push_back("attribute \"" + o.key + "\" left out of the template (" +
                  std::to_string(o.devices.size()) + " device" +
                  (o.devices.size() == 1 ? "" : "s") + ", e.g. " + o.devices.front() +
                  "): node-unique (" + o.why +
                  "); a selector on it cannot work when the node group scales from zero");
  }
  return out;
}

Template build_template(const Topology& topology, std::vector<dra::ResourceSlice> slices,
                        LabelMap labels) {
  Template t;
  std::map<std::string, OmittedAttribute> omitted;
  std::map<std::string, std::map<std::string, std::string>> renamed;  // key -> old -> new
  for (dra::ResourceSlice& s : slices) {
    s.node_name = std::string(kNodePlaceholder);
    s.pool_name = std::string(kPoolPlaceholder);
    s.generate_name = std::string(kNodePlaceholder) + "-" + s.driver + "-";
    s.node_uid.clear();  // no Node exists yet to own them
    if (t.driver.empty()) t.driver = s.driver;
    for (dra::Device& d : s.devices) {
      for (auto it = d.attributes.begin(); it != d.attributes.end();) {
        const AttributeRule* rule = find_rule(it->first);
        const AttributeClass cls = rule != nullptr ? rule->cls : AttributeClass::kNodeUnique;
        if (cls == AttributeClass::kNodeUnique) {
          OmittedAttribute& o = omitted[it->first];
          o.key = it->first;
          o.why = rule != nullptr ? std::string(rule->why)
                                  : "not classified in nodetopo's table, so treated as unique";
          o.devices.push_back(d.name);
          it = d.attributes.erase(it);
          continue;
        }
        if (cls == AttributeClass::kBinding) {
          auto& names = renamed[it->first];
          auto [pos, added] = names.emplace(it->second.text, "");
          if (added)
            pos->second = binding_prefix(it->first) + "-" + std::to_string(names.size() - 1);
          it->second.text = pos->second;
        }
        ++it;
      }
      const auto type = d.attributes.find("type");
      if (type != d.attributes.end() && type->second.text == "gpu" &&
          d.attributes.count("parentDevice") == 0) {
        ++t.gpu_count;
      }
    }
  }
  for (auto& [key, o] : omitted)
    t.omitted.push_back(std::move(o));

  for (const auto& [relation, key] : kRelations) {
    Binding b;
    b.relation = std::string(relation);
    b.attribute = std::string(key);
    std::map<std::string, std::size_t> index;
    for (const dra::ResourceSlice& s : slices) {
      for (const dra::Device& d : s.devices) {
        // Partitions share their GPU's relations; listing them would only repeat it.
        if (d.attributes.count("parentDevice") != 0) continue;
        const auto a = d.attributes.find(std::string(key));
        if (a == d.attributes.end()) continue;
        const std::string v = plain_value(a->second);
        auto [pos, added] = index.emplace(v, b.groups.size());
        if (added) b.groups.push_back({v, {}});
        b.groups[pos->second].devices.push_back(d.name);
      }
    }
    if (!b.groups.empty()) t.bindings.push_back(std::move(b));
  }

  t.capacity = capacity_of(topology);
  // The fingerprint's input: the format, the node's shape description (CPU, NUMA, memory, PCIe
  // tree, devices, wiring) and every kept device attribute and capacity, in slice order.
  std::string text = std::string(kTemplateFormat) + "\n";
  text += compute_shape(topology).description;
  text += "driver " + t.driver + "\n";
  for (const dra::ResourceSlice& s : slices) {
    text += "slice\n";
    for (const dra::CounterSet& c : s.shared_counters) {
      text += " counters " + c.name;
      for (const auto& [k, v] : c.counters)
        text += " " + k + "=" + v;
      text += "\n";
    }
    for (const dra::Device& d : s.devices) {
      text += " device " + d.name + "\n";
      for (const auto& [k, v] : d.attributes)
        text += "  attr " + k + "=" + value_text(v) + "\n";
      for (const auto& [k, c] : d.capacity)
        text += "  capacity " + k + "=" + c.value + "\n";
      if (d.allow_multiple_allocations) text += "  shared\n";
      for (const dra::CounterConsumption& c : d.consumes_counters) {
        text += "  consumes " + c.counter_set;
        for (const auto& [k, v] : c.counters)
          text += " " + k + "=" + v;
        text += "\n";
      }
    }
  }
  t.fingerprint_sha256 = sha256_hex(text);
  t.fingerprint = t.fingerprint_sha256.substr(0, 12);
  labels[std::string(kTemplateShapeLabel)] = t.fingerprint;
  t.labels = std::move(labels);
  t.slices = std::move(slices);
  return t;
}

}  // namespace nodetopo::exporters::autoscaler
