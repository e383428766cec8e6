// `topo fit` end to end: the worked examples of docs/fit.md on the mock hosts (exit code and
// the lines a reader relies on), slices read from a file equal to slices rendered from the
// host, JSON output, and bad input (exit 2 with the file and the field named).
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace nodetopo::fit {
namespace {

namespace fs = std::filesystem;

std::string example(const std::string& name) {
  return (test::source_dir() / "tests/fit/examples" / name).string();
}

test::CommandResult topo_fit(std::vector<std::string> args) {
  args.insert(args.begin(), {(test::build_dir() / "topo").string(), "fit"});
  return test::run_command(args, {"NODE_NAME="});
}

// A mock host built once per test process (`topo mock build`, the slow part); `--root` on it
// wires the mock NVML fixture as `--mock` does.
std::string mock_host(const std::string& profile) {
  static std::map<std::string, std::unique_ptr<test::TempDir>> built;
  auto& dir = built[profile];
  if (!dir) {
    dir = std::make_unique<test::TempDir>();
    const auto r = test::run_command({(test::build_dir() / "topo").string(), "mock", "build",
                                      profile, (dir->path() / "host").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return (dir->path() / "host").string();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(FitCli, GpuAndNicOnOneSwitchFitOnDgxH100) {
  auto r = topo_fit({example("gpu-nic-same-switch.yaml"), "--class", example("classes.yaml"),
                     "--mock", "dgx-h100"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "gpu: nodetopo.dev/mock-dgx-h100/gpu-0000-1b-00-0")) << r.out;
  EXPECT_TRUE(contains(r.out, "nic: nodetopo.dev/mock-dgx-h100/nic-0000-18-00-0")) << r.out;
  EXPECT_TRUE(contains(r.out, "result: fits")) << r.out;
}

TEST(FitCli, GpuAndNicOnOneSwitchDoNotFitOnHgxA100ButOnOneRootDo) {
  auto r = topo_fit({example("gpu-nic-same-switch.yaml"), "--class", example("classes.yaml"),
                     "--root", mock_host("hgx-a100"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "unschedulable");
  const auto& k = j["claims"][0]["constraints"][0];
  EXPECT_EQ(k["attribute"], "nodetopo.dev/pcieSwitch");
  for (const auto& g : k["groups"])
    EXPECT_FALSE(g["enough"].get<bool>()) << g.dump();
  auto root = topo_fit({example("gpu-nic-same-root.yaml"), "--class", example("classes.yaml"),
                        "--root", mock_host("hgx-a100")});
  EXPECT_EQ(root.exit_code, 0) << root.err << root.out;
  EXPECT_TRUE(contains(root.out, "gpu: nodetopo.dev/mock-hgx-a100/gpu-0000-05-00-0")) << root.out;
  EXPECT_TRUE(contains(root.out, "nic: nodetopo.dev/mock-hgx-a100/nic-0000-09-00-0")) << root.out;
}

TEST(FitCli, MoreGpusOnOneNumaNodeThanItHas) {
  auto r = topo_fit({example("five-gpus-one-numa.yaml"), "--class", example("classes.yaml"),
                     "--mock", "dgx-h100"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.out, "one value must hold gpus x5); best group 0: gpus 4")) << r.out;
}

TEST(FitCli, FractionOfAHamiLabGpu) {
  auto r = topo_fit({example("quarter-gpu.yaml"), "--class", example("classes.yaml"), "--root",
                     mock_host("hami-lab"), "--k8s", "1.36"});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "gpu: nodetopo.dev/hami-lab/gpu-0000-01-00-0 cores=25")) << r.out;
  auto full = topo_fit({example("quarter-gpu.yaml"), "--class", example("classes.yaml"), "--root",
                        mock_host("hami-lab"), "--k8s", "1.36", "--allocated",
                        example("allocated-quarters.yaml")});
  EXPECT_EQ(full.exit_code, 1) << full.err << full.out;
  EXPECT_TRUE(contains(full.out, "capacity cores: 25 more would make 105 of 100")) << full.out;
}

TEST(FitCli, SlicesFromAFileGiveTheSameAnswerAsTheHost) {
  test::TempDir dir;
  const std::string slices = (dir.path() / "slices.yaml").string();
  auto exported =
      test::run_command({(test::build_dir() / "topo").string(), "export", "resourceslices",
                         "--root", mock_host("dgx-h100"), "--output", slices},
                        {"NODE_NAME="});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  auto from_file = topo_fit({example("gpu-nic-same-switch.yaml"), "--class",
                             example("classes.yaml"), "--slices", slices});
  auto from_host = topo_fit({example("gpu-nic-same-switch.yaml"), "--class",
                             example("classes.yaml"), "--root", mock_host("dgx-h100")});
  EXPECT_EQ(from_file.out, from_host.out);
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_TRUE(contains(from_file.out, "gpu: nodetopo.dev/mock-dgx-h100/gpu-0000-1b-00-0"))
      << from_file.out;
  EXPECT_TRUE(contains(from_file.out, "node mock-dgx-h100")) << from_file.out;
}

TEST(FitCli, BadInputIsExitTwoNamingTheFile) {
  test::TempDir dir;
  const std::string bad = (dir.path() / "bad.yaml").string();
  test::write_file(
      bad,
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: x}\nspec:\n"
      "  devices:\n    requests:\n    - name: gpu\n      exactly: {deviceClassName: c, count: "
      "zero}\n");
  const std::string slices = (dir.path() / "slices.yaml").string();
  test::write_file(slices,
                   "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                   "spec: {driver: d.example.com, nodeName: n, pool: {name: n, generation: 1, "
                   "resourceSliceCount: 1},"
                   " devices: [{name: dev-0}]}\n");
  auto r = topo_fit({bad, "--slices", slices});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "bad.yaml")) << r.err;
  EXPECT_TRUE(contains(r.err, "count")) << r.err;

  test::write_file(bad, "kind: [unclosed\n");
  r = topo_fit({bad, "--slices", slices});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "bad.yaml")) << r.err;

  r = topo_fit({(dir.path() / "missing.yaml").string(), "--slices", slices});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "missing.yaml")) << r.err;
}

TEST(FitCli, SelectorErrorIsExitTwoWithTheHasRewrite) {
  test::TempDir dir;
  const std::string claim = (dir.path() / "claim.yaml").string();
  test::write_file(claim, R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: c}
spec:
  selectors:
  - cel: {expression: 'device.attributes["d.example.com"].model == "big"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: x}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: c}
)");
  const std::string slices = (dir.path() / "slices.yaml").string();
  test::write_file(slices,
                   "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\n"
                   "spec: {driver: d.example.com, nodeName: n, pool: {name: n, generation: 1, "
                   "resourceSliceCount: 1},"
                   " devices: [{name: dev-0}]}\n");
  auto r = topo_fit({claim, "--slices", slices});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "class c: selector #0 on device d.example.com/n/dev-0")) << r.out;
  EXPECT_TRUE(contains(r.out, R"(has(device.attributes["d.example.com"].model) && ()")) << r.out;
}

