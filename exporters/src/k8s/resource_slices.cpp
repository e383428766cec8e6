#include <algorithm>
#include <cstdio>

#include <nodetopo/base/hex.hpp>
#include <nodetopo/exporters/k8s_devices.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/slice_validator.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::exporters::dra {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Informational strings (product names) are cut to the 64-byte limit at a UTF-8 boundary rather
// than dropped: a shortened product name still selects the device.
std::string fit(std::string s) {
  if (s.size() <= kMaxAttributeValueBytes) return s;
  std::size_t cut = kMaxAttributeValueBytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  s.resize(cut);
  while (!s.empty() && s.back() == ' ')
    s.pop_back();
  return s;
}

// A UUID-shaped id derived from the node and the PCI address, for accelerators whose vendor UUID
// is unknown (no NVML, no KFD unique_id): stable across runs, distinct across nodes.
std::string derived_uuid(std::string_view node, const PciAddress& address) {
  const std::string h =
      sha256_hex("nodetopo-device|" + std::string(node) + "|" + address.to_string());
  return "nodetopo-" + h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" +
         h.substr(16, 4) + "-" + h.substr(20, 12);
}

void set_string(Device& d, const std::string& key, const std::string& value) {
  if (!value.empty()) d.attributes[key] = AttributeValue::of_string(fit(value));
}

Device base_device(const K8sDevice& k, const SliceOptions& opt) {
  Device d;
  d.name = k.name;
  const PciFunctionInfo& f = *k.pci;
  // Standard attributes (resource.kubernetes.io), comparable across drivers.
  set_string(d, "resource.kubernetes.io/pcieRoot", f.pcie_root);
  if (opt.version >= K8sVersion::k1_36) {
    set_string(d, "resource.kubernetes.io/pciBusID", f.address.to_string());
  } else {
    // Before 1.36 there is no standard bus id: the driver's own domain, so that a claim can
    // still pin a device (nodetopo.dev/pciBusID).
    set_string(d, "pciBusID", f.address.to_string());
  }
  if (k.numa_node) {
    d.attributes["resource.kubernetes.io/numaNode"] = AttributeValue::of_int(*k.numa_node);
  }
  // The driver's own domain (unqualified keys).
  set_string(d, "type", std::string(to_string(k.type)));
  set_string(d, "pciVendorID", to_hex(f.vendor_id, 4));
  set_string(d, "pciDeviceID", to_hex(f.device_id, 4));
  set_string(d, "driver", f.driver);
  set_string(d, "pcieSwitch", k.pcie_switch);
  if (const int gen = f.link_max.generation(); gen > 0) {
    d.attributes["pcieGen"] = AttributeValue::of_int(gen);
  }
  if (f.link_max.width > 0) d.attributes["pcieWidth"] = AttributeValue::of_int(f.link_max.width);
  if (k.accelerator != nullptr) {
    const AcceleratorInfo& a = *k.accelerator;
    set_string(d, "vendor", std::string(to_string(a.vendor)));
    set_string(d, "productName", a.product.empty() ? f.device_name : a.product);
    set_string(d, "uuid", a.uuid.empty() ? derived_uuid(opt.node_name, f.address) : a.uuid);
    set_string(d, "architecture", a.architecture);
    if (const auto v = k8s::normalize_semver(a.driver_version)) {
      d.attributes["driverVersion"] = AttributeValue::of_version(*v);
    }
    set_string(d, "nvlinkDomain", k.nvlink_domain);
    set_string(d, "xgmiDomain", k.xgmi_domain);
    if (a.memory_bytes != 0)
      d.capacity["memory"] = {k8s::format_binary_quantity(a.memory_bytes), std::nullopt};
  } else {
    set_string(d, "vendor", pci_vendor_short_name(f.vendor_id));
    set_string(d, "productName", f.device_name);
    set_string(d, "rdmaDevice", k.rdma_device);
    set_string(d, "ifName", k.if_name);
    set_string(d, "linkLayer", k.link_layer);
    if (k.speed_mbps) {
      d.attributes["linkSpeed"] = AttributeValue::of_int(static_cast<std::int64_t>(*k.speed_mbps));
    }
  }
  return d;
}

