// Node labels: the catalogue on a DGX-like node, validity of every key and value, the delivery
// formats, and stability (identical machines and repeated runs give identical labels).
#include <gtest/gtest.h>

#include <nodetopo/exporters/k8s_names.hpp>
#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/topology/shape.hpp>

#include "test_topologies.hpp"

namespace nodetopo::exporters {
namespace {

TEST(NodeLabels, DgxCatalogue) {
  const Topology t = test::make_dgx();
  const LabelMap l = compute_labels(t);
  const LabelMap expected = {
      {"nodetopo.dev/gpu-nic.alignment", "PIX"},
      {"nodetopo.dev/gpu-nic.pix-gpus", "8"},
      {"nodetopo.dev/gpu.count", "8"},
      {"nodetopo.dev/gpu.memory", "81559"},
      {"nodetopo.dev/gpu.pcie-gen", "5"},
      {"nodetopo.dev/gpu.product", "NVIDIA-H100-80GB-HBM3"},
      {"nodetopo.dev/gpu.vendor", "nvidia"},
      {"nodetopo.dev/nic.count", "9"},
      {"nodetopo.dev/nic.speed", "400"},
      {"nodetopo.dev/numa-nodes", "2"},
      {"nodetopo.dev/nvlink", "true"},
      {"nodetopo.dev/nvlink.links", "18"},
      {"nodetopo.dev/rdma", "true"},
      {"nodetopo.dev/rdma.count", "8"},
      {"nodetopo.dev/shape", compute_shape(t).hash},
      {"nodetopo.dev/sockets", "2"},
  };
  EXPECT_EQ(l, expected);
}

TEST(NodeLabels, FabricDomainAndMisalignedNic) {
  const LabelMap fabric = compute_labels(test::make_dgx({.fabric = true}));
  EXPECT_EQ(fabric.at("nodetopo.dev/nvlink.domain"), "6a0f4c1e-7d2b-4e8a-9c3f-0b1d2e3f4a5b.1");
  const LabelMap moved = compute_labels(test::make_dgx({.move_nic0 = true}));
  EXPECT_EQ(moved.at("nodetopo.dev/gpu-nic.alignment"), "NODE");  // GPU 0 lost its PIX NIC
  EXPECT_EQ(moved.at("nodetopo.dev/gpu-nic.pix-gpus"), "7");
  const LabelMap bare = compute_labels(test::make_dgx({.nvlink = false}));
  EXPECT_EQ(bare.at("nodetopo.dev/nvlink"), "false");
  EXPECT_FALSE(bare.contains("nodetopo.dev/nvlink.links"));
}

TEST(NodeLabels, CpuOnlyNode) {
  const LabelMap l = compute_labels(test::make_nic_farm(2));
  EXPECT_EQ(l.at("nodetopo.dev/gpu.count"), "0");
  EXPECT_FALSE(l.contains("nodetopo.dev/gpu.product"));
  EXPECT_FALSE(l.contains("nodetopo.dev/nvlink"));
  EXPECT_EQ(l.at("nodetopo.dev/rdma"), "false");
}

TEST(NodeLabels, EveryKeyAndValueIsValidAndNoneUnderKubernetesIo) {
  for (const Topology& t :
       {test::make_dgx(), test::make_dgx({.fabric = true}), test::make_nic_farm(3), Topology{}}) {
    const LabelMap l = compute_labels(t);
    EXPECT_TRUE(validate_labels(l).empty());
    for (const auto& [k, v] : l) {
      EXPECT_EQ(k.rfind("nodetopo.dev/", 0), 0U) << k;
      EXPECT_EQ(k8s::check_label_key(k), "");
      EXPECT_EQ(k8s::check_label_value(v), "");
    }
  }
  EXPECT_FALSE(validate_labels({{"kubernetes.io/x", "1"}}).empty());
  EXPECT_FALSE(validate_labels({{"nodetopo.dev/x", "a b"}}).empty());
}

TEST(NodeLabels, IdenticalMachinesAndRepeatedRunsGiveIdenticalLabels) {
  const std::string a = render_labels_plain(compute_labels(test::make_dgx({.identity = 1})));
  const std::string b = render_labels_plain(compute_labels(test::make_dgx({.identity = 9})));
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, render_labels_plain(compute_labels(test::make_dgx({.identity = 1}))));
}

TEST(NodeLabels, Formats) {
  const LabelMap l = {{"nodetopo.dev/gpu.count", "8"}, {"nodetopo.dev/rdma", "true"}};
  EXPECT_EQ(render_labels_plain(l), "nodetopo.dev/gpu.count=8\nnodetopo.dev/rdma=true\n");
  EXPECT_EQ(render_labels_nfd(l, ""), render_labels_plain(l));
  EXPECT_EQ(
      render_labels_nfd(l, "2030-01-01T00:00:00Z"),
      "# +expiry-time=2030-01-01T00:00:00Z\nnodetopo.dev/gpu.count=8\nnodetopo.dev/rdma=true\n");
  EXPECT_EQ(render_labels_patch(l),
            "{\"metadata\":{\"labels\":{\"nodetopo.dev/gpu.count\":\"8\",\"nodetopo.dev/rdma\":"
            "\"true\"}}}\n");
  auto nf = labels_to_nodefeature(l, "node-1", "nfd");
  ASSERT_TRUE(nf.ok());
  EXPECT_EQ((*nf)["apiVersion"], "nfd.k8s-sigs.io/v1alpha1");
  EXPECT_EQ((*nf)["kind"], "NodeFeature");
  EXPECT_EQ((*nf)["metadata"]["name"], "node-1-nodetopo");
  EXPECT_EQ((*nf)["metadata"]["namespace"], "nfd");
  EXPECT_EQ((*nf)["metadata"]["labels"]["nfd.node.kubernetes.io/node-name"], "node-1");
  EXPECT_EQ((*nf)["spec"]["labels"]["nodetopo.dev/gpu.count"], "8");
  EXPECT_FALSE(labels_to_nodefeature(l, std::string(64, 'n'), "").ok());  // not a label value
  EXPECT_FALSE(labels_to_nodefeature(l, "Node_1", "").ok());
  EXPECT_FALSE(labels_to_nodefeature(l, "node-1", "Bad_NS").ok());
}

}  // namespace
}  // namespace nodetopo::exporters
