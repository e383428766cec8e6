#include <algorithm>
#include <set>

#include <nodetopo/exporters/k8s_devices.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/topology/relations.hpp>
#include <nodetopo/topology/shape.hpp>

namespace nodetopo::exporters {

namespace {

using Json = nlohmann::ordered_json;

std::string key(std::string_view name) {
  return std::string(kLabelDomain) + "/" + std::string(name);
}

// 400000 -> "400", 2500 -> "2.5", 100 -> "0.1" (Gb/s, at most one decimal).
std::string gbps(std::uint64_t mbps) {
  const std::uint64_t tenths = (mbps + 50) / 100;
  std::string out = std::to_string(tenths / 10);
  if (tenths % 10 != 0) {  // appended: "." + std::to_string() draws GCC 12's false -Wrestrict
    out += '.';
    out += std::to_string(tenths % 10);
  }
  return out;
}

// Order of PCIe relation classes from best to worst; NVLink/xGMI never occur GPU<->NIC.
int rank(RelationClass c) {
  switch (c) {
    case RelationClass::kSelf:
    case RelationClass::kNvLink:
    case RelationClass::kXgmi:
    case RelationClass::kPix:
      return 0;
    case RelationClass::kPxb:
      return 1;
    case RelationClass::kPhb:
      return 2;
    case RelationClass::kNode:
      return 3;
    case RelationClass::kSys:
      return 4;
  }
  return 4;
}

constexpr std::array<std::string_view, 5> kRankName = {"PIX", "PXB", "PHB", "NODE", "SYS"};

void put(LabelMap& labels, std::string_view name, const std::string& value) {
  if (value.empty()) return;
  if (!k8s::check_label_value(value).empty()) return;  // never write an invalid value
  labels[key(name)] = value;
}

// One value for a set of devices: the common value, or "mixed".
std::string uniform(const std::vector<std::string>& values) {
  if (values.empty()) return {};
  const bool same = std::all_of(values.begin(), values.end(),
                                [&](const std::string& v) { return v == values.front(); });
  return same ? values.front() : "mixed";
}

}  // namespace

LabelMap compute_labels(const Topology& topology) {
  LabelMap labels;
  std::size_t numa = 0;
  for (NodeIndex i : topology.nodes_of_kind(NodeKind::kNumaNode)) {
    if (!topology.node(i).as<NumaInfo>().device) ++numa;  // GPU memory is not a NUMA domain here
  }
  put(labels, "numa-nodes", std::to_string(numa));
  put(labels, "sockets", std::to_string(topology.nodes_of_kind(NodeKind::kPackage).size()));

  // The node name only seeds local fabric ids, which labels do not use.
  const std::vector<K8sDevice> devices = collect_k8s_devices(topology, "");
  std::vector<const K8sDevice*> gpus;
  std::vector<const K8sDevice*> nics;
  for (const K8sDevice& d : devices) {
    (d.type == K8sDeviceType::kNic ? nics : gpus).push_back(&d);
  }

  put(labels, "gpu.count", std::to_string(gpus.size()));
  if (!gpus.empty()) {
    std::vector<std::string> vendors;
    std::vector<std::string> products;
    std::vector<std::string> domains;
    std::uint64_t min_memory = UINT64_MAX;
    int min_gen = 0;
    bool gen_known = true;
    for (const K8sDevice* g : gpus) {
      vendors.emplace_back(to_string(g->accelerator->vendor));
      products.push_back(k8s::sanitize_label_value(
          g->accelerator->product.empty() ? g->pci->device_name : g->accelerator->product));
      min_memory = std::min(min_memory, g->accelerator->memory_bytes);
      const int gen = g->pci->link_max.generation();
      if (gen == 0) gen_known = false;
      min_gen = min_gen == 0 ? gen : std::min(min_gen, gen);
      // Only a fabric reported by the hardware names a domain shared with other nodes.
      if (!g->accelerator->fabric_cluster_uuid.empty()) domains.push_back(g->nvlink_domain);
    }
    put(labels, "gpu.vendor", uniform(vendors));
    put(labels, "gpu.product", uniform(products));
    if (min_memory != 0 && min_memory != UINT64_MAX) {
      put(labels, "gpu.memory", std::to_string(min_memory >> 20));  // MiB, as GFD writes it
    }
    if (gen_known && min_gen > 0) put(labels, "gpu.pcie-gen", std::to_string(min_gen));

    const RelationIndex relations(topology);
    bool any_nvlink = false;
    bool any_xgmi = false;
    std::int64_t min_links = -1;
    for (std::size_t a = 0; a < gpus.size(); ++a) {
      any_nvlink = any_nvlink || !gpus[a]->nvlink_domain.empty();
      any_xgmi = any_xgmi || !gpus[a]->xgmi_domain.empty();
      for (std::size_t b = a + 1; b < gpus.size(); ++b) {
        const Relation r = relations.between(gpus[a]->node, gpus[b]->node);
        const std::int64_t links = r.cls == RelationClass::kNvLink ? r.nvlinks : 0;
        min_links = min_links < 0 ? links : std::min(min_links, links);
      }
    }
    put(labels, "nvlink", any_nvlink ? "true" : "false");
    if (any_nvlink && min_links > 0) put(labels, "nvlink.links", std::to_string(min_links));
    if (domains.size() == gpus.size()) put(labels, "nvlink.domain", uniform(domains));
    if (any_xgmi) put(labels, "xgmi", "true");

    // GPU<->NIC alignment: for every GPU its closest NIC (RDMA NICs when there are any: those
    // carry GPUDirect traffic), summarised by the worst of these best classes.
    std::vector<const K8sDevice*> candidates;
    for (const K8sDevice* n : nics) {
      if (!n->rdma_device.empty()) candidates.push_back(n);
    }
    if (candidates.empty()) candidates = nics;
    if (!candidates.empty()) {
      int worst = 0;
      std::size_t pix = 0;
      for (const K8sDevice* g : gpus) {
        int best = 4;
        for (const K8sDevice* n : candidates) {
          best = std::min(best, rank(relations.between(g->node, n->node).cls));
        }
        worst = std::max(worst, best);
        if (best == 0) ++pix;
      }
      put(labels, "gpu-nic.alignment", std::string(kRankName[static_cast<std::size_t>(worst)]));
      put(labels, "gpu-nic.pix-gpus", std::to_string(pix));
    }
  }

  put(labels, "nic.count", std::to_string(nics.size()));
  std::uint64_t fastest = 0;
  std::size_t rdma = 0;
  for (const K8sDevice* n : nics) {
    if (n->speed_mbps) fastest = std::max(fastest, *n->speed_mbps);
    if (!n->rdma_device.empty()) ++rdma;
  }
  if (fastest > 0) put(labels, "nic.speed", gbps(fastest));
  put(labels, "rdma", rdma > 0 ? "true" : "false");
  put(labels, "rdma.count", std::to_string(rdma));
  put(labels, "shape", compute_shape(topology).hash);
  return labels;
}

LabelMap compute_labels(const Topology& topology, const InstanceLabels& instance) {
  LabelMap labels = compute_labels(topology);
  for (const auto& [k, v] : instance) {
    if (k8s::check_label_value(v.value).empty()) labels[k] = v.value;
  }
  return labels;
}

std::vector<std::string> validate_labels(const LabelMap& labels) {
  std::vector<std::string> problems;
  for (const auto& [k, v] : labels) {
    if (std::string why = k8s::check_label_key(k); !why.empty()) problems.push_back(why);
    if (std::string why = k8s::check_label_value(v); !why.empty()) {
      problems.push_back("label " + k + ": " + why);
    }
  }
  return problems;
}

std::string render_labels_plain(const LabelMap& labels) {
  std::string out;
  for (const auto& [k, v] : labels)
    out += k + "=" + v + "\n";
  return out;
}

std::string render_labels_nfd(const LabelMap& labels, std::string_view expiry) {
  std::string out;
  if (!expiry.empty()) out += "# +expiry-time=" + std::string(expiry) + "\n";
  return out + render_labels_plain(labels);
}

Result<Json> labels_to_nodefeature(const LabelMap& labels, std::string_view node_name,
                                   std::string_view name_space) {
  if (std::string why = k8s::check_dns_subdomain(node_name, 253); !why.empty()) {
    return make_error(ErrorCode::kInvalid, "node name: " + why);
  }
  if (std::string why = k8s::check_label_value(node_name); !why.empty()) {
    return make_error(ErrorCode::kInvalid,
                      "node name cannot be the value of nfd.node.kubernetes.io/node-name: " + why);
  }
  if (!name_space.empty()) {
    if (std::string why = k8s::check_dns_label(name_space); !why.empty()) {
      return make_error(ErrorCode::kInvalid, "namespace: " + why);
    }
  }
  Json j;
  j["apiVersion"] = "nfd.k8s-sigs.io/v1alpha1";
  j["kind"] = "NodeFeature";
  Json meta;
  meta["labels"] = Json{{"nfd.node.kubernetes.io/node-name", std::string(node_name)}};
  meta["name"] = std::string(node_name) + "-nodetopo";
  if (!name_space.empty()) meta["namespace"] = std::string(name_space);
  j["metadata"] = std::move(meta);
  Json spec_labels = Json::object();
  for (const auto& [k, v] : labels)
    spec_labels[k] = v;
  j["spec"] = Json{{"labels", std::move(spec_labels)}};
  return j;
}

std::string render_labels_patch(const LabelMap& labels) {
  Json l = Json::object();
  for (const auto& [k, v] : labels)
    l[k] = v;
  return Json{{"metadata", Json{{"labels", std::move(l)}}}}.dump() + "\n";
}

}  // namespace nodetopo::exporters