void make_consumable(Device& d, std::uint64_t memory, const SharingConfig& s) {
  d.allow_multiple_allocations = true;
  d.attributes["sharing"] = AttributeValue::of_string("consumable");
  if (memory != 0) {
    Capacity& cap = d.capacity["memory"];
    // A request that names no memory gets one step; requests round up to whole steps.
    if (memory >= 2 * s.memory_step) {
      const std::string step = k8s::format_binary_quantity(s.memory_step);
      cap.request_policy = RequestPolicy{step, step, {}, step, {}};
    }
  }
  const std::string cores = std::to_string(s.cores);
  d.capacity["cores"] = {cores, RequestPolicy{"1", "1", cores, "1", {}}};
}

}  // namespace

AttributeValue AttributeValue::of_int(std::int64_t v) {
  AttributeValue a;
  a.type = Type::kInt;
  a.int_value = v;
  return a;
}
AttributeValue AttributeValue::of_bool(bool v) {
  AttributeValue a;
  a.type = Type::kBool;
  a.bool_value = v;
  return a;
}
AttributeValue AttributeValue::of_string(std::string v) {
  AttributeValue a;
  a.type = Type::kString;
  a.text = std::move(v);
  return a;
}
AttributeValue AttributeValue::of_version(std::string v) {
  AttributeValue a;
  a.type = Type::kVersion;
  a.text = std::move(v);
  return a;
}

Result<K8sVersion> parse_k8s_version(std::string_view text) {
  if (text == "1.34") return K8sVersion::k1_34;
  if (text == "1.35") return K8sVersion::k1_35;
  if (text == "1.36") return K8sVersion::k1_36;
  return make_error(ErrorCode::kInvalid, "unsupported Kubernetes version \"" + std::string(text) +
                                             "\" (expected 1.34, 1.35 or 1.36)");
}

std::string to_string(K8sVersion version) {
  return "1." + std::to_string(static_cast<int>(version));
}

Result<DeviceSet> build_devices(const Topology& topology, const SliceOptions& options) {
  if (options.sharing.mode == SharingMode::kPartitionable && options.version < K8sVersion::k1_35) {
    return make_error(ErrorCode::kInvalid,
                      "partitionable GPUs need Kubernetes 1.35 or later (--k8s-version 1.35): "
                      "before 1.35 shared counters cannot be published in a slice of their own");
  }
  DeviceSet set;
  for (const K8sDevice& k : collect_k8s_devices(topology, options.node_name)) {
    Device d = base_device(k, options);
    const bool shared = k.type == K8sDeviceType::kGpu && options.sharing.mode != SharingMode::kNone;
    if (!shared) {
      set.devices.push_back(std::move(d));
      continue;
    }
    const std::uint64_t memory = k.accelerator->memory_bytes;
    const SharingConfig& s = options.sharing;
    if (s.mode == SharingMode::kConsumable) {
      make_consumable(d, memory, s);
      set.devices.push_back(std::move(d));
      continue;
    }
    // Partitionable: one counter set per GPU (its memory and cores), the whole GPU consuming all
    // of it, and 1/n partitions consuming their share. The scheduler never lets the devices of
    // one GPU together consume more than the set holds.
    CounterSet counters;
    counters.name = k.name + "-counters";
    counters.counters["cores"] = std::to_string(s.cores);
    if (memory != 0) counters.counters["memory"] = k8s::format_binary_quantity(memory);
    d.attributes["sharing"] = AttributeValue::of_string("partitionable");
    d.attributes["partitionCount"] = AttributeValue::of_int(1);
    d.consumes_counters.push_back({counters.name, counters.counters});
    d.capacity["cores"] = {std::to_string(s.cores), std::nullopt};
    const Device whole = d;
    set.devices.push_back(std::move(d));
    for (std::uint32_t parts : s.partitions) {
      const std::uint64_t part_memory = memory / parts / kMiB * kMiB;
      const std::uint32_t part_cores = s.cores / parts;
      if (part_cores == 0 || (memory != 0 && part_memory == 0)) continue;  // too small to split
      for (std::uint32_t index = 0; index < parts; ++index) {
        Device p = whole;
        p.name = k.name + "-p" + std::to_string(parts) + "-" + std::to_string(index);
        p.attributes["partitionCount"] = AttributeValue::of_int(parts);
        p.attributes["parentDevice"] = AttributeValue::of_string(k.name);
        CounterConsumption use{counters.name, {{"cores", std::to_string(part_cores)}}};
        p.capacity["cores"] = {std::to_string(part_cores), std::nullopt};
        if (memory != 0) {
          use.counters["memory"] = k8s::format_binary_quantity(part_memory);
          p.capacity["memory"] = {k8s::format_binary_quantity(part_memory), std::nullopt};
        }
        p.consumes_counters = {use};
        set.devices.push_back(std::move(p));
      }
    }
    set.counter_sets.push_back(std::move(counters));
  }
  return set;
}

