// ResourceSlices built from hand-built topologies: device attributes, PIX alignment through the
// pcieSwitch attribute, splitting at the device limits, both sharing modes, and the output's
// field names checked against the upstream round-trip fixtures.
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/slice_validator.hpp>
#include <nodetopo/topology/relations.hpp>

#include "test_support.hpp"
#include "test_topologies.hpp"

namespace nodetopo::exporters::dra {
namespace {

using Json = nlohmann::ordered_json;

SliceOptions options(K8sVersion v = K8sVersion::k1_34, SharingMode mode = SharingMode::kNone) {
  SliceOptions o;
  o.node_name = "dgx-01";
  o.version = v;
  o.sharing.mode = mode;
  return o;
}

std::vector<ResourceSlice> build(const Topology& t, const SliceOptions& o) {
  auto r = build_resource_slices(t, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().describe());
  return r.ok() ? std::move(r.value()) : std::vector<ResourceSlice>{};
}

const Device* find_device(const std::vector<ResourceSlice>& slices, const std::string& name) {
  for (const auto& s : slices) {
    for (const auto& d : s.devices) {
      if (d.name == name) return &d;
    }
  }
  return nullptr;
}

std::string str(const Device& d, const std::string& key) {
  auto it = d.attributes.find(key);
  return it == d.attributes.end() ? std::string("<absent>") : it->second.text;
}

std::size_t device_count(const std::vector<ResourceSlice>& slices) {
  std::size_t n = 0;
  for (const auto& s : slices)
    n += s.devices.size();
  return n;
}

TEST(ResourceSlices, OneDevicePerAcceleratorAndPhysicalNic) {
  const auto slices = build(test::make_dgx(), options());
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_EQ(device_count(slices), 8U + 8U + 1U);  // GPUs, compute NICs, management NIC; no VF
  EXPECT_EQ(slices[0].generate_name, "dgx-01-nodetopo.dev-");
  EXPECT_EQ(slices[0].pool_name, "dgx-01");
  EXPECT_EQ(slices[0].resource_slice_count, 1);
  EXPECT_EQ(find_device(slices, "nic-0000-14-00-1"), nullptr);  // the VF of NIC 0
  for (const auto& s : slices) {
    for (const auto& d : s.devices) {
      EXPECT_FALSE(d.name.find("nvswitch") != std::string::npos) << "NVSwitches are not devices";
    }
  }
}

TEST(ResourceSlices, GpuAttributes) {
  const auto slices = build(test::make_dgx(), options());
  const Device* g = find_device(slices, "gpu-0000-13-00-0");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(str(*g, "resource.kubernetes.io/pcieRoot"), "pci0000:10");
  EXPECT_EQ(g->attributes.at("resource.kubernetes.io/numaNode").int_value, 0);
  EXPECT_FALSE(g->attributes.contains("resource.kubernetes.io/pciBusID"));  // 1.36+ only
  EXPECT_EQ(str(*g, "pciBusID"), "0000:13:00.0");  // the driver's domain until then
  EXPECT_EQ(str(*g, "type"), "gpu");
  EXPECT_EQ(str(*g, "vendor"), "nvidia");
  EXPECT_EQ(str(*g, "productName"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(str(*g, "uuid"), "GPU-003f1e7a5-0b4c-5d1e-9a7f-2c8b6e4d1a00");
  EXPECT_EQ(str(*g, "pciVendorID"), "10de");
  EXPECT_EQ(str(*g, "pciDeviceID"), "2330");
  EXPECT_EQ(str(*g, "driver"), "nvidia");
  EXPECT_EQ(str(*g, "architecture"), "hopper");
  EXPECT_EQ(g->attributes.at("driverVersion").type, AttributeValue::Type::kVersion);
  EXPECT_EQ(str(*g, "driverVersion"), "535.104.5");  // normalised from 535.104.05
  EXPECT_EQ(str(*g, "pcieSwitch"), "0000:11:00.0");
  EXPECT_EQ(g->attributes.at("pcieGen").int_value, 5);
  EXPECT_EQ(g->capacity.at("memory").value, "81559Mi");
  EXPECT_EQ(str(*g, "nvlinkDomain").rfind("local-", 0), 0U);
  // All eight GPUs are one NVLink domain (through the NVSwitches).
  const Device* g7 = find_device(slices, "gpu-0000-83-00-0");
  ASSERT_NE(g7, nullptr);
  EXPECT_EQ(str(*g7, "nvlinkDomain"), str(*g, "nvlinkDomain"));
  EXPECT_EQ(g7->attributes.at("resource.kubernetes.io/numaNode").int_value, 1);
}

TEST(ResourceSlices, PciBusIdFrom136AndFabricDomain) {
  const auto slices = build(test::make_dgx({.fabric = true}), options(K8sVersion::k1_36));
  const Device* g = find_device(slices, "gpu-0000-13-00-0");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(str(*g, "resource.kubernetes.io/pciBusID"), "0000:13:00.0");
  EXPECT_FALSE(g->attributes.contains("pciBusID"));  // the standard one replaces it
  EXPECT_EQ(str(*g, "nvlinkDomain"), "6a0f4c1e-7d2b-4e8a-9c3f-0b1d2e3f4a5b.1");
}

TEST(ResourceSlices, DerivedUuidWhenTheVendorsIsUnknownAndStable) {
  TopologyBuilder b;
  PciFunctionInfo f;
  f.address = {0, 0x3b, 0, 0};
  f.vendor_id = 0x1da3;
  f.device_id = 0x1060;
  f.class_code = 0x120000;
  HostBridgeInfo hb;
  hb.bus = 0x3a;
  hb.root_name = "pci0000:3a";
  const NodeIndex host =
      b.add(NodeKind::kHostBridge, "hostbridge/pci0000:3a", b.root(), hb).value();
  const NodeIndex fn = b.add(NodeKind::kPciDevice, "pci/0000:3b:00.0", host, f).value();
  AcceleratorInfo a;
  a.vendor = AcceleratorVendor::kHabana;
  a.product = "Gaudi3";
  a.driver_version = "not a version";
  b.add(NodeKind::kAccelerator, "accelerator/0000:3b:00.0", fn, a).value();
  const Topology t = std::move(b).freeze();
  const auto slices = build(t, options());
  const Device* d = find_device(slices, "accel-0000-3b-00-0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(str(*d, "type"), "accelerator");
  EXPECT_EQ(str(*d, "uuid").rfind("nodetopo-", 0), 0U);
  EXPECT_EQ(str(*d, "uuid"), str(*find_device(build(t, options()), "accel-0000-3b-00-0"), "uuid"));
  EXPECT_FALSE(d->attributes.contains("driverVersion"));  // not a version: dropped
  EXPECT_FALSE(d->attributes.contains("resource.kubernetes.io/numaNode"));  // unknown: omitted
  EXPECT_FALSE(d->attributes.contains("pcieSwitch"));  // directly on the host bridge
}

TEST(ResourceSlices, NicAttributes) {
  const auto slices = build(test::make_dgx(), options());
  const Device* n = find_device(slices, "nic-0000-14-00-0");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(str(*n, "type"), "nic");
  EXPECT_EQ(str(*n, "vendor"), "mellanox");
  EXPECT_EQ(str(*n, "rdmaDevice"), "mlx5_0");
  EXPECT_EQ(str(*n, "ifName"), "ibp20s0");
  EXPECT_EQ(str(*n, "linkLayer"), "InfiniBand");
  EXPECT_EQ(n->attributes.at("linkSpeed").int_value, 400000);
  const auto down = build(test::make_dgx({.links_up = false}), options());
  EXPECT_FALSE(find_device(down, "nic-0000-14-00-0")->attributes.contains("linkSpeed"));
}

// The acceptance rule: GPU and NIC pairs that nvidia-smi calls PIX share the pcieSwitch
// attribute, and pairs that are not PIX do not.
void expect_pix_pairs_share_switch(const Topology& t) {
  const auto slices = build(t, options());
  const RelationIndex relations(t);
  std::size_t pix = 0;
  for (NodeIndex g : t.nodes_of_kind(NodeKind::kAccelerator)) {
    const auto gf = pci_function_of(t, g);
    const std::string gname = "gpu-" + [&] {
      std::string s = t.node(*gf).as<PciFunctionInfo>().address.to_string();
      for (char& c : s)
        if (c == ':' || c == '.') c = '-';
      return s;
    }();
    const Device* gd = find_device(slices, gname);
    ASSERT_NE(gd, nullptr) << gname;
    for (NodeIndex n = 0; n < t.size(); ++n) {
      const auto* f = t.node(n).get_if<PciFunctionInfo>();
      if (f == nullptr || (f->class_code >> 16) != 0x02 || f->is_virtual_function) continue;
      std::string nname = "nic-" + f->address.to_string();
      for (char& c : nname)
        if (c == ':' || c == '.') c = '-';
      const Device* nd = find_device(slices, nname);
      ASSERT_NE(nd, nullptr) << nname;
      const bool is_pix = relations.between(g, n).cls == RelationClass::kPix;
      pix += is_pix ? 1 : 0;
      EXPECT_EQ(is_pix, str(*gd, "pcieSwitch") == str(*nd, "pcieSwitch"))
          << gname << " " << nname << " " << relations.between(g, n).label();
    }
  }
  EXPECT_GT(pix, 0U);
}

TEST(ResourceSlices, PixPairsShareThePcieSwitchAttribute) {
  expect_pix_pairs_share_switch(test::make_dgx());
  expect_pix_pairs_share_switch(test::make_dgx({.move_nic0 = true}));
}

TEST(ResourceSlices, SplitsAtTheDeviceLimit) {
  const auto at = build(test::make_nic_farm(128), options());
  ASSERT_EQ(at.size(), 1U);
  EXPECT_EQ(at[0].devices.size(), 128U);
  const auto over = build(test::make_nic_farm(129), options());
  ASSERT_EQ(over.size(), 2U);
  EXPECT_EQ(over[0].devices.size(), 128U);
  EXPECT_EQ(over[1].devices.size(), 1U);
  for (const auto& s : over) {
    EXPECT_EQ(s.resource_slice_count, 2);
    EXPECT_EQ(s.pool_name, "dgx-01");
  }
  const auto many = build(test::make_nic_farm(300), options());
  EXPECT_EQ(many.size(), 3U);
  EXPECT_EQ(device_count(many), 300U);
}

TEST(ResourceSlices, EmptyPoolIsOneEmptySlice) {
  const auto slices = build(Topology{}, options());
  ASSERT_EQ(slices.size(), 1U);
  EXPECT_TRUE(slices[0].devices.empty());
  EXPECT_EQ(slices[0].resource_slice_count, 1);
}

TEST(ResourceSlices, ConsumableSharing) {
  const auto slices = build(test::make_dgx(), options(K8sVersion::k1_34, SharingMode::kConsumable));
  const Device* g = find_device(slices, "gpu-0000-13-00-0");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(g->allow_multiple_allocations);
  EXPECT_EQ(str(*g, "sharing"), "consumable");
  const Capacity& mem = g->capacity.at("memory");
  EXPECT_EQ(mem.value, "81559Mi");
  ASSERT_TRUE(mem.request_policy);
  EXPECT_EQ(mem.request_policy->default_value, "1Gi");
  EXPECT_EQ(mem.request_policy->step, "1Gi");
  const Capacity& cores = g->capacity.at("cores");
  EXPECT_EQ(cores.value, "100");
  ASSERT_TRUE(cores.request_policy);
  EXPECT_EQ(cores.request_policy->max, "100");
  const Device* n = find_device(slices, "nic-0000-14-00-0");
  EXPECT_FALSE(n->allow_multiple_allocations);  // NICs are never shared
}

TEST(ResourceSlices, PartitionableSharingNeeds135) {
  auto r = build_resource_slices(test::make_dgx(),
                                 options(K8sVersion::k1_34, SharingMode::kPartitionable));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("1.35"), std::string::npos);
}

TEST(ResourceSlices, PartitionableSharingPutsCountersInTheirOwnSlice) {
  const auto slices =
      build(test::make_dgx(), options(K8sVersion::k1_35, SharingMode::kPartitionable));
  // 8 counter sets fit one slice; 8 x (1 whole + 2 halves + 4 quarters) + 9 NICs = 65 devices,
  // at most 64 per slice once devices consume counters.
  ASSERT_EQ(slices.size(), 3U);
  EXPECT_EQ(slices[0].shared_counters.size(), 8U);
  EXPECT_TRUE(slices[0].devices.empty());
  EXPECT_EQ(slices[1].devices.size(), 64U);
  EXPECT_EQ(slices[2].devices.size(), 1U);
  for (const auto& s : slices) {
    EXPECT_EQ(s.resource_slice_count, 3);
    EXPECT_TRUE(s.devices.empty() || s.shared_counters.empty());
  }
  const CounterSet& set = slices[0].shared_counters[0];
  EXPECT_EQ(set.name, "gpu-0000-13-00-0-counters");
  EXPECT_EQ(set.counters.at("memory"), "81559Mi");
  EXPECT_EQ(set.counters.at("cores"), "100");
  const Device* half = find_device(slices, "gpu-0000-13-00-0-p2-1");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(str(*half, "parentDevice"), "gpu-0000-13-00-0");
  EXPECT_EQ(half->attributes.at("partitionCount").int_value, 2);
  ASSERT_EQ(half->consumes_counters.size(), 1U);
  EXPECT_EQ(half->consumes_counters[0].counter_set, set.name);
  EXPECT_EQ(half->consumes_counters[0].counters.at("memory"), "40779Mi");
  EXPECT_EQ(half->consumes_counters[0].counters.at("cores"), "50");
  EXPECT_EQ(str(*half, "pcieSwitch"), "0000:11:00.0");  // alignment attributes carried over
  EXPECT_NE(find_device(slices, "gpu-0000-13-00-0-p4-3"), nullptr);
  EXPECT_EQ(find_device(slices, "gpu-0000-13-00-0")->consumes_counters[0].counters.at("memory"),
            "81559Mi");
}

// Every field path of the rendered objects exists in the upstream round-trip fixture of the
// version (map keys under attributes/capacity/counters are free-form).
std::set<std::string> paths(const Json& j, const std::string& prefix, bool map_keys) {
  std::set<std::string> out;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string key = map_keys ? "*" : it.key();
      const std::string p = prefix + "." + key;
      out.insert(p);
      const bool next_is_map = it.key() == "attributes" || it.key() == "capacity" ||
                               it.key() == "counters" || it.key() == "labels" ||
                               it.key() == "annotations";
      auto sub = paths(it.value(), p, next_is_map && !map_keys);
      out.insert(sub.begin(), sub.end());
    }
  } else if (j.is_array()) {
    for (const Json& item : j) {
      auto sub = paths(item, prefix + "[]", false);
      out.insert(sub.begin(), sub.end());
    }
  }
  return out;
}

TEST(ResourceSlices, FieldNamesMatchTheUpstreamRoundTripFixtures) {
  for (const auto& [version, fixture] :
       {std::pair{K8sVersion::k1_35,
                  "resource.k8s.io.v1.ResourceSlice.roundtrip-fixture.v1.35.json"},
        std::pair{K8sVersion::k1_36,
                  "resource.k8s.io.v1.ResourceSlice.roundtrip-fixture.v1.36.json"}}) {
    std::ifstream in(test::shared_dir() / "k8s-openapi" / fixture);
    ASSERT_TRUE(in) << fixture;
    const std::set<std::string> known = paths(Json::parse(in), "", false);
    for (SharingMode mode :
         {SharingMode::kNone, SharingMode::kConsumable, SharingMode::kPartitionable}) {
      SliceOptions o = options(version, mode);
      o.node_uid = "2f6f1a9e-0000-4000-8000-000000000001";
      for (const ResourceSlice& s : build(test::make_dgx(), o)) {
        for (const std::string& p : paths(slice_to_json(s), "", false)) {
          EXPECT_TRUE(known.contains(p)) << p << " is not a field of ResourceSlice in " << fixture;
        }
      }
    }
  }
}

// yaml-cpp reads the YAML back to the same values as the JSON rendering (scalars as text).
std::string canonical(const Json& j) {
  if (j.is_object()) {
    std::string s = "{";
    for (auto it = j.begin(); it != j.end(); ++it)
      s += it.key() + ":" + canonical(it.value()) + ",";
    return s + "}";
  }
  if (j.is_array()) {
    std::string s = "[";
    for (const Json& x : j)
      s += canonical(x) + ",";
    return s + "]";
  }
  return j.is_string() ? j.get<std::string>() : j.dump();
}
std::string canonical(const YAML::Node& n) {
  if (n.IsMap()) {
    std::string s = "{";
    for (const auto& kv : n)
      s += kv.first.as<std::string>() + ":" + canonical(kv.second) + ",";
    return s + "}";
  }
  if (n.IsSequence()) {
    std::string s = "[";
    for (const auto& x : n)
      s += canonical(x) + ",";
    return s + "]";
  }
  return n.Scalar();
}

TEST(ResourceSlices, YamlIsByteStableAndReadsBackAsTheJson) {
  for (SharingMode mode :
       {SharingMode::kNone, SharingMode::kConsumable, SharingMode::kPartitionable}) {
    const auto slices = build(test::make_dgx(), options(K8sVersion::k1_36, mode));
    const std::string yaml = render_slices_yaml(slices);
    EXPECT_EQ(yaml, render_slices_yaml(build(test::make_dgx(), options(K8sVersion::k1_36, mode))));
    const auto docs = YAML::LoadAll(yaml);
    ASSERT_EQ(docs.size(), slices.size());
    for (std::size_t i = 0; i < docs.size(); ++i) {
      EXPECT_EQ(canonical(docs[i]), canonical(slice_to_json(slices[i])));
    }
    const Json list = Json::parse(render_slices_json(slices));
    EXPECT_EQ(list["kind"], "List");
    EXPECT_EQ(list["items"].size(), slices.size());
  }
}

}  // namespace
}  // namespace nodetopo::exporters::dra
