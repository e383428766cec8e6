// The publish policy over a node's slices: which bus ids other drivers own, which of our devices
// are then published, and how our slices are cut down.
#include <gtest/gtest.h>

#include <nodetopo/kubelet/publish_policy.hpp>

namespace nodetopo::kubelet {
namespace {

nlohmann::json slice(const std::string& driver, const std::string& key, const std::string& bus) {
  return {{"spec",
           {{"driver", driver},
            {"devices", {{{"name", "d0"}, {"attributes", {{key, {{"string", bus}}}}}}}}}}};
}

NodeDevice device(const std::string& name, DeviceKind kind, const std::string& bus) {
  NodeDevice d;
  d.name = name;
  d.kind = kind;
  d.pci_bus_id = bus;
  return d;
}

TEST(KubeletPublishPolicy, ForeignBusIdsFromStandardAndVendorAttributes) {
  const std::vector<nlohmann::json> slices = {
      slice("gpu.nvidia.com", "resource.kubernetes.io/pciBusID", "0000:1B:00.0"),
      slice("gpu.nvidia.com", "pciBusID", "0000:43:00.0"),
      slice("sriovnetwork.openshift.io", "sriovnetwork.openshift.io/pciAddress", "ce:00.0"),
      slice("nodetopo.dev", "resource.kubernetes.io/pciBusID", "0000:52:00.0"),  // ours
      slice("other.example.com", "productName", "0000:61:00.0")};                // no bus id
  EXPECT_EQ(foreign_pci_bus_ids(slices, "nodetopo.dev"),
            (std::set<std::string>{"0000:1b:00.0", "0000:43:00.0", "0000:ce:00.0"}));
}

TEST(KubeletPublishPolicy, AutoSkipsForeignAlwaysKeepsNeverDrops) {
  const std::vector<NodeDevice> devices = {device("gpu-a", DeviceKind::kGpu, "0000:1b:00.0"),
                                           device("gpu-b", DeviceKind::kGpu, "0000:43:00.0"),
                                           device("nic-a", DeviceKind::kNic, "0000:ce:00.0")};
  const std::set<std::string> foreign = {"0000:1b:00.0", "0000:ce:00.0"};
  std::map<DeviceKind, PublishPolicy> policy = {{DeviceKind::kGpu, PublishPolicy::kAuto},
                                                {DeviceKind::kNic, PublishPolicy::kAlways}};
  EXPECT_EQ(devices_to_publish(devices, policy, foreign),
            (std::set<std::string>{"gpu-b", "nic-a"}));
  EXPECT_EQ(devices_to_publish(devices, policy, {}),
            (std::set<std::string>{"gpu-a", "gpu-b", "nic-a"}));  // the vendor went away
  policy[DeviceKind::kNic] = PublishPolicy::kNever;
  EXPECT_EQ(devices_to_publish(devices, policy, {}), (std::set<std::string>{"gpu-a", "gpu-b"}));
}

TEST(KubeletPublishPolicy, FilterKeepsOnePoolSliceWhenEmpty) {
  const nlohmann::json s = {
      {"spec", {{"driver", "nodetopo.dev"}, {"devices", {{{"name", "a"}}, {{"name", "b"}}}}}}};
  auto kept = filter_slices({s}, {"b"});
  ASSERT_EQ(kept.size(), 1U);
  EXPECT_EQ(kept[0]["spec"]["devices"].size(), 1U);
  EXPECT_EQ(kept[0]["spec"]["devices"][0]["name"], "b");
  kept = filter_slices({s, s}, {});
  ASSERT_EQ(kept.size(), 1U);
  EXPECT_TRUE(kept[0]["spec"]["devices"].empty());
}

TEST(KubeletPublishPolicy, ParsesPolicyNames) {
  EXPECT_EQ(*parse_publish_policy("never"), PublishPolicy::kNever);
  EXPECT_FALSE(parse_publish_policy("sometimes").ok());
}

}  // namespace
}  // namespace nodetopo::kubelet