std::vector<ResourceSlice> pack_slices(DeviceSet set, const SliceOptions& options) {
  ResourceSlice base;
  base.generate_name = options.node_name + "-" + options.driver + "-";
  base.node_uid = options.node_uid;
  base.driver = options.driver;
  base.pool_name = options.node_name;
  base.pool_generation = options.generation;
  base.node_name = options.node_name;

  std::vector<ResourceSlice> slices;
  for (std::size_t i = 0; i < set.counter_sets.size(); i += kMaxCounterSetsPerSlice) {
    ResourceSlice s = base;
    const std::size_t end = std::min(set.counter_sets.size(), i + kMaxCounterSetsPerSlice);
    s.shared_counters.assign(std::make_move_iterator(set.counter_sets.begin() + i),
                             std::make_move_iterator(set.counter_sets.begin() + end));
    slices.push_back(std::move(s));
  }
  const auto restricted = [](const Device& d) {
    return !d.taints.empty() || !d.consumes_counters.empty();
  };
  ResourceSlice current = base;
  bool current_restricted = false;
  for (Device& d : set.devices) {
    const bool r = current_restricted || restricted(d);
    const std::size_t limit = r ? kMaxDevicesPerSliceWithTaintsOrCounters : kMaxDevicesPerSlice;
    if (current.devices.size() + 1 > limit) {
      slices.push_back(std::move(current));
      current = base;
      current_restricted = false;
    }
    current_restricted = current_restricted || restricted(d);
    current.devices.push_back(std::move(d));
  }
  // An empty pool is still published as one empty slice: consumers then know the node has no
  // devices of this driver rather than waiting for slices that never come.
  if (!current.devices.empty() || slices.empty()) slices.push_back(std::move(current));
  for (ResourceSlice& s : slices)
    s.resource_slice_count = static_cast<std::int64_t>(slices.size());
  return slices;
}

Result<std::vector<ResourceSlice>> build_resource_slices(const Topology& topology,
                                                         const SliceOptions& options) {
  auto set = build_devices(topology, options);
  if (!set) return set.error();
  std::vector<ResourceSlice> slices = pack_slices(std::move(set.value()), options);
  const std::vector<Violation> violations = validate_slices(slices, options.version);
  if (!violations.empty()) {
    std::string message = "the ResourceSlices would be rejected by the API server:";
    for (const Violation& v : violations)
      message += "\n  " + v.describe();
    return make_error(ErrorCode::kInvalid, message);
  }
  return slices;
}

