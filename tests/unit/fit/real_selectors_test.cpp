// Selectors of public DRA drivers' DeviceClasses and of nodetopo's own classes (docs/dra.md),
// evaluated on nodetopo's rendered slices and on the drivers' documented example devices.
//
// The expressions are those the drivers publish in their DeviceClass manifests:
// NVIDIA k8s-dra-driver-gpu (gpu.nvidia.com: type "gpu" / "mig"; compute-domain.nvidia.com:
// type "channel"), kubernetes-sigs/dra-example-driver (gpu.example.com), Intel's
// intel-resource-drivers-for-kubernetes (gpu.intel.com).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/load.hpp>
#include <nodetopo/fit/selector.hpp>

#include "test_topologies.hpp"

namespace nodetopo::fit {
namespace {

const char* const kNvidiaGpu =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'";
const char* const kNvidiaMig =
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'";
const char* const kNvidiaChannel =
    "device.driver == 'compute-domain.nvidia.com' && "
    "device.attributes['compute-domain.nvidia.com'].type == 'channel'";
const char* const kExampleGpu = "device.driver == 'gpu.example.com'";
const char* const kIntelGpu = "device.driver == 'gpu.intel.com'";
const char* const kNodetopoGpu =
    R"(device.driver == "nodetopo.dev" && device.attributes["nodetopo.dev"].type == "gpu")";
const char* const kNodetopoRdmaNic =
    R"(device.driver == "nodetopo.dev" && device.attributes["nodetopo.dev"].type == "nic" && "rdmaDevice" in device.attributes["nodetopo.dev"])";

std::vector<ResourceSlice> nodetopo_slices() {
  exporters::dra::SliceOptions o;
  o.node_name = "node-1";
  auto slices = exporters::dra::build_resource_slices(test::make_dgx(), o);
  EXPECT_TRUE(slices.ok());
  std::vector<ResourceSlice> out;
  for (const auto& s : slices.value()) {
    auto parsed = parse_resource_slice(exporters::dra::slice_to_json(s).dump(), "rendered");
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().describe());
    out.push_back(parsed.value());
  }
  return out;
}

int count_matches(const std::vector<ResourceSlice>& slices, const std::string& expr) {
  SelectorEvaluator e(Features::for_version(K8sVersion::k1_36));
  int n = 0;
  for (const ResourceSlice& s : slices)
    for (const Device& d : s.devices) {
      const SelectorOutcome o = e.evaluate(expr, d, s.driver);
      EXPECT_EQ(o.error, "") << expr << " on " << d.name;
      n += o.matches ? 1 : 0;
    }
  return n;
}

TEST(RealSelectors, NodetopoClassesOnNodetopoSlices) {
  const auto slices = nodetopo_slices();
  EXPECT_EQ(count_matches(slices, kNodetopoGpu), 8);
  EXPECT_GE(count_matches(slices, kNodetopoRdmaNic), 8);
}

TEST(RealSelectors, OtherDriversClassesMatchNoneOfNodetopoSlicesWithoutErrors) {
  const auto slices = nodetopo_slices();
  for (const char* expr : {kNvidiaGpu, kNvidiaMig, kNvidiaChannel, kExampleGpu, kIntelGpu})
    EXPECT_EQ(count_matches(slices, expr), 0) << expr;
}

// The example slices documented by the drivers (trimmed to the fields selectors read).
constexpr const char* kDriverSlices = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu.example.com-x}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      driverVersion: {version: 1.0.0}
      index: {int: 0}
      model: {string: LATEST-GPU-MODEL}
      uuid: {string: gpu-18db0e85-99e9-c746-8531-ffeb86328b39}
    capacity:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu.nvidia.com-y}
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      type: {string: gpu}
      architecture: {string: Hopper}
      brand: {string: Nvidia}
      cudaComputeCapability: {version: 9.0.0}
      cudaDriverVersion: {version: 12.4.0}
      driverVersion: {version: 550.54.15}
      productName: {string: NVIDIA H100 80GB HBM3}
      uuid: {string: GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c}
      resource.kubernetes.io/pcieRoot: {string: pci0000:10}
    capacity:
      memory: {value: 80Gi}
  - name: gpu-0-mig-1g10gb-0
    attributes:
      type: {string: mig}
      parentUUID: {string: GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c}
      profile: {string: 1g.10gb}
    capacity:
      memory: {value: 9984Mi}
)";

TEST(RealSelectors, DriversClassesOnTheirDocumentedSlices) {
  Inputs in;
  ASSERT_TRUE(load_documents(kDriverSlices, "driver slices", DocumentRole::kSlices, in).ok());
  EXPECT_EQ(count_matches(in.slices, kExampleGpu), 1);
  EXPECT_EQ(count_matches(in.slices, kNvidiaGpu), 1);
  EXPECT_EQ(count_matches(in.slices, kNvidiaMig), 1);
  EXPECT_EQ(count_matches(in.slices, kNodetopoGpu), 0);
  EXPECT_EQ(
      count_matches(in.slices,
                    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type "
                    "== 'gpu' && "
                    "device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('8."
                    "0.0')) >= 0 && "
                    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"),
      1);
}

TEST(RealSelectors, CrossDriverPcieRootMatch) {
  // An NVIDIA GPU and a nodetopo NIC in one claim, matched on the standard pcieRoot attribute.
  Inputs in;
  ASSERT_TRUE(load_documents(kDriverSlices, "driver slices", DocumentRole::kSlices, in).ok());
  ResourceSlice nic;
  nic.name = "nodetopo";
  nic.driver = "nodetopo.dev";
  nic.pool = "node-1";
  nic.generation = 1;
  nic.node_name = "node-1";
  Device d;
  d.name = "nic-0000-11-00-0";
  d.attributes["type"] = {AttributeValue::Type::kString, 0, false, "nic"};
  d.attributes["rdmaDevice"] = {AttributeValue::Type::kString, 0, false, "mlx5_0"};
  d.attributes["resource.kubernetes.io/pcieRoot"] = {AttributeValue::Type::kString, 0, false,
                                                     "pci0000:10"};
  nic.devices.push_back(d);
  in.slices.push_back(nic);
  in.classes = {{"gpu.nvidia.com", {kNvidiaGpu}, {}},
                {"nodetopo-rdma-nic", {kNodetopoRdmaNic}, {}}};
  ResourceClaim c;
  c.name = "pair";
  DeviceRequest g{"gpu", ExactRequest{"gpu", "gpu.nvidia.com", {}, false, 1, {}, {}, {}}, {}};
  DeviceRequest n{"nic", ExactRequest{"nic", "nodetopo-rdma-nic", {}, false, 1, {}, {}, {}}, {}};
  c.requests = {g, n};
  c.constraints.push_back({{}, "resource.kubernetes.io/pcieRoot", ""});
  in.claims.push_back(c);
  AllocateOptions o;
  o.node = "node-1";
  o.features = Features::for_version(K8sVersion::k1_34);
  const AllocateOutcome out = allocate(in, o);
  ASSERT_EQ(out.status, AllocateOutcome::Status::kFits) << out.error;
  EXPECT_EQ(out.claims[0].devices[0].id.to_string(), "gpu.nvidia.com/node-1/gpu-0");
  EXPECT_EQ(out.claims[0].devices[1].id.to_string(), "nodetopo.dev/node-1/nic-0000-11-00-0");
}

}  // namespace
}  // namespace nodetopo::fit
