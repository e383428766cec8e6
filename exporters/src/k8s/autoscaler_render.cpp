#include <cctype>
#include <charconv>

#include <nodetopo/exporters/autoscaler_render.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>

namespace nodetopo::exporters::autoscaler {

namespace {

using Json = nlohmann::ordered_json;

std::string object_name(const Template& t, const GroupOptions& o) {
  return o.name.empty() ? "nodetopo-" + t.fingerprint : o.name;
}

std::string taint_text(const Taint& taint) {
  return taint.key + (taint.value.empty() ? "" : "=" + taint.value) + ":" + taint.effect;
}

// Memory as Cluster Autoscaler and the kubelet count it: a whole number of KiB.
std::string memory_quantity(std::uint64_t bytes) {
  return std::to_string(bytes / 1024) + "Ki";
}

Json metadata(const Template& t, const GroupOptions& o, Json annotations) {
  Json meta;
  meta["name"] = object_name(t, o);
  if (!o.name_space.empty()) meta["namespace"] = o.name_space;
  meta["labels"] = Json{{std::string(kTemplateShapeLabel), t.fingerprint}};
  if (!annotations.empty()) meta["annotations"] = std::move(annotations);
  return meta;
}

}  // namespace

Result<Taint> parse_taint(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return make_error(ErrorCode::kInvalid, "taint \"" + std::string(text) +
                                               "\" has no effect (expected key[=value]:Effect)");
  }
  Taint t;
  t.effect = std::string(text.substr(colon + 1));
  if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
    return make_error(ErrorCode::kInvalid, "taint \"" + std::string(text) +
                                               "\": effect must be NoSchedule, " +
                                               "PreferNoSchedule or NoExecute");
  }
  const std::string_view kv = text.substr(0, colon);
  const auto eq = kv.find('=');
  t.key = std::string(kv.substr(0, eq));
  if (eq != std::string_view::npos) t.value = std::string(kv.substr(eq + 1));
  if (t.key.empty()) {
    return make_error(ErrorCode::kInvalid, "taint \"" + std::string(text) + "\" has no key");
  }
  // Commas separate taints in the Cluster API annotation; a comma inside one would split it.
  if (t.key.find(',') != std::string::npos || t.value.find(',') != std::string::npos) {
    return make_error(ErrorCode::kInvalid, "taint \"" + std::string(text) + "\" holds a comma");
  }
  return t;
}

std::map<std::string, std::string> capi_annotations(const Template& t, const GroupOptions& o) {
  std::map<std::string, std::string> a;
  a[std::string(kCapiCpu)] = std::to_string(t.capacity.cpus);
  a[std::string(kCapiMemory)] = memory_quantity(t.capacity.memory_bytes);
  a[std::string(kCapiMaxPods)] = std::to_string(o.max_pods);
  std::string labels;
  for (const auto& [k, v] : t.labels)
    labels += (labels.empty() ? "" : ",") + k + "=" + v;
  a[std::string(kCapiLabels)] = labels;
  if (!o.taints.empty()) {
    std::string taints;
    // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict overlap inside
    // operator+(const char*, std::string&&) here.
    for (const Taint& taint : o.taints) {
      if (!taints.empty()) taints += ',';
      taints += taint_text(taint);
    }
    a[std::string(kCapiTaints)] = taints;
  }
  if (t.gpu_count > 0) {
    a[std::string(kCapiDraDriver)] = t.driver;
    a[std::string(kCapiGpuCount)] = std::to_string(t.gpu_count);
  }
  a[std::string(kTemplateShapeLabel)] = t.fingerprint;
  return a;
}

std::string render_capi(const Template& t, const GroupOptions& o) {
  Json annotations = Json::object();
  for (const auto& [k, v] : capi_annotations(t, o))
    annotations[k] = v;
  Json doc;
  doc["apiVersion"] = "cluster.x-k8s.io/v1beta1";
  doc["kind"] = o.kind;
  doc["metadata"] = metadata(t, o, std::move(annotations));
  return to_yaml(doc);
}

