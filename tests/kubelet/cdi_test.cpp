// CDI specs built from an allocation: device nodes and environment of real GPUs and NICs, the
// vendor's CDI device reused when its spec exists, HAMi-core's share limits, stable bytes; and
// the strict config reader.
#include <fstream>

#include <gtest/gtest.h>

#include <nodetopo/kubelet/cdi.hpp>
#include <nodetopo/kubelet/checkpoint.hpp>
#include <nodetopo/kubelet/config.hpp>

#include "test_support.hpp"

namespace nodetopo::kubelet {
namespace {

NodeDevice gpu(const std::string& name, int index) {
  NodeDevice d;
  d.name = name;
  d.kind = DeviceKind::kGpu;
  d.vendor = "nvidia";
  d.uuid = "GPU-" + std::to_string(index);
  d.pci_bus_id = "0000:1b:00.0";
  d.vendor_index = index;
  d.device_nodes = {"/dev/nvidia" + std::to_string(index), "/dev/nvidiactl"};
  d.slice_device = {{"name", name},
                    {"capacity", {{"cores", {{"value", "100"}}}, {"memory", {{"value", "16Gi"}}}}}};
  return d;
}

NodeDevice nic() {
  NodeDevice d;
  d.name = "nic-0000-ce-00-0";
  d.kind = DeviceKind::kNic;
  d.netdev = "ibp206s0";
  d.rdma_device = "mlx5_10";
  d.pci_bus_id = "0000:ce:00.0";
  d.device_nodes = {"/dev/infiniband/uverbs10", "/dev/infiniband/rdma_cm"};
  return d;
}

TEST(KubeletCdi, RealDevicesGetNodesAndEnvironment) {
  const auto spec =
      build_claim_spec("nodetopo.dev", "uid-1",
                       {{"g", "n", "gpu-a", "", {}}, {"n", "n", "nic-0000-ce-00-0", "", {}}},
                       {gpu("gpu-a", 0), nic()}, VendorCdiIndex{});
  ASSERT_TRUE(spec.ok()) << spec.error().describe();
  const auto& devs = spec->spec["devices"];
  EXPECT_EQ(devs[0]["name"], "uid-1-gpu-a");
  EXPECT_EQ(devs[0]["containerEdits"]["deviceNodes"][0]["path"], "/dev/nvidia0");
  EXPECT_EQ(devs[1]["containerEdits"]["deviceNodes"][0]["path"], "/dev/infiniband/uverbs10");
  EXPECT_EQ(devs[1]["containerEdits"]["deviceNodes"][1]["path"], "/dev/infiniband/rdma_cm");
  EXPECT_EQ(devs[1]["containerEdits"]["env"][0], "NODETOPO_NIC_0_NETDEV=ibp206s0");
  EXPECT_EQ(spec->devices[1].cdi_ids,
            std::vector<std::string>{"nodetopo.dev/claim=uid-1-nic-0000-ce-00-0"});
  const auto again =
      build_claim_spec("nodetopo.dev", "uid-1",
                       {{"g", "n", "gpu-a", "", {}}, {"n", "n", "nic-0000-ce-00-0", "", {}}},
                       {gpu("gpu-a", 0), nic()}, VendorCdiIndex{});
  EXPECT_EQ(render_spec(spec->spec), render_spec(again->spec));
}

TEST(KubeletCdi, VendorSpecIsReusedByUuidOrIndex) {
  test::TempDir dir;
  std::ofstream(dir.path() / "nvidia.yaml")
      << "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: GPU-0\n  containerEdits: "
         "{}\n- name: \"1\"\n  containerEdits: {}\n";
  std::ofstream(dir.path() / "broken.json") << "{ not json";
  const auto index = VendorCdiIndex::scan({dir.path().string()}, "nodetopo.dev");
  const auto spec = build_claim_spec("nodetopo.dev", "u",
                                     {{"g", "n", "gpu-a", "", {}}, {"g", "n", "gpu-b", "", {}}},
                                     {gpu("gpu-a", 0), gpu("gpu-b", 1)}, index);
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->devices[0].cdi_ids,
            (std::vector<std::string>{"nvidia.com/gpu=GPU-0", "nodetopo.dev/claim=u-gpu-a"}));
  EXPECT_EQ(spec->devices[1].cdi_ids,
            (std::vector<std::string>{"nvidia.com/gpu=1", "nodetopo.dev/claim=u-gpu-b"}));
  EXPECT_FALSE(spec->spec["devices"][0]["containerEdits"].contains("deviceNodes"));
}

TEST(KubeletCdi, ShareCarriesHamiLimits) {
  NodeDevice g = gpu("gpu-a", 0);
  g.mock = true;
  const auto spec = build_claim_spec(
      "nodetopo.dev", "u", {{"g", "n", "gpu-a", "s-1", {{"cores", "25"}}}}, {g}, VendorCdiIndex{});
  ASSERT_TRUE(spec.ok());
  const auto env = spec->spec["devices"][0]["containerEdits"]["env"];
  std::vector<std::string> list = env.get<std::vector<std::string>>();

  EXPECT_NE(std::find(list.begin(), list.end(), "CUDA_DEVICE_MEMORY_LIMIT_0=4096m"), list.end());
  EXPECT_NE(std::find(list.begin(), list.end(), "CUDA_DEVICE_SM_LIMIT=25"), list.end());
  EXPECT_NE(std::find(list.begin(), list.end(), "NODETOPO_GPU_0_SHARE_ID=s-1"), list.end());
  EXPECT_NE(std::find(list.begin(), list.end(), "NODETOPO_GPU_0_UUID=GPU-0"), list.end());
  const auto mem =
      build_claim_spec("nodetopo.dev", "u", {{"g", "n", "gpu-a", "s-2", {{"memory", "2Gi"}}}}, {g},
                       VendorCdiIndex{});
  ASSERT_TRUE(mem.ok());
  list = mem->spec["devices"][0]["containerEdits"]["env"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(list.begin(), list.end(), "CUDA_DEVICE_MEMORY_LIMIT_0=2048m"), list.end());
}

TEST(KubeletCdi, MissingDeviceIsNamed) {
  const auto spec =
      build_claim_spec("nodetopo.dev", "u", {{"g", "n", "gpu-x", "", {}}}, {}, VendorCdiIndex{});
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message.find("gpu-x"), std::string::npos);
}

