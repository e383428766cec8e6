// The command line: `topo mock list|build`, `--mock` on dump (through HostSource), exit codes,
// and the private temporary host being removed after success and after failure.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/base/sha256.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/mock/builder.hpp>

#include "mock_fixture.hpp"
#include "test_support.hpp"

namespace nodetopo::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

std::string topo() {
  return (build_dir() / "topo").string();
}

TEST(MockCli, ListShowsEveryShippedProfileWithADescription) {
  const CommandResult r = run_command({topo(), "mock", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> names;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t space = line.find(' ');
    ASSERT_NE(space, std::string::npos) << line;
    names.push_back(line.substr(0, space));
    EXPECT_GT(line.find_first_not_of(' ', space), space) << line;  // a description follows
  }
  EXPECT_EQ(names, shipped_profile_names());
}

TEST(MockCli, BuildSucceedsAndRefusesToOverwrite) {
  TempDir dir;
  const std::string out = (dir.path() / "host").string();
  CommandResult r = run_command({topo(), "mock", "build", "hami-lab", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("built hami-lab into"));
  EXPECT_TRUE(fs::exists(dir.path() / "host/sys/bus/pci/devices/0000:01:00.0"));
  r = run_command({topo(), "mock", "build", "cpu-only", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not empty (use --force"));
  r = run_command({topo(), "mock", "build", "cpu-only", out, "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(read_file(dir.path() / "host/nodetopo-mock/manifest.json"),
              HasSubstr("\"profile\": \"cpu-only\""));
  EXPECT_FALSE(fs::exists(dir.path() / "host/nodetopo-mock/nvml.json"));
}

TEST(MockCli, BuildExitCodes) {
  TempDir dir;
  const std::string out = (dir.path() / "x").string();
  // Unknown profile: failure (1), the message lists the shipped ones.
  CommandResult r = run_command({topo(), "mock", "build", "dgx-h900", out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("dgx-h900: unknown profile (shipped: cpu-only"));
  // Malformed file: failure, the message names the file, line and field.
  write_file(dir.path() / "bad.yaml",
             "version: 1\nname: b\ndescription: x\ncpu: {model_name: X, sockets: 1, "
             "cores_per_socket: 2, threads_per_core: 1}\nnuma: [{id: 0, socket: 0, memory: 1 "
             "GiB}]\npci: [{bus: 0x10, numa: 3}]\n");
  r = run_command({topo(), "mock", "build", (dir.path() / "bad.yaml").string(), out});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad.yaml: line 6: pci[0].numa: NUMA node 3 does not exist"));
  EXPECT_FALSE(fs::exists(out));
  // Usage errors (2): missing DIR, unknown option, no subcommand.
  EXPECT_EQ(run_command({topo(), "mock", "build", "hami-lab"}).exit_code, 2);
  EXPECT_EQ(run_command({topo(), "mock", "build", "hami-lab", out, "--frobnicate"}).exit_code, 2);
  EXPECT_EQ(run_command({topo(), "mock"}).exit_code, 2);
}

// Every PCI node of a `topo dump --format json` document, with its parent.
struct PciNode {
  const Json* node = nullptr;
  const Json* parent = nullptr;
};

void collect_pci(const Json& node, const Json* parent, std::map<std::string, PciNode>& out) {
  if (node.contains("address")) out[node["address"]] = {&node, parent};
  if (!node.contains("children")) return;
  for (const Json& child : node["children"])
    collect_pci(child, &node, out);
}

TEST(MockCli, DumpDgxH100ShowsEightGpusEachSharingASwitchWithOneNic) {
  const CommandResult r = run_command({topo(), "dump", "--mock", "dgx-h100", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  std::map<std::string, PciNode> pci;
  collect_pci(doc["machine"], nullptr, pci);
  std::vector<std::string> gpus;
  for (const auto& [address, n] : pci) {
    if ((*n.node)["vendor_id"] == "10de" &&
        (*n.node)["class"].get<std::string>().starts_with("0302")) {
      gpus.push_back(address);
    }
  }
  ASSERT_EQ(gpus.size(), 8U);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const PciNode& gpu = pci.at(gpus[i]);
    EXPECT_EQ((*gpu.node)["device_id"], "2330");
    EXPECT_EQ((*gpu.node)["numa_node"], i < 4 ? 0 : 1) << gpus[i];
    EXPECT_EQ((*gpu.node)["link_current"]["generation"], 5);
    EXPECT_EQ((*gpu.node)["link_current"]["width"], 16);
    // GPU <- downstream port <- upstream port: the switch. Its other downstream ports hold
    // exactly one ConnectX-7 (InfiniBand class 0207).
    const Json& down = *gpu.parent;
    ASSERT_EQ(down["port_type"], "downstream_port") << gpus[i];
    const PciNode& down_node = pci.at(down["address"]);
    const Json& up = *down_node.parent;
    ASSERT_EQ(up["port_type"], "upstream_port") << gpus[i];
    int nics = 0;
    for (const Json& port : up["children"]) {
      if (!port.contains("children")) continue;
      for (const Json& dev : port["children"]) {
        if (dev.value("vendor_id", "") == "15b3" && dev.value("device_id", "") == "1021") {
          ++nics;
          EXPECT_TRUE(dev["class"].get<std::string>().starts_with("0207"));
          EXPECT_EQ(dev["numa_node"], (*gpu.node)["numa_node"]);
        }
      }
    }
    EXPECT_EQ(nics, 1) << gpus[i];
  }
  // The CPU side: 2 packages, 2 NUMA nodes of 1 TiB.
  int packages = 0;
  for (const Json& child : doc["machine"]["children"]) {
    if (child["kind"] != "package") continue;
    ++packages;
    ASSERT_EQ(child["children"][0]["kind"], "numa_node");
    EXPECT_EQ(child["children"][0]["memory_bytes"], 1ULL << 40);
  }
  EXPECT_EQ(packages, 2);
}

class DumpAgrees : public ::testing::TestWithParam<std::string> {};

TEST_P(DumpAgrees, WithTheProfile) {
  const RenderedHost* host = rendered_host(GetParam());
  ASSERT_NE(host, nullptr);
  const CommandResult r = run_command({topo(), "dump", "--mock", GetParam(), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  std::map<std::string, PciNode> pci;
  collect_pci(doc["machine"], nullptr, pci);
  EXPECT_EQ(pci.size(), host->manifest["pci_functions"].get<std::size_t>());
  for (const Json& d : host->manifest["devices"]) {
    ASSERT_TRUE(pci.count(d["pci"])) << d["name"];
    const Json& node = *pci.at(d["pci"]).node;
    EXPECT_EQ(node["vendor_id"], d["vendor"]) << d["name"];
    EXPECT_EQ(node["device_id"], d["device"]) << d["name"];
    if (d["numa"].get<int>() >= 0) {
      EXPECT_EQ(node["numa_node"], d["numa"]) << d["name"];
    }
    if (d.contains("link")) {
      EXPECT_EQ(node["link_current"]["speed_mts"], d["link"]["speed_mts"]) << d["name"];
      EXPECT_EQ(node["link_current"]["width"], d["link"]["width"]) << d["name"];
    }
  }
  // Every probe finds what the profile built. Only vendor facilities the profile lacks are
  // "unavailable": NVML without NVIDIA GPUs, KFD without AMD GPUs.
  bool nvidia = false;
  bool amd = false;
  for (const Json& d : host->manifest["devices"]) {
    if (d["type"] != "gpu") continue;
    nvidia = nvidia || d["vendor"] == "10de";
    amd = amd || d["vendor"] == "1002";
  }
  for (const Json& probe : doc["probes"]) {
    const bool may_be_absent =
        (probe["name"] == "nvml" && !nvidia) || (probe["name"] == "kfd" && !amd);
    EXPECT_EQ(probe["status"], may_be_absent ? "unavailable" : "ok") << probe.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, DumpAgrees, ::testing::ValuesIn(shipped_profile_names()),
                         [](const auto& p) {
                           std::string n = p.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(MockCli, RootOfABuiltMockHostReadsItsNvmlFixtureLikeMock) {
  TempDir dir;
  const std::string host = (dir.path() / "dgx").string();
  const CommandResult built = run_command({topo(), "mock", "build", "dgx-h100", host});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const CommandResult r = run_command({topo(), "dump", "--root", host, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  std::size_t nvlinks = 0;
  for (const Json& link : doc["links"])
    nvlinks += link["kind"] == "nvlink" ? 1 : 0;
  EXPECT_EQ(nvlinks, 32U);  // 8 GPUs x 4 NVSwitches
  for (const Json& probe : doc["probes"]) {
    if (probe["name"] == "nvml") {
      EXPECT_EQ(probe["status"], "ok") << probe.dump();
    }
  }
  EXPECT_EQ(doc["relations"]["cells"]["GPU0"]["GPU7"], "NV18");
}

TEST(MockCli, MockAndRootAreMutuallyExclusive) {
  const CommandResult r = run_command({topo(), "dump", "--mock", "hami-lab", "--root", "/"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("excludes"));
}

TEST(MockCli, TemporaryHostIsRemovedAfterSuccessAndFailure) {
  TempDir tmp;
  const std::vector<std::string> env{"TMPDIR=" + tmp.path().string()};
  CommandResult r = run_command({topo(), "dump", "--mock", "hami-lab"}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Tesla T4"));
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  // Built, then the output cannot be written: failure, and still nothing left.
  r = run_command({topo(), "dump", "--mock", "hami-lab", "-o", "/nonexistent-dir/a/dump.txt"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  // The profile is wrong: failure before anything is built.
  r = run_command({topo(), "dump", "--mock", "synthetic:gpus=999"}, env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("synthetic.gpus"));
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  // The temporary directory is really made under $TMPDIR: a TMPDIR that is a file fails.
  write_file(tmp.path() / "file", "");
  r = run_command({topo(), "dump", "--mock", "hami-lab"},
                  {"TMPDIR=" + (tmp.path() / "file").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot create a temporary directory"));
}

// HostSource in-process: the opened host owns the mock host, hands the mock NVML library and
// its fixture to the probes while it exists, and takes them back when it is destroyed.
TEST(HostSourceMock, SelectsTheMockNvmlLibraryAndFixture) {
  TempDir dir;
  const fs::path fake_library = dir.path() / "libnvidia-ml.so.1";
  write_file(fake_library, "");
  ::setenv("NODETOPO_MOCK_NVML_LIBRARY", fake_library.c_str(), 1);
  ::unsetenv(std::string(mock::kNvmlFixtureEnv).c_str());
  {
    core::HostSource source(core::HostSpec{.root = {}, .mock = "hami-lab"});
    fs::path root_path;
    {
      auto host = source.open();
      ASSERT_TRUE(host.ok()) << host.error().describe();
      EXPECT_TRUE(host->is_mock());
      EXPECT_FALSE(host->root().is_live());
      root_path = host->root().path();
      EXPECT_TRUE(fs::exists(root_path / "sys/bus/pci/devices/0000:01:00.0"));
      EXPECT_EQ(host->probe_options().nvml_library, fake_library.string());
      EXPECT_EQ(fs::path(host->nvml_fixture()), root_path / "nodetopo-mock/nvml.json");
      // Opening writes no environment; the variable is in the options, for main to write.
      EXPECT_EQ(std::getenv(std::string(mock::kNvmlFixtureEnv).c_str()), nullptr);
      ASSERT_EQ(host->probe_options().library_environment.size(), 1U);
      EXPECT_EQ(host->probe_options().library_environment[0].first, mock::kNvmlFixtureEnv);
      core::write_process_environment(*host);
      const char* fixture = std::getenv(std::string(mock::kNvmlFixtureEnv).c_str());
      ASSERT_NE(fixture, nullptr);
      EXPECT_EQ(fs::path(fixture), root_path / "nodetopo-mock/nvml.json");
      ::unsetenv(std::string(mock::kNvmlFixtureEnv).c_str());
      // Moving the host moves the ownership: the directory stays until the last owner goes.
      core::OpenedHost moved = std::move(host.value());
      EXPECT_TRUE(fs::exists(root_path));
    }
    EXPECT_FALSE(fs::exists(root_path));
  }
  {
    // No NVIDIA GPU: no NVML library, no fixture variable; the snapshot leaves the host alone.
    core::HostSource source(core::HostSpec{.root = {}, .mock = "cpu-only"});
    auto host = source.open();
    ASSERT_TRUE(host.ok()) << host.error().describe();
    const fs::path root_path = host->root().path();
    EXPECT_TRUE(host->probe_options().nvml_library.empty());
    EXPECT_EQ(std::getenv(std::string(mock::kNvmlFixtureEnv).c_str()), nullptr);
    // Without the environment written for this root, the cpu probe refuses, naming it.
    auto unprepared = core::take_snapshot(*host);
    ASSERT_TRUE(unprepared.ok());
    EXPECT_EQ(unprepared->discovery.reports.front().status, ProbeStatus::kFailed);
    EXPECT_THAT(unprepared->discovery.reports.front().error, HasSubstr("HWLOC_FSROOT"));
    core::write_process_environment(*host);
    auto first = core::take_snapshot(*host);
    auto second = core::take_snapshot(*host);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(first->digest.size(), 64U);
    EXPECT_EQ(first->digest, second->digest) << "the same host, the same digest";
    EXPECT_TRUE(fs::exists(root_path));
  }
  ::unsetenv("NODETOPO_MOCK_NVML_LIBRARY");
}

TEST(HostSourceMock, MissingLibraryLeavesNvmlEmpty) {
  ::unsetenv("NODETOPO_MOCK_NVML_LIBRARY");
  // The test binary sits in <build>/tests: no mock library next to it.
  ASSERT_TRUE(mock::nvml_library_path().empty())
      << "a mock NVML library is installed at " << mock::nvml_library_path();
  core::HostSource source(core::HostSpec{.root = {}, .mock = "hami-lab"});
  auto host = source.open();
  ASSERT_TRUE(host.ok()) << host.error().describe();
  EXPECT_TRUE(host->probe_options().nvml_library.empty());
  EXPECT_TRUE(host->nvml_fixture().empty());
  EXPECT_TRUE(host->probe_options().library_environment.empty());
  EXPECT_EQ(std::getenv(std::string(mock::kNvmlFixtureEnv).c_str()), nullptr);
}

// A snapshot renders every kind byte-identically to the command that prints it, and different
// hosts have different digests.
TEST(NodeSnapshot, RendersWhatTheCommandsPrint) {
  // mi300x: no NVML, so the in-process snapshot (no mock library next to the test binary) and
  // `topo` see the same facts.
  core::HostSource source(core::HostSpec{.root = {}, .mock = "mi300x"});
  auto host = source.open();
  ASSERT_TRUE(host.ok()) << host.error().describe();
  core::write_process_environment(*host);
  auto snap = core::take_snapshot(*host, {.node_name = "node-a", .with_digest = true});
  ASSERT_TRUE(snap.ok()) << snap.error().describe();
  auto json = core::render(*snap, core::DocumentKind::kDump, "json");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(snap->digest, sha256_hex(*json));
  const auto dump = run_command({topo(), "dump", "--mock", "mi300x", "--format", "json"});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_EQ(dump.out, *json);
  auto slices = core::render(*snap, core::DocumentKind::kResourceSlices, "yaml");
  ASSERT_TRUE(slices.ok()) << slices.error().describe();
  const auto exported =
      run_command({topo(), "export", "resourceslices", "--mock", "mi300x", "--node", "node-a"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(exported.out, *slices);
  EXPECT_FALSE(core::render(*snap, core::DocumentKind::kLabels, "yaml").ok())
      << "a format the kind does not have is refused";

  core::HostSource other(core::HostSpec{.root = {}, .mock = "cpu-only"});
  auto other_host = other.open();
  ASSERT_TRUE(other_host.ok());
  core::write_process_environment(*other_host);
  auto other_snap = core::take_snapshot(*other_host);
  ASSERT_TRUE(other_snap.ok());
  EXPECT_NE(other_snap->digest, snap->digest);
}

}  // namespace
}  // namespace nodetopo::test