std::string render_aws_tags(const Template& t, const GroupOptions& o) {
  const std::string asg = o.asg_name.empty() ? "${ASG_NAME}" : o.asg_name;
  Json tags = Json::array();
  const auto add = [&](const std::string& key, const std::string& value) {
    tags.push_back(Json{{"ResourceId", asg},
                        {"ResourceType", "auto-scaling-group"},
                        {"Key", key},
                        {"Value", value},
                        {"PropagateAtLaunch", false}});
  };
  for (const auto& [k, v] : t.labels)
    add(std::string(kAwsLabelTag) + k, v);
  for (const Taint& taint : o.taints)
    add(std::string(kAwsTaintTag) + taint.key, taint.value + ":" + taint.effect);
  // The AWS provider takes CPU, memory and GPUs from its instance-type table; resource tags
  // override or add to it. Only what nodetopo knows better than the table is written.
  add(std::string(kAwsResourceTag) + "pods", std::to_string(o.max_pods));
  Json doc;
  doc["Tags"] = std::move(tags);
  return doc.dump(2) + "\n";
}

std::string render_template_slices(const Template& t) {
  return dra::render_slices_yaml(t.slices);
}

std::string render_karpenter(const Template& t, const GroupOptions& o) {
  Json doc;
  doc["apiVersion"] = "nodetopo.dev/v1alpha1";
  doc["kind"] = "NodeShapeTemplate";
  doc["metadata"] = metadata(t, o, Json::object());
  Json spec;
  spec["fingerprint"] = t.fingerprint;
  spec["placeholders"] = Json{{"nodeName", std::string(kNodePlaceholder)},
                              {"poolName", std::string(kPoolPlaceholder)}};
  Json labels = Json::object();
  for (const auto& [k, v] : t.labels)
    labels[k] = v;
  spec["nodeLabels"] = std::move(labels);
  spec["capacity"] = Json{{"cpu", std::to_string(t.capacity.cpus)},
                          {"memory", memory_quantity(t.capacity.memory_bytes)},
                          {"pods", std::to_string(o.max_pods)}};
  if (!t.capacity.architecture.empty()) spec["architecture"] = t.capacity.architecture;
  if (!o.taints.empty()) {
    Json taints = Json::array();
    for (const Taint& taint : o.taints) {
      Json j{{"key", taint.key}, {"effect", taint.effect}};
      if (!taint.value.empty()) j["value"] = taint.value;
      taints.push_back(std::move(j));
    }
    spec["taints"] = std::move(taints);
  }
  Json bindings = Json::array();
  for (const Binding& b : t.bindings) {
    Json groups = Json::array();
    for (const BindingGroup& g : b.groups)
      groups.push_back(Json{{"value", g.value}, {"devices", g.devices}});
    bindings.push_back(
        Json{{"relation", b.relation}, {"attribute", b.attribute}, {"groups", std::move(groups)}});
  }
  spec["bindings"] = std::move(bindings);
  Json omitted = Json::array();
  for (const OmittedAttribute& a : t.omitted)
    omitted.push_back(Json{{"attribute", a.key}, {"reason", a.why}, {"devices", a.devices.size()}});
  spec["omittedAttributes"] = std::move(omitted);
  Json slices = Json::array();
  for (const dra::ResourceSlice& s : t.slices)
    slices.push_back(dra::slice_to_json(s));
  spec["resourceSlices"] = std::move(slices);
  doc["spec"] = std::move(spec);
  return to_yaml(doc);
}

Result<std::optional<dra::ResourceSlice>> capi_view_slice(
    const std::map<std::string, std::string>& annotations, const std::string& node_name) {
  const auto driver = annotations.find(std::string(kCapiDraDriver));
  if (driver == annotations.end() || driver->second.empty())
    return std::optional<dra::ResourceSlice>{};
  std::int64_t count = 0;
  if (const auto g = annotations.find(std::string(kCapiGpuCount)); g != annotations.end()) {
    const std::string& v = g->second;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), count);
    if (ec != std::errc() || end != v.data() + v.size() || count < 0 || count > 4096) {
      return make_error(ErrorCode::kInvalid, "annotation " + std::string(kCapiGpuCount) + ": \"" +
                                                 v + "\" is not a whole number of GPUs");
    }
  }
  if (count == 0) return std::optional<dra::ResourceSlice>{};
  dra::ResourceSlice s;
  s.driver = driver->second;
  s.node_name = node_name;
  s.pool_name = node_name;
  s.generate_name = node_name + "-" + driver->second + "-";
  s.pool_generation = 0;
  s.resource_slice_count = 1;
  for (std::int64_t i = 0; i < count; ++i) {
    dra::Device d;
    d.name = "gpu-" + std::to_string(i);
    d.attributes["type"] = dra::AttributeValue::of_string("gpu");
    s.devices.push_back(std::move(d));
  }
  return std::optional<dra::ResourceSlice>{std::move(s)};
}

}  // namespace nodetopo::exporters::autoscaler