TEST(KubeletConfig, StrictReaderNamesTheKey) {
  test::TempDir dir;
  const auto file = (dir.path() / "p.yaml").string();
  std::ofstream(file) << "driver: x.example.com\npublishPolicy: {gpu: never}\n";
  auto c = load_plugin_config(file);
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ(c->driver, "x.example.com");
  EXPECT_EQ(c->policy.at(DeviceKind::kGpu), PublishPolicy::kNever);
  std::ofstream(file) << "publishPolicy: {gpu: sometimes}\n";
  c = load_plugin_config(file);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("publishPolicy.gpu"), std::string::npos);
  std::ofstream(file) << "cdiDirr: /x\n";
  c = load_plugin_config(file);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("cdiDirr"), std::string::npos);
}

TEST(KubeletCheckpoint, RoundTripsAndRefusesDamage) {
  test::TempDir dir;
  const std::string file = (dir.path() / "checkpoint.json").string();
  auto empty = load_checkpoint(file);  // absent: nothing prepared yet
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->claims.empty());
  Checkpoint c;
  c.claims["uid-1"] =
      PreparedClaim{"ns",
                    "claim",
                    "/cdi/x.json",
                    {{{"g", "node-a", "gpu-a", "s-1", {{"cores", "30"}}}, {"a=b"}}}};
  ASSERT_TRUE(save_checkpoint(file, c).ok());
  auto back = load_checkpoint(file);
  ASSERT_TRUE(back.ok()) << back.error().describe();
  ASSERT_EQ(back->claims.count("uid-1"), 1U);
  EXPECT_EQ(back->claims["uid-1"].devices[0].allocation.share_id, "s-1");
  EXPECT_EQ(back->claims["uid-1"].devices[0].allocation.consumed.at("cores"), "30");
  std::ofstream(file) << "{\"version\": 1, \"claims\": {\"u\": {}}}";
  auto damaged = load_checkpoint(file);
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().path, file);
}

}  // namespace
}  // namespace nodetopo::kubelet
