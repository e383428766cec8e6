// Autoscaler templates from hand-built topologies: identities do not reach the template, layout
// does; every attribute the slice builder writes is classified; the Cluster API annotations and
// the synthetic slice Cluster Autoscaler builds from them; taints.
#include <set>

#include <gtest/gtest.h>

#include <nodetopo/exporters/autoscaler_render.hpp>
#include <nodetopo/exporters/resource_slices.hpp>

#include "test_topologies.hpp"

namespace nodetopo::exporters::autoscaler {
namespace {

std::vector<dra::ResourceSlice> slices_of(const Topology& t,
                                          dra::K8sVersion v = dra::K8sVersion::k1_34,
                                          SharingMode mode = SharingMode::kNone) {
  dra::SliceOptions o;
  o.node_name = std::string(kBuildNodeName);
  o.version = v;
  o.sharing.mode = mode;
  auto r = dra::build_resource_slices(t, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
  return r.ok() ? std::move(r.value()) : std::vector<dra::ResourceSlice>{};
}

Template make(const test::DgxOptions& o) {
  const Topology t = test::make_dgx(o);
  return build_template(t, slices_of(t), compute_labels(t));
}

std::string all_formats(const Template& t) {
  const GroupOptions g;
  return render_capi(t, g) + render_aws_tags(t, g) + render_template_slices(t) +
         render_karpenter(t, g);
}

// "" when equal, else the first differing line of each (the documents are long).
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t line = 1;
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) {
    if (a[i] == '\n') ++line;
    ++i;
  }
  if (i == a.size() && i == b.size()) return "";
  const auto around = [&](const std::string& s) {
    const std::size_t from = s.rfind('\n', i == 0 ? 0 : i - 1);
    const std::size_t start = from == std::string::npos ? 0 : from + 1;
    return s.substr(start, s.find('\n', i) - start);
  };
  return "line " + std::to_string(line) + ": \"" + around(a) + "\" vs \"" + around(b) + "\"";
}

TEST(AutoscalerTemplate, IdentitiesDoNotReachTheTemplate) {
  for (bool fabric : {false, true}) {
    test::DgxOptions a;
    a.fabric = fabric;
    test::DgxOptions b = a;
    b.identity = 7;
    const Template ta = make(a);
    const Template tb = make(b);
    EXPECT_EQ(first_difference(all_formats(ta), all_formats(tb)), "") << "fabric " << fabric;
    EXPECT_EQ(ta.fingerprint, tb.fingerprint);
    EXPECT_EQ(all_formats(ta).find("GPU-"), std::string::npos);
    ASSERT_EQ(ta.omitted.size(), 1U);
    EXPECT_EQ(ta.omitted[0].key, "uuid");
    EXPECT_EQ(ta.omitted[0].devices.size(), 8U);
    ASSERT_EQ(ta.warnings().size(), 1U);
    EXPECT_NE(ta.warnings()[0].find("cannot work when the node group scales from zero"),
              std::string::npos);
  }
}

TEST(AutoscalerTemplate, LayoutAndModelChangeTheFingerprint) {
  const Template base = make({});
  test::DgxOptions moved;
  moved.move_nic0 = true;
  test::DgxOptions renumbered;
  renumbered.bus_offset = 3;
  test::DgxOptions fewer;
  fewer.gpus = 4;
  test::DgxOptions image;
  image.driver_version = "550.54.15";
  for (const test::DgxOptions& o : {moved, renumbered, fewer, image}) {
    const Template t = make(o);
    EXPECT_NE(t.fingerprint, base.fingerprint);
    EXPECT_EQ(t.labels.at(std::string(kTemplateShapeLabel)), t.fingerprint);
  }
  EXPECT_EQ(base.fingerprint.size(), 12U);
  EXPECT_EQ(base.gpu_count, 8U);
}

TEST(AutoscalerTemplate, EveryAttributeTheBuilderWritesIsClassified) {
  std::set<std::string> seen;
  const auto collect = [&](const std::vector<dra::ResourceSlice>& slices) {
    for (const auto& s : slices) {
      for (const auto& d : s.devices) {
        for (const auto& [k, v] : d.attributes)
          seen.insert(k);
      }
    }
  };
  test::DgxOptions fabric;
  fabric.fabric = true;
  for (const Topology& t : {test::make_dgx({}), test::make_dgx(fabric), test::make_nic_farm(3)}) {
    for (auto v : {dra::K8sVersion::k1_34, dra::K8sVersion::k1_36})
      collect(slices_of(t, v));
    collect(slices_of(t, dra::K8sVersion::k1_35, SharingMode::kConsumable));
    collect(slices_of(t, dra::K8sVersion::k1_35, SharingMode::kPartitionable));
  }
  EXPECT_GE(seen.size(), 20U);
  for (const std::string& k : seen)
    EXPECT_NE(find_rule(k), nullptr) << k << " is not classified";
  // And one the table does not know is left out as unique, saying so.
  const Topology t = test::make_dgx({});
  auto slices = slices_of(t);
  slices[0].devices[0].attributes["boardSerial"] = dra::AttributeValue::of_string("1654922000000");
  const Template tpl = build_template(t, std::move(slices), {});
  bool found = false;
  for (const OmittedAttribute& o : tpl.omitted) {
    if (o.key == "boardSerial") {
      found = true;
      EXPECT_NE(o.why.find("not classified"), std::string::npos);
    }
  }
  EXPECT_TRUE(found);
}

TEST(AutoscalerTemplate, BindingsAreTemplateLocalAndKeepEquality) {
  const Template t = make({});
  std::map<std::string, std::set<std::string>> values;
  for (const auto& s : t.slices) {
    EXPECT_EQ(s.node_name, kNodePlaceholder);
    EXPECT_EQ(s.pool_name, kPoolPlaceholder);
    EXPECT_TRUE(s.node_uid.empty());
    for (const auto& d : s.devices) {
      for (const auto& [k, v] : d.attributes) {
        if (classify_attribute(k) == AttributeClass::kBinding) values[k].insert(v.text);
      }
    }
  }
  ASSERT_EQ(values["nvlinkDomain"].size(), 1U);  // one NVLink domain on a DGX
  EXPECT_EQ(*values["nvlinkDomain"].begin(), "template-nvlink-0");
  EXPECT_GE(values["ifName"].size(), 8U);  // distinct values stay distinct
  std::set<std::string> relations;
  for (const Binding& b : t.bindings)
    relations.insert(b.relation);
  EXPECT_EQ(relations,
            (std::set<std::string>{"pcieRoot", "pcieSwitch", "numaNode", "nvlinkDomain"}));
  for (const Binding& b : t.bindings) {
    if (b.relation != "pcieSwitch") continue;
    // Each GPU shares its switch with one NIC: 8 groups holding a GPU and a NIC.
    int pairs = 0;
    for (const BindingGroup& g : b.groups)
      pairs += g.devices.size() == 2 ? 1 : 0;
    EXPECT_GE(pairs, 7);
  }
}

TEST(AutoscalerTemplate, CapiAnnotationsAndTheSliceClusterAutoscalerBuilds) {
  const Template t = make({});
  GroupOptions g;
  g.taints.push_back({"nvidia.com/gpu", "present", "NoSchedule"});
  const auto a = capi_annotations(t, g);
  EXPECT_EQ(a.at(std::string(kCapiDraDriver)), "nodetopo.dev");
  EXPECT_EQ(a.at(std::string(kCapiGpuCount)), "8");
  EXPECT_EQ(a.at(std::string(kCapiMaxPods)), "110");
  EXPECT_EQ(a.at(std::string(kCapiTaints)), "nvidia.com/gpu=present:NoSchedule");
  EXPECT_EQ(a.at(std::string(kCapiCpu)), std::to_string(t.capacity.cpus));
  EXPECT_GT(t.capacity.cpus, 0U);
  EXPECT_EQ(a.at(std::string(kCapiMemory)), std::to_string(t.capacity.memory_bytes / 1024) + "Ki");
  EXPECT_NE(a.at(std::string(kCapiLabels)).find("nodetopo.dev/template-shape=" + t.fingerprint),
            std::string::npos);

  auto view = capi_view_slice(a, "n1");
  ASSERT_TRUE(view.ok());
  ASSERT_TRUE(view->has_value());
  const dra::ResourceSlice& s = **view;
  EXPECT_EQ(s.driver, "nodetopo.dev");
  EXPECT_EQ(s.pool_name, "n1");
  EXPECT_EQ(s.resource_slice_count, 1);
  ASSERT_EQ(s.devices.size(), 8U);
  EXPECT_EQ(s.devices[7].name, "gpu-7");
  ASSERT_EQ(s.devices[0].attributes.size(), 1U);
  EXPECT_EQ(s.devices[0].attributes.at("type").text, "gpu");
  EXPECT_TRUE(s.devices[0].capacity.empty());

  // No driver, or no GPUs: the provider returns no slices; a bad count is an error.
  auto none = capi_view_slice({{std::string(kCapiGpuCount), "2"}}, "n1");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  for (const char* bad : {"two", "-1", "2.5", ""}) {
    auto r = capi_view_slice(
        {{std::string(kCapiDraDriver), "gpu.nvidia.com"}, {std::string(kCapiGpuCount), bad}}, "n1");
    EXPECT_FALSE(r.ok()) << bad;
  }

  // A CPU-only node: no DRA annotations at all.
  const Topology farm = test::make_nic_farm(2);
  const Template nics = build_template(farm, slices_of(farm), compute_labels(farm));
  EXPECT_EQ(capi_annotations(nics, {}).count(std::string(kCapiDraDriver)), 0U);
}

TEST(AutoscalerTemplate, Taints) {
  auto t = parse_taint("dedicated=gpu:NoSchedule");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->key, "dedicated");
  EXPECT_EQ(t->value, "gpu");
  EXPECT_EQ(t->effect, "NoSchedule");
  t = parse_taint("nvidia.com/gpu:NoExecute");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->value.empty());
  for (const char* bad :
       {"dedicated=gpu", "dedicated=gpu:Sometimes", ":NoSchedule", "a,b:NoSchedule"}) {
    EXPECT_FALSE(parse_taint(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace nodetopo::exporters::autoscaler