// A network-attached device of another driver (a node selector on the region) and a class with
// config (tests/fit/examples/fabric-*.yaml, docs/fit.md): --node FILE evaluates the selector
// against the Node's labels; without it the selector is assumed to match and the explanation
// says so.
TEST(FitCli, NodeObjectDecidesNodeSelectors) {
  const std::string claim = example("fabric-link.yaml");
  const std::string slices = example("fabric-slices.yaml");
  auto assumed = topo_fit({claim, "--slices", slices, "--node", "worker-1"});
  EXPECT_EQ(assumed.exit_code, 0) << assumed.err << assumed.out;
  EXPECT_TRUE(contains(assumed.out, "note: node selectors assumed to match")) << assumed.out;
  EXPECT_TRUE(contains(assumed.out, "fabric-west")) << assumed.out;

  auto west = topo_fit(
      {claim, "--slices", slices, "--node", example("node-west.yaml"), "--format", "json"});
  EXPECT_EQ(west.exit_code, 0) << west.err << west.out;
  const auto j = nlohmann::json::parse(west.out);
  EXPECT_EQ(j["node"], "worker-1");
  EXPECT_TRUE(j["notes"].empty()) << j["notes"].dump();
  const auto& c = j["claims"][0];
  EXPECT_EQ(c["allocation"][0]["device"], "link-0");
  EXPECT_EQ(c["nodeSelector"]["nodeSelectorTerms"][0]["matchExpressions"][0]["key"],
            "topology.kubernetes.io/region");
  EXPECT_EQ(c["config"][0]["source"], "FromClass");
  EXPECT_EQ(c["config"][0]["requests"][0], "link");
  EXPECT_EQ(c["config"][0]["opaque"]["parameters"]["mode"], "shared");

  auto east = topo_fit({claim, "--slices", slices, "--node", example("node-east.yaml")});
  EXPECT_EQ(east.exit_code, 1) << east.err << east.out;
  EXPECT_TRUE(contains(east.out,
                       "slices not available on this node: fabric-west: node selector "
                       "topology.kubernetes.io/region In [west] does not match"))
      << east.out;
  EXPECT_TRUE(contains(east.out, "(1 slice not available on this node, see the note)")) << east.out;

  test::TempDir dir;
  const std::string bad = (dir.path() / "bad-node.yaml").string();
  test::write_file(bad, "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n");
  auto refused = topo_fit({claim, "--slices", slices, "--node", bad});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(contains(refused.err, "bad-node.yaml")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "expected a Node")) << refused.err;
}

// On the mock hosts every slice is the node's own (nodeName): the allocation's node selector
// pins it to the node.
TEST(FitCli, RenderedSlicesPinTheAllocationToTheNode) {
  auto r = topo_fit({example("gpu-nic-same-switch.yaml"), "--class", example("classes.yaml"),
                     "--root", mock_host("dgx-h100"), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& fields = j["claims"][0]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0];
  EXPECT_EQ(fields["key"], "metadata.name");
  EXPECT_EQ(fields["values"][0], "mock-dgx-h100");
  EXPECT_TRUE(j["claims"][0]["config"].empty());
}

}  // namespace
}  // namespace nodetopo::fit
