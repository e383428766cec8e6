// The command line: `topo mock list|build`, `--mock` on dump (through HostSource), exit codes,
// and the private temporary host being removed after success and after failure.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/agent/host_source.hpp>
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

// HostSource in-process: the mock NVML library and its fixture are handed to the probes while
// the host exists, and taken back when it is released.
TEST(HostSourceMock, SelectsTheMockNvmlLibraryAndFixture) {
  TempDir dir;
  const fs::path fake_library = dir.path() / "libnvidia-ml.so.1";
  write_file(fake_library, "");
  ::setenv("NODETOPO_MOCK_NVML_LIBRARY", fake_library.c_str(), 1);
  ::unsetenv(std::string(mock::kNvmlFixtureEnv).c_str());
  {
    agent::HostSource source;
    CLI::App app;
    source.add_options(app);
    std::vector<std::string> args{"--mock", "hami-lab"};
    std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
    app.parse(args);
    auto root = source.open();
    ASSERT_TRUE(root.ok()) << root.error().describe();
    EXPECT_FALSE(root->is_live());
    const fs::path root_path = root->path();
    EXPECT_TRUE(fs::exists(root_path / "sys/bus/pci/devices/0000:01:00.0"));
    EXPECT_EQ(source.probe_options().nvml_library, fake_library.string());
    const char* fixture = std::getenv(std::string(mock::kNvmlFixtureEnv).c_str());
    ASSERT_NE(fixture, nullptr);
    EXPECT_EQ(fs::path(fixture), root_path / "nodetopo-mock/nvml.json");
    source.release();
    EXPECT_FALSE(fs::exists(root_path));
    EXPECT_EQ(std::getenv(std::string(mock::kNvmlFixtureEnv).c_str()), nullptr);
    EXPECT_TRUE(source.probe_options().nvml_library.empty());
  }
  {
    // No NVIDIA GPU: no NVML library, no fixture variable; discover() removes the host.
    agent::HostSource source;
    CLI::App app;
    source.add_options(app);
    std::vector<std::string> args{"cpu-only", "--mock"};
    app.parse(args);
    auto root = source.open();
    ASSERT_TRUE(root.ok()) << root.error().describe();
    const fs::path root_path = root->path();
    EXPECT_TRUE(source.probe_options().nvml_library.empty());
    EXPECT_EQ(std::getenv(std::string(mock::kNvmlFixtureEnv).c_str()), nullptr);
    auto discovery = source.discover();
    ASSERT_TRUE(discovery.ok());
    EXPECT_FALSE(fs::exists(root_path));
  }
  ::unsetenv("NODETOPO_MOCK_NVML_LIBRARY");
}

TEST(HostSourceMock, MissingLibraryLeavesNvmlEmpty) {
  ::unsetenv("NODETOPO_MOCK_NVML_LIBRARY");
  // The test binary sits in <build>/tests: no mock library next to it.
  ASSERT_TRUE(mock::nvml_library_path().empty())
      << "a mock NVML library is installed at " << mock::nvml_library_path();
  agent::HostSource source;
  CLI::App app;
  source.add_options(app);
  std::vector<std::string> args{"hami-lab", "--mock"};
  app.parse(args);
  auto root = source.open();
  ASSERT_TRUE(root.ok()) << root.error().describe();
  EXPECT_TRUE(source.probe_options().nvml_library.empty());
  EXPECT_EQ(std::getenv(std::string(mock::kNvmlFixtureEnv).c_str()), nullptr);
}

}  // namespace
}  // namespace nodetopo::test
