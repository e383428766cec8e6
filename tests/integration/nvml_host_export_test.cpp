// The exporters on what the real probes make of a hand-written HGX H100 host through the mock
// NVML library (the same code path as on hardware): NVML UUIDs, the fabric's NVLink domain,
// NV18 labels, valid slices; and a second host with other identities has the same shape.
#include <gtest/gtest.h>

#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/topology/shape.hpp>

#include "../unit/probes/nvml_fake_host.hpp"
#include "discover.hpp"

namespace nodetopo::exporters {
namespace {

probes::Discovery discover(const test::FakeHost& host) {
  auto root = probes::SysRoot::open(host.root(), probes::SysRoot::Liveness::kCapture);
  EXPECT_TRUE(root.ok());
  probes::ProbeOptions options;
  options.nvml_library = test::mock_nvml_library().string();
  return ::nodetopo::test::discover(root.value(), options);
}

// Same hardware, other serials and UUIDs.
nlohmann::json other_identities(nlohmann::json fixture) {
  for (auto& gpu : fixture["devices"]) {
    gpu["uuid"] =
        "GPU-00000000-1111-2222-3333-44444444444" + std::to_string(gpu["index"].get<int>());
    gpu["serial"] = "9999" + std::to_string(gpu["index"].get<int>());
  }
  return fixture;
}

TEST(ExportNvmlHost, SlicesAndLabelsFromTheRealProbes) {
  test::FakeHost host;
  host.set_fixture(test::hgx_h100(host));
  const probes::Discovery d = discover(host);
  dra::SliceOptions o;
  o.node_name = "hgx-1";
  o.version = dra::K8sVersion::k1_36;
  auto slices = dra::build_resource_slices(d.topology, o);
  ASSERT_TRUE(slices.ok()) << slices.error().describe();
  std::size_t gpus = 0;
  for (const auto& s : *slices) {
    for (const auto& dev : s.devices) {
      if (dev.attributes.at("type").text != "gpu") continue;
      ++gpus;
      EXPECT_EQ(dev.attributes.at("uuid").text.rfind("GPU-3f1e7a52-", 0), 0U) << dev.name;
      EXPECT_EQ(dev.attributes.at("nvlinkDomain").text,
                "6a0f4c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b.32766");
      EXPECT_EQ(dev.capacity.at("memory").value, "81559Mi");
      EXPECT_EQ(dev.attributes.at("productName").text, "NVIDIA H100 80GB HBM3");
    }
  }
  EXPECT_EQ(gpus, 8U);
  const LabelMap labels = compute_labels(d.topology);
  EXPECT_EQ(labels.at("nodetopo.dev/gpu.count"), "8");
  EXPECT_EQ(labels.at("nodetopo.dev/nvlink"), "true");
  EXPECT_EQ(labels.at("nodetopo.dev/nvlink.links"), "18");
  EXPECT_EQ(labels.at("nodetopo.dev/nvlink.domain"), "6a0f4c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b.32766");
  EXPECT_TRUE(validate_labels(labels).empty());
}

TEST(ExportNvmlHost, OtherIdentitiesSameShapeAndLabels) {
  test::FakeHost a;
  a.set_fixture(test::hgx_h100(a));
  const probes::Discovery da = discover(a);
  const std::string shape_a = compute_shape(da.topology).hash;
  const std::string labels_a = render_labels_plain(compute_labels(da.topology));
  test::FakeHost b;
  b.set_fixture(other_identities(test::hgx_h100(b)));
  const probes::Discovery db = discover(b);
  EXPECT_EQ(compute_shape(db.topology).hash, shape_a);
  EXPECT_EQ(render_labels_plain(compute_labels(db.topology)), labels_a);
}

}  // namespace
}  // namespace nodetopo::exporters
