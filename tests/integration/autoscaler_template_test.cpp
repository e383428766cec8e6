// `topo export autoscaler-template` and `topo fit --template` end to end on mock hosts: templates
// of one profile built with different seeds (so different UUIDs, serials, MACs) are identical,
// templates of different profiles differ, every format validates with kubernetes-models
// (tests/validate), fit on a template answers as fit on a node of that shape for shape-stable
// claims, and the Cluster API report classifies claims.
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace nodetopo {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kFormats = {"capi", "aws-asg-tags", "resourceslices", "karpenter"};

std::string topo() {
  return (test::build_dir() / "topo").string();
}

test::CommandResult run(std::vector<std::string> args) {
  args.insert(args.begin(), topo());
  return test::run_command(args, {"NODE_NAME="});
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Files written once per process: claims, classes, profiles and built hosts.
test::TempDir& scratch() {
  static test::TempDir dir;
  return dir;
}

// A shipped profile with its seed replaced: the same machine model, other identities.
std::string seeded_profile(const std::string& profile, const std::string& seed) {
  const fs::path file = scratch().path() / (profile + "-" + seed + ".yaml");
  if (!fs::exists(file)) {
    std::string text = test::read_file(test::source_dir() / "mock/profiles" / (profile + ".yaml"));
    const std::string line = "\nseed: " + profile + "\n";
    const auto at = text.find(line);
    EXPECT_NE(at, std::string::npos) << profile << ": no seed line";
    if (at != std::string::npos) text.replace(at, line.size(), "\nseed: " + seed + "\n");
    test::write_file(file, text);
  }
  return file.string();
}

// A host built once per (profile, seed); "" seed: the shipped profile.
std::string host(const std::string& profile, const std::string& seed = "") {
  static std::map<std::string, std::string> built;
  const std::string key = profile + "/" + seed;
  if (auto it = built.find(key); it != built.end()) return it->second;
  const fs::path dir = scratch().path() / "hosts" / (profile + "-" + (seed.empty() ? "x" : seed));
  const std::string source = seed.empty() ? profile : seeded_profile(profile, seed);
  const auto r = run({"mock", "build", source, dir.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return built[key] = dir.string();
}

test::CommandResult export_template(const std::string& root, const std::string& format,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"export", "autoscaler-template", "--root", root, "--format",
                                   format};
  args.insert(args.end(), extra.begin(), extra.end());
  return run(args);
}

const char* const kClasses = R"(apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nodetopo-gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "nodetopo.dev" && device.attributes["nodetopo.dev"].type == "gpu"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nodetopo-nic
spec:
  selectors:
  - cel:
      expression: device.driver == "nodetopo.dev" && device.attributes["nodetopo.dev"].type == "nic"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nodetopo-rdma-nic
spec:
  selectors:
  - cel:
      expression: >-
        device.driver == "nodetopo.dev" && device.attributes["nodetopo.dev"].type == "nic" &&
        "rdmaDevice" in device.attributes["nodetopo.dev"]
)";

std::string claim(const std::string& name, const std::string& requests,
                  const std::string& constraints = "") {
  return "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: " + name +
         "\nspec:\n  devices:\n    requests:\n" + requests +
         (constraints.empty() ? "" : "    constraints:\n" + constraints);
}

std::string gpus(const std::string& name, int count, const std::string& selector = "") {
  std::string r =
      "    - name: " + name + "\n      exactly:\n        deviceClassName: nodetopo-gpu\n" +
      "        allocationMode: ExactCount\n        count: " + std::to_string(count) + "\n";
  if (!selector.empty())
    r += "        selectors:\n        - cel:\n            expression: '" + selector + "'\n";
  return r;
}

// Claims that depend only on shape-stable attributes (and bindings through matchAttribute).
const std::map<std::string, std::string>& shape_claims() {
  static const std::map<std::string, std::string> claims = {
      {"one-gpu", claim("one-gpu", gpus("gpu", 1))},
      {"eight-gpus", claim("eight-gpus", gpus("gpu", 8))},
      {"nine-gpus", claim("nine-gpus", gpus("gpu", 9))},
      {"h100",
       claim("h100",
             gpus("gpu", 2,
                  R"(device.attributes["nodetopo.dev"].productName.startsWith("NVIDIA H100"))"))},
      {"four-gpus-one-numa", claim("four-gpus-one-numa", gpus("gpu", 4),
                                   "    - matchAttribute: resource.kubernetes.io/numaNode\n")},
      {"five-gpus-one-numa", claim("five-gpus-one-numa", gpus("gpu", 5),
                                   "    - matchAttribute: resource.kubernetes.io/numaNode\n")},
      {"two-gpus-one-nvlink", claim("two-gpus-one-nvlink", gpus("gpu", 2),
                                    "    - matchAttribute: nodetopo.dev/nvlinkDomain\n")},
      {"gpu-nic-one-switch",
       claim("gpu-nic-one-switch",
             gpus("gpu", 1) +
                 "    - name: nic\n      exactly:\n        deviceClassName: nodetopo-nic\n",
             "    - requests: [gpu, nic]\n      matchAttribute: nodetopo.dev/pcieSwitch\n")},
      // A presence test on a binding (rdmaDevice) works from zero.
      {"gpu-rdma-nic-one-root",
       claim(
           "gpu-rdma-nic-one-root",
           gpus("gpu", 1) +
               "    - name: nic\n      exactly:\n        deviceClassName: nodetopo-rdma-nic\n",
           "    - requests: [gpu, nic]\n      matchAttribute: resource.kubernetes.io/pcieRoot\n")},
  };
  return claims;
}

std::string write(const std::string& name, const std::string& text) {
  const fs::path file = scratch().path() / "files" / name;
  test::write_file(file, text);
  return file.string();
}

std::string classes_file() {
  return write("classes.yaml", kClasses);
}

TEST(AutoscalerTemplate, OneProfileWithOtherIdentitiesGivesIdenticalTemplates) {
  const std::string a = host("dgx-h100", "node-a");
  const std::string b = host("dgx-h100", "node-b");
  // The two hosts really differ where identities live: GPU UUIDs and NIC MACs.
  const auto slices_a = run({"export", "resourceslices", "--root", a, "--node", "n"});
  const auto slices_b = run({"export", "resourceslices", "--root", b, "--node", "n"});
  ASSERT_EQ(slices_a.exit_code, 0) << slices_a.err;
  ASSERT_TRUE(contains(slices_a.out, "uuid:"));
  EXPECT_NE(slices_a.out, slices_b.out) << "the seeds did not change the GPU UUIDs";
  const auto dump_a = run({"dump", "--root", a, "--format", "json"});
  const auto dump_b = run({"dump", "--root", b, "--format", "json"});
  ASSERT_EQ(dump_a.exit_code, 0) << dump_a.err;
  const auto macs = [](const std::string& json) {
    std::vector<std::string> out;
    for (std::size_t p = json.find("\"mac\""); p != std::string::npos;
         p = json.find("\"mac\"", p + 1))
      out.push_back(json.substr(p, 30));
    return out;
  };
  ASSERT_FALSE(macs(dump_a.out).empty()) << "no MAC in the model";
  EXPECT_NE(macs(dump_a.out), macs(dump_b.out)) << "the seeds did not change the MACs";

  for (const std::string& format : kFormats) {
    const auto ta = export_template(a, format);
    const auto tb = export_template(b, format);
    ASSERT_EQ(ta.exit_code, 0) << format << ": " << ta.err;
    ASSERT_EQ(tb.exit_code, 0) << format << ": " << tb.err;
    EXPECT_EQ(ta.out, tb.out) << format;
    EXPECT_FALSE(contains(ta.out, "uuid:")) << format;
    EXPECT_FALSE(contains(ta.out, "GPU-")) << format;
    // The node-unique attribute is named on stderr, and nothing is left unclassified.
    EXPECT_TRUE(contains(ta.err, "attribute \"uuid\" left out")) << ta.err;
    EXPECT_FALSE(contains(ta.err, "not classified")) << ta.err;
  }
}

TEST(AutoscalerTemplate, DifferentProfilesGiveDifferentTemplatesAndFingerprints) {
  std::map<std::string, std::string> fingerprints;
  for (const std::string& profile :
       std::vector<std::string>{"dgx-h100", "hgx-a100", "mi300x", "gaudi3", "cpu-only"}) {
    const auto r = export_template(host(profile), "karpenter");
    ASSERT_EQ(r.exit_code, 0) << profile << ": " << r.err;
    EXPECT_FALSE(contains(r.err, "not classified")) << profile << ": " << r.err;
    const auto at = r.out.find("fingerprint: ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string fp = r.out.substr(at + 13, 12);
    EXPECT_TRUE(contains(r.out, "nodetopo.dev/template-shape: " + fp)) << profile;
    for (const auto& [other, value] : fingerprints)
      EXPECT_NE(fp, value) << profile << " vs " << other;
    fingerprints[profile] = fp;
  }
  EXPECT_NE(export_template(host("dgx-h100"), "capi").out,
            export_template(host("hgx-a100"), "capi").out);
  EXPECT_NE(export_template(host("dgx-h100"), "resourceslices").out,
            export_template(host("hgx-a100"), "resourceslices").out);
}

TEST(AutoscalerTemplate, EveryFormatValidatesWithKubernetesModels) {
  const fs::path dir = scratch().path() / "validate";
  for (const std::string& profile :
       std::vector<std::string>{"dgx-h100", "hgx-a100", "mi300x", "gaudi3", "hami-lab"}) {
    for (const std::string& format : kFormats) {
      const auto r =
          export_template(host(profile), format, {"--taint", "nvidia.com/gpu=present:NoSchedule"});
      ASSERT_EQ(r.exit_code, 0) << profile << " " << format << ": " << r.err;
      test::write_file(
          dir / (profile + "." + format + (format == "aws-asg-tags" ? ".json" : ".yaml")), r.out);
    }
  }
  // GPUs for sharing: counters and partitions in the template too.
  const auto shared = export_template(host("dgx-h100"), "karpenter",
                                      {"--sharing", "partitionable", "--k8s-version", "1.35"});
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  test::write_file(dir / "dgx-h100.partitionable.karpenter.yaml", shared.out);
  const auto v = test::run_command({NODETOPO_TEST_NODE, NODETOPO_VALIDATE, dir.string()});
  EXPECT_EQ(v.exit_code, 0) << v.out << v.err;
  EXPECT_TRUE(contains(v.out, "21 files: ok")) << v.out;
}

std::string fit_outcome(const test::CommandResult& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return "exit " + std::to_string(r.exit_code) + " (no JSON: " + r.err + ")";
  std::string out = "exit " + std::to_string(r.exit_code) + " " + j.value("status", "?");
  for (const auto& c : j["claims"]) {
    for (const auto& d : c["allocation"])
      out += " " + d["request"].get<std::string>() + "=" + d["device"].get<std::string>();
  }
  return out;
}

TEST(AutoscalerTemplate, FitOnTemplateAnswersAsFitOnTheNode) {
  const std::string classes = classes_file();
  int fits = 0;
  int no_fits = 0;
  for (const std::string& profile : std::vector<std::string>{"dgx-h100", "hgx-a100"}) {
    const std::string root = host(profile, "other-machine");
    std::map<std::string, std::string> templates;
    for (const std::string& format : std::vector<std::string>{"resourceslices", "karpenter"}) {
      const auto t = export_template(host(profile), format);
      ASSERT_EQ(t.exit_code, 0) << t.err;
      templates[format] = write(profile + "." + format + ".yaml", t.out);
    }
    for (const auto& [name, text] : shape_claims()) {
      const std::string file = write(name + ".yaml", text);
      const auto on_node =
          run({"fit", file, "--class", classes, "--root", root, "--format", "json"});
      ASSERT_NE(on_node.exit_code, 2) << name << ": " << on_node.out << on_node.err;
      (on_node.exit_code == 0 ? fits : no_fits)++;
      for (const auto& [format, path] : templates) {
        const auto on_template =
            run({"fit", file, "--class", classes, "--template", path, "--format", "json"});
        EXPECT_EQ(fit_outcome(on_template), fit_outcome(on_node))
            << profile << " " << name << " on the " << format << " template";
      }
    }
  }
  // Both answers occur: the comparison is not between two always-failing commands.
  EXPECT_GE(fits, 4);
  EXPECT_GE(no_fits, 4);
}

TEST(AutoscalerTemplate, CapiReportClassifiesClaims) {
  std::vector<std::string> files;
  for (const auto& [name, text] : shape_claims())
    files.push_back(write(name + ".yaml", text));
  files.push_back(write(
      "pinned-gpu.yaml",
      claim(
          "pinned-gpu",
          gpus(
              "gpu", 1,
              R"(device.attributes["nodetopo.dev"].uuid == "GPU-db88f37d-73a8-4e78-85c9-deb9633791f4")"))));
  // A binding's value is per node: a selector on it cannot work from zero either.
  files.push_back(write("pinned-nic.yaml",
                        claim("pinned-nic",
                              "    - name: nic\n      exactly:\n        deviceClassName: "
                              "nodetopo-nic\n        selectors:\n        - cel:\n            "
                              "expression: 'device.attributes[\"nodetopo.dev\"].ifName == "
                              "\"ibp24s0\"'\n")));
  const std::string report = (scratch().path() / "report.json").string();
  std::vector<std::string> extra = {"--class", classes_file(), "--report", report, "--claims"};
  extra.insert(extra.end(), files.begin(), files.end());
  const auto r = export_template(host("dgx-h100"), "capi", extra);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      contains(r.out, "capacity.cluster-autoscaler.kubernetes.io/dra-driver: nodetopo.dev"));
  EXPECT_TRUE(contains(r.out, "capacity.cluster-autoscaler.kubernetes.io/gpu-count: \"8\""));
  EXPECT_TRUE(contains(r.err, "pinned-gpu: node-unique")) << r.err;
  const auto j = nlohmann::json::parse(test::read_file(report));
  std::map<std::string, std::string> verdict;
  for (const auto& c : j["claims"])
    verdict[c["claim"]] = c["verdict"];
  EXPECT_EQ(verdict["pinned-gpu"], "node-unique");
  EXPECT_EQ(verdict["one-gpu"], "scales-from-zero");
  EXPECT_EQ(verdict["eight-gpus"], "scales-from-zero");
  EXPECT_EQ(verdict["nine-gpus"], "no-fit");
  EXPECT_EQ(verdict["five-gpus-one-numa"], "no-fit");
  // What CAPI's synthetic slice lacks: product names, NUMA, NVLink, NICs.
  EXPECT_EQ(verdict["h100"], "not-in-view");
  EXPECT_EQ(verdict["four-gpus-one-numa"], "not-in-view");
  EXPECT_EQ(verdict["two-gpus-one-nvlink"], "not-in-view");
  EXPECT_EQ(verdict["gpu-nic-one-switch"], "not-in-view");
  EXPECT_EQ(verdict["gpu-rdma-nic-one-root"], "not-in-view");
  EXPECT_EQ(verdict["pinned-nic"], "node-unique");

  // The same claims against the full template (custom providers): only the pinned one and
  // those that fit no node of this shape stay out.
  const auto slices = export_template(host("dgx-h100"), "resourceslices", extra);
  ASSERT_EQ(slices.exit_code, 0) << slices.err;
  const auto k = nlohmann::json::parse(test::read_file(report));
  for (const auto& c : k["claims"]) {
    const bool pinned = c["claim"] == "pinned-gpu" || c["claim"] == "pinned-nic";
    const std::string want = pinned ? "node-unique"
                             : (c["claim"] == "nine-gpus" || c["claim"] == "five-gpus-one-numa")
                                 ? "no-fit"
                                 : "scales-from-zero";
    EXPECT_EQ(c["verdict"], want) << c["claim"];
  }
}

TEST(AutoscalerTemplate, FitOnCapiAndAwsTemplatesSeesWhatTheAutoscalerSees) {
  const std::string classes = classes_file();
  const std::string one = write("one-gpu.yaml", shape_claims().at("one-gpu"));
  const std::string nic = write("gpu-nic-one-switch.yaml", shape_claims().at("gpu-nic-one-switch"));
  const std::string capi = write("dgx.capi.yaml", export_template(host("dgx-h100"), "capi").out);
  const std::string aws =
      write("dgx.aws.json", export_template(host("dgx-h100"), "aws-asg-tags").out);
  auto r = run({"fit", one, "--class", classes, "--template", capi});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "gpu-0")) << r.out;
  r = run({"fit", nic, "--class", classes, "--template", capi});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  r = run({"fit", one, "--class", classes, "--template", aws});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "no ResourceSlices")) << r.err;
}

TEST(AutoscalerTemplate, BadInputIsRefusedNamingTheFile) {
  const std::string one = write("one-gpu.yaml", shape_claims().at("one-gpu"));
  const std::string bad =
      write("bad-template.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n");
  auto r = run({"fit", one, "--template", bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "bad-template.yaml")) << r.err;
  EXPECT_TRUE(contains(r.err, "unexpected kind ConfigMap")) << r.err;
  r = run({"fit", one, "--template", bad, "--mock", "dgx-h100"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = export_template(host("dgx-h100"), "capi", {"--taint", "no-effect"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "no-effect")) << r.err;
  r = export_template(host("dgx-h100"), "capi",
                      {"--claims", (scratch().path() / "missing-claims.yaml").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "missing-claims.yaml")) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = export_template(host("dgx-h100"), "capi", {"--report", "r.json"});
  EXPECT_EQ(r.exit_code, 2);
  r = export_template(host("dgx-h100"), "capi", {"--format", "nope"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace nodetopo
