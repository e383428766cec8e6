// HAMi's node documents (format and sources: hami.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/exporters/k8s_devices.hpp>
#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/topology/relations.hpp>

namespace nodetopo::exporters {

namespace {

// HAMi's P2PLinkType weights (calculate_score.go): NVML's common-ancestor levels map onto
// nvidia-smi's classes (TOPOLOGY_SINGLE = PIX, MULTIPLE = PXB, HOSTBRIDGE = PHB, NODE, SYSTEM
// = SYS); TOPOLOGY_INTERNAL (two GPUs of one board) is 60, which nodetopo cannot tell from PIX.
int pcie_weight(RelationClass c) {
  switch (c) {
    case RelationClass::kSelf:
      return 60;
    case RelationClass::kPix:
      return 50;
    case RelationClass::kPxb:
      return 40;
    case RelationClass::kPhb:
      return 30;
    case RelationClass::kNode:
      return 20;
    case RelationClass::kSys:
    case RelationClass::kNvLink:
    case RelationClass::kXgmi:
      return 10;
  }
  return 10;
}

void append_int(std::string& out, std::int64_t v) {
  out += std::to_string(v);
}

}  // namespace

std::string go_json_string(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    char buf[8];
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '<':
      case '>':
      case '&':
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8/A9) break JavaScript; Go escapes them.
    if (c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(text[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(text[i + 2]) == 0xA9)) {
      out += static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    out += static_cast<char>(c);
  }
  out += '"';
  return out;
}

Result<void> check_hami_options(const HamiOptions& o) {
  if (o.split_count < 1 || o.split_count > 1024) {
    return make_error(ErrorCode::kInvalid, "split_count: must be between 1 and 1024");
  }
  const auto scaling_ok = [](double v) { return std::isfinite(v) && v > 0 && v <= 100; };
  if (!scaling_ok(o.memory_scaling)) {
    return make_error(ErrorCode::kInvalid, "memory_scaling: must be above 0 and at most 100");
  }
  if (!scaling_ok(o.core_scaling)) {
    return make_error(ErrorCode::kInvalid, "core_scaling: must be above 0 and at most 100");
  }
  if (o.mode != "hami-core" && o.mode != "mps") {
    return make_error(ErrorCode::kInvalid,
                      "mode: \"" + o.mode + "\" is not bridged (expected hami-core or mps)");
  }
  if (std::string why = k8s::check_label_key(o.resource_name); !why.empty()) {
    return make_error(ErrorCode::kInvalid, "resource_name: " + why);
  }
  return {};
}

int hami_pair_score(const Topology& topology, NodeIndex a, NodeIndex b) {
  if (a == b) return 0;
  const RelationIndex relations(topology);
  int score = pcie_weight(relations.pcie_between(a, b).cls);
  const Relation r = relations.between(a, b);
  if (r.cls == RelationClass::kNvLink && r.nvlinks >= 1 && r.nvlinks <= 18) {
    score += static_cast<int>(100 * r.nvlinks);
  }
  return score;
}

Result<HamiDocuments> render_hami(const Topology& topology, const HamiOptions& options) {
  if (auto ok = check_hami_options(options); !ok) return ok.error();
  HamiDocuments docs;
  std::uint32_t rank = 0;
  for (const K8sDevice& d : collect_k8s_devices(topology, "")) {
    if (d.type == K8sDeviceType::kNic || d.accelerator == nullptr) continue;
    if (d.accelerator->vendor != AcceleratorVendor::kNvidia) continue;
    const std::uint32_t position = rank++;
    if (d.accelerator->uuid.empty()) {
      docs.warnings.push_back("GPU " + d.pci->address.to_string() +
                              ": no UUID (NVML reported none), not registered for HAMi");
      continue;
    }
    HamiDevice dev;
    dev.id = d.accelerator->uuid;
    dev.index = d.accelerator->index.value_or(position);
    dev.count = static_cast<std::int32_t>(options.split_count);
    // As HAMi's plugin: MiB, then scaled and truncated to int32 (register.go).
    auto mem = static_cast<std::int32_t>(d.accelerator->memory_bytes / 1024 / 1024);
    if (options.memory_scaling != 1.0) {
      mem = static_cast<std::int32_t>(static_cast<double>(mem) * options.memory_scaling);
    }
    dev.devmem = mem;
    dev.devcore = static_cast<std::int32_t>(options.core_scaling * 100);
    std::string type = d.accelerator->product.empty() ? d.pci->device_name : d.accelerator->product;
    if (type.rfind("NVIDIA", 0) != 0) type = "NVIDIA-" + type;
    dev.type = std::move(type);
    dev.numa = d.numa_node.value_or(0);
    dev.mode = options.mode;
    dev.health = true;
    dev.node = d.node;
    docs.devices.push_back(std::move(dev));
  }
  std::stable_sort(docs.devices.begin(), docs.devices.end(),
                   [](const HamiDevice& a, const HamiDevice& b) { return a.index < b.index; });
  docs.gpu_count = static_cast<std::uint64_t>(docs.devices.size()) * options.split_count;

  // Go's json.Marshal of []*DeviceInfo: struct field order, zero values left out (omitempty).
  std::string& reg = docs.register_json;
  reg = "[";
  for (std::size_t i = 0; i < docs.devices.size(); ++i) {
    const HamiDevice& d = docs.devices[i];
    std::string fields;
    const auto field = [&](std::string_view name, const std::string& value) {
      fields += fields.empty() ? "" : ",";
      fields += "\"";
      fields += name;
      fields += "\":";
      fields += value;
    };
    if (!d.id.empty()) field("id", go_json_string(d.id));
    if (d.index != 0) field("index", std::to_string(d.index));
    if (d.count != 0) field("count", std::to_string(d.count));
    if (d.devmem != 0) field("devmem", std::to_string(d.devmem));
    if (d.devcore != 0) field("devcore", std::to_string(d.devcore));
    if (!d.type.empty()) field("type", go_json_string(d.type));
    if (d.numa != 0) field("numa", std::to_string(d.numa));
    if (!d.mode.empty()) field("mode", go_json_string(d.mode));
    if (d.health) field("health", "true");
    reg += (i == 0 ? "{" : ",{") + fields + "}";
  }
  reg += "]";

  if (options.score) {
    const RelationIndex relations(topology);
    std::string& s = docs.score_json;
    s = "[";
    for (std::size_t i = 0; i < docs.devices.size(); ++i) {
      // Go marshals map keys sorted.
      std::map<std::string, int> peers;
      for (std::size_t j = 0; j < docs.devices.size(); ++j) {
        if (i == j) continue;
        const NodeIndex a = docs.devices[i].node;
        const NodeIndex b = docs.devices[j].node;
        int score = pcie_weight(relations.pcie_between(a, b).cls);
        const Relation r = relations.between(a, b);
        if (r.cls == RelationClass::kNvLink && r.nvlinks >= 1 && r.nvlinks <= 18) {
          score += static_cast<int>(100 * r.nvlinks);
        }
        peers[docs.devices[j].id] = score;
      }
      s += i == 0 ? "{" : ",{";
      s += "\"uuid\":" + go_json_string(docs.devices[i].id) + ",\"score\":{";
      bool first = true;
      for (const auto& [id, score] : peers) {
        s += first ? "" : ",";
        first = false;
        s += go_json_string(id) + ":";
        append_int(s, score);
      }
      s += "}}";
    }
    s += "]";
  }
  return docs;
}

}  // namespace nodetopo::exporters
