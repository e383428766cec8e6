// Runs the allocator cases of tests/fit/cases (transcribed from the upstream allocator test
// table, see its README.md) for every Kubernetes release a case lists: the outcome, the chosen
// devices and the error must match.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/load.hpp>
#include <nodetopo/fit/node_selector.hpp>

#include "test_support.hpp"

namespace nodetopo::fit {
namespace {

struct CaseRun {
  std::filesystem::path file;
  std::string version;
};

std::vector<CaseRun> all_runs() {
  std::vector<CaseRun> out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(test::source_dir() / "tests/fit/cases"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const YAML::Node c = YAML::LoadFile(f.string());
    std::vector<std::string> versions{"1.34", "1.35", "1.36"};
    if (c["versions"]) versions = c["versions"].as<std::vector<std::string>>();
    for (const auto& v : versions)
      out.push_back({f, v});
  }
  return out;
}

std::string describe(const DeviceResult& d, const std::string& claim) {
  std::string s =
      claim + " " + d.request + " " + d.id.to_string() + (d.admin_access ? " admin" : "");
  for (const auto& [k, q] : d.consumed_capacity)
    s += " " + k + "=" + q.to_string();
  return s;
}

class AllocatorCase : public ::testing::TestWithParam<CaseRun> {};

TEST_P(AllocatorCase, MatchesUpstream) {
  const CaseRun& run = GetParam();
  const YAML::Node c = YAML::LoadFile(run.file.string());
  Inputs in;
  for (const auto& obj : c["objects"]) {
    const auto loaded =
        load_documents(YAML::Dump(obj), run.file.string(), DocumentRole::kClaims, in);
    ASSERT_TRUE(loaded.ok()) << loaded.error().describe();
  }
  for (const auto& obj : c["allocated"]) {
    ASSERT_TRUE(
        load_documents(YAML::Dump(obj), run.file.string(), DocumentRole::kAllocated, in).ok());
  }
  ASSERT_TRUE(finish_loading(in).ok());
  // Slices were collected as documents too (role only matters for claims).
  AllocateOptions o;
  o.node = c["node"].as<std::string>();
  // nodeLabels: the Node object is known (its name and these labels); without it node
  // selectors are taken as matching, as `topo fit` does without --node FILE.
  if (c["nodeLabels"]) {
    Node n;
    n.name = o.node;
    for (const auto& kv : c["nodeLabels"])
      n.labels[kv.first.as<std::string>()] = kv.second.as<std::string>();
    o.node_object = n;
  }
  o.features = Features::for_version(static_cast<K8sVersion>(std::stoi(run.version.substr(2))));
  for (const auto& kv : c["features"]) {
    const auto name = kv.first.as<std::string>();
    const bool on = kv.second.as<bool>();
    if (name == "partitionable_devices")
      o.features.partitionable_devices = on;
    else if (name == "consumable_capacity")
      o.features.consumable_capacity = on;
    else if (name == "admin_access")
      o.features.admin_access = on;
    else if (name == "prioritized_list")
      o.features.prioritized_list = on;
    else if (name == "device_taints")
      o.features.device_taints = on;
    else
      FAIL() << "unknown feature " << name;
  }
  const AllocateOutcome out = allocate(in, o);
  const YAML::Node expect = c["expect"];
  const std::string status = expect["status"].as<std::string>();
  const std::string got = out.status == AllocateOutcome::Status::kFits            ? "fits"
                          : out.status == AllocateOutcome::Status::kUnschedulable ? "unschedulable"
                                                                                  : "error";
  ASSERT_EQ(got, status) << run.file.filename() << " (" << run.version << "): " << out.error;
  if (status == "error") {
    EXPECT_NE(out.error.find(expect["error"].as<std::string>()), std::string::npos) << out.error;
  }
  if (status == "fits") {
    std::vector<std::string> results;
    for (const ClaimResult& cr : out.claims)
      for (const DeviceResult& d : cr.devices)
        results.push_back(describe(d, cr.claim));
    EXPECT_EQ(results, expect["results"].as<std::vector<std::string>>());
    // nodeSelector / config: per claim, in claim order, when the case states them.
    if (expect["nodeSelector"]) {
      std::vector<std::string> selectors;
      for (const ClaimResult& cr : out.claims)
        selectors.push_back(cr.node_selector ? describe(*cr.node_selector) : "none");
      EXPECT_EQ(selectors, expect["nodeSelector"].as<std::vector<std::string>>());
    }
    if (expect["config"]) {
      std::vector<std::string> configs;
      for (const ClaimResult& cr : out.claims)
        for (const AllocationConfig& k : cr.config) {
          std::string requests;
          for (const std::string& r : k.requests)
            requests += (requests.empty() ? "" : ",") + r;
          configs.push_back(cr.claim + " " + k.source + " [" + requests + "] " +
                            k.configuration.dump());
        }
      EXPECT_EQ(configs, expect["config"].as<std::vector<std::string>>());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Upstream, AllocatorCase, ::testing::ValuesIn(all_runs()),
                         [](const ::testing::TestParamInfo<CaseRun>& p) {
                           std::string n = p.param.file.stem().string() + "_" + p.param.version;
                           for (char& ch : n)
                             if (std::isalnum(static_cast<unsigned char>(ch)) == 0) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace nodetopo::fit
