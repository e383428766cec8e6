// NodeResourceTopology: NUMA zones, SLIT costs, cpu/memory/accelerator resources.
#include <gtest/gtest.h>

#include <nodetopo/exporters/nrt.hpp>

#include "test_topologies.hpp"

namespace nodetopo::exporters {
namespace {

TEST(Nrt, DgxZones) {
  auto r = render_nrt(test::make_dgx(), "dgx-01");
  ASSERT_TRUE(r.ok());
  const auto& j = *r;
  EXPECT_EQ(j["apiVersion"], "topology.node.k8s.io/v1alpha2");
  EXPECT_EQ(j["kind"], "NodeResourceTopology");
  EXPECT_EQ(j["metadata"]["name"], "dgx-01");
  ASSERT_EQ(j["zones"].size(), 2U);
  const auto& z1 = j["zones"][1];
  EXPECT_EQ(z1["name"], "node-1");
  EXPECT_EQ(z1["type"], "Node");
  ASSERT_EQ(z1["costs"].size(), 2U);
  EXPECT_EQ(z1["costs"][0]["name"], "node-0");
  EXPECT_EQ(z1["costs"][0]["value"], 21);
  EXPECT_EQ(z1["costs"][1]["value"], 10);
  const auto& res = z1["resources"];
  ASSERT_EQ(res.size(), 3U);
  EXPECT_EQ(res[0]["name"], "cpu");
  EXPECT_EQ(res[0]["capacity"], "56");
  EXPECT_EQ(res[1]["name"], "memory");
  EXPECT_EQ(res[1]["capacity"], "1004Gi");
  EXPECT_EQ(res[2]["name"], "nvidia.com/gpu");
  EXPECT_EQ(res[2]["capacity"], "4");
  EXPECT_EQ(res[2]["allocatable"], "4");
  EXPECT_EQ(res[2]["available"], "4");
}

TEST(Nrt, GpuMemoryNodesAreNotZonesAndNodeNameIsChecked) {
  TopologyBuilder b;
  NumaInfo dram;
  dram.os_index = 0;
  dram.cpus.insert_range(0, 3);
  b.add(NodeKind::kNumaNode, "numa/0", b.root(), dram).value();
  NumaInfo gpu_mem;
  gpu_mem.os_index = 250;
  gpu_mem.device = PciAddress{4, 4, 0, 0};
  gpu_mem.subtype = "GPUMemory";
  b.add(NodeKind::kNumaNode, "numa/250", b.root(), gpu_mem).value();
  const Topology t = std::move(b).freeze();
  auto r = render_nrt(t, "n1");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)["zones"].size(), 1U);
  EXPECT_FALSE((*r)["zones"][0].contains("costs"));  // no SLIT reported
  EXPECT_FALSE(render_nrt(t, "N1").ok());
}

}  // namespace
}  // namespace nodetopo::exporters