namespace {

Json attribute_json(const AttributeValue& v) {
  Json j = Json::object();
  switch (v.type) {
    case AttributeValue::Type::kInt:
      j["int"] = v.int_value;
      break;
    case AttributeValue::Type::kBool:
      j["bool"] = v.bool_value;
      break;
    case AttributeValue::Type::kString:
      j["string"] = v.text;
      break;
    case AttributeValue::Type::kVersion:
      j["version"] = v.text;
      break;
  }
  return j;
}

Json counters_json(const std::map<std::string, std::string>& counters) {
  Json j = Json::object();
  for (const auto& [name, value] : counters)
    j[name] = Json{{"value", value}};
  return j;
}

// Keys in alphabetical order, as the API server and kubectl print them.
Json device_json(const Device& d) {
  Json j = Json::object();
  if (d.allow_multiple_allocations) j["allowMultipleAllocations"] = true;
  if (!d.attributes.empty()) {
    Json attrs = Json::object();
    for (const auto& [key, value] : d.attributes)
      attrs[key] = attribute_json(value);
    j["attributes"] = std::move(attrs);
  }
  if (!d.capacity.empty()) {
    Json caps = Json::object();
    for (const auto& [key, cap] : d.capacity) {
      Json c = Json::object();
      if (cap.request_policy) {
        const RequestPolicy& p = *cap.request_policy;
        Json policy = Json::object();
        if (!p.default_value.empty()) policy["default"] = p.default_value;
        if (!p.min.empty() || !p.max.empty() || !p.step.empty()) {
          Json range = Json::object();
          if (!p.max.empty()) range["max"] = p.max;
          if (!p.min.empty()) range["min"] = p.min;
          if (!p.step.empty()) range["step"] = p.step;
          policy["validRange"] = std::move(range);
        }
        if (!p.valid_values.empty()) policy["validValues"] = p.valid_values;
        c["requestPolicy"] = std::move(policy);
      }
      c["value"] = cap.value;
      caps[key] = std::move(c);
    }
    j["capacity"] = std::move(caps);
  }
  if (!d.consumes_counters.empty()) {
    Json list = Json::array();
    for (const auto& c : d.consumes_counters) {
      list.push_back(Json{{"counterSet", c.counter_set}, {"counters", counters_json(c.counters)}});
    }
    j["consumesCounters"] = std::move(list);
  }
  j["name"] = d.name;
  if (!d.taints.empty()) {
    Json list = Json::array();
    for (const auto& t : d.taints) {
      Json tj = Json{{"effect", t.effect}, {"key", t.key}};
      if (!t.value.empty()) tj["value"] = t.value;
      list.push_back(std::move(tj));
    }
    j["taints"] = std::move(list);
  }
  return j;
}

}  // namespace

Json slice_to_json(const ResourceSlice& s) {
  Json j;
  j["apiVersion"] = "resource.k8s.io/v1";
  j["kind"] = "ResourceSlice";
  Json meta;
  meta["generateName"] = s.generate_name;
  if (!s.node_uid.empty()) {
    meta["ownerReferences"] = Json::array({Json{{"apiVersion", "v1"},
                                                {"controller", true},
                                                {"kind", "Node"},
                                                {"name", s.node_name},
                                                {"uid", s.node_uid}}});
  }
  j["metadata"] = std::move(meta);
  Json spec;
  if (!s.devices.empty()) {
    Json devices = Json::array();
    for (const Device& d : s.devices)
      devices.push_back(device_json(d));
    spec["devices"] = std::move(devices);
  }
  spec["driver"] = s.driver;
  spec["nodeName"] = s.node_name;
  spec["pool"] = Json{{"generation", s.pool_generation},
                      {"name", s.pool_name},
                      {"resourceSliceCount", s.resource_slice_count}};
  if (!s.shared_counters.empty()) {
    Json sets = Json::array();
    for (const CounterSet& c : s.shared_counters) {
      sets.push_back(Json{{"counters", counters_json(c.counters)}, {"name", c.name}});
    }
    spec["sharedCounters"] = std::move(sets);
  }
  j["spec"] = std::move(spec);
  return j;
}

std::vector<Json> slices_to_json(std::span<const ResourceSlice> slices) {
  std::vector<Json> objects;
  objects.reserve(slices.size());
  for (const ResourceSlice& s : slices)
    objects.push_back(slice_to_json(s));
  return objects;
}

std::string render_slice_objects_yaml(std::span<const Json> objects) {
  return to_yaml_stream(objects);
}

std::string render_slice_objects_json(std::span<const Json> objects) {
  Json list;
  list["apiVersion"] = "v1";
  list["kind"] = "List";
  list["items"] = Json::array();
  for (const Json& o : objects)
    list["items"].push_back(o);
  return list.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string render_slices_yaml(std::span<const ResourceSlice> slices) {
  return render_slice_objects_yaml(slices_to_json(slices));
}

std::string render_slices_json(std::span<const ResourceSlice> slices) {
  return render_slice_objects_json(slices_to_json(slices));
}

}  // namespace nodetopo::exporters::dra
