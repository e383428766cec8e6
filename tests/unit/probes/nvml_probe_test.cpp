// The NVML probe over hand-written hosts, with the mock NVML library loaded by path through the
// probe's own dlopen code (the path a real libnvidia-ml.so.1 takes).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/nvml_probe.hpp>
#include <nodetopo/probes/pci_probe.hpp>

#include "discover.hpp"
#include "nvml/nvml_library.hpp"
#include "nvml_fake_host.hpp"

namespace nodetopo::test {
namespace {

using probes::Discovery;
using probes::ProbeOptions;
using probes::SysRoot;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

probes::ProbeOptions with_mock() {
  ProbeOptions options;
  options.nvml_library = mock_nvml_library().string();
  return options;
}

const ProbeReport& report_of(const Discovery& d, std::string_view probe) {
  for (const ProbeReport& r : d.reports) {
    if (r.probe == probe) return r;
  }
  throw std::runtime_error("no report for " + std::string(probe));
}

// A probe standing in for another engineer's: runs a callback on the builder in a given phase.
class LambdaProbe final : public probes::Probe {
 public:
  using Fn = std::function<void(TopologyBuilder&)>;
  LambdaProbe(probes::ProbePhase phase, Fn fn) : phase_(phase), fn_(std::move(fn)) {}
  [[nodiscard]] std::string_view name() const override { return "stand-in"; }
  [[nodiscard]] probes::ProbePhase phase() const override { return phase_; }
  Result<void> discover(probes::ProbeContext&, TopologyBuilder& builder) override {
    fn_(builder);
    return {};
  }

 private:
  probes::ProbePhase phase_;
  Fn fn_;
};

// PCI probe + NVML probe (+ stand-ins) over a capture-like (non-live) root.
Discovery run(const FakeHost& host, const ProbeOptions& options,
              std::vector<std::unique_ptr<probes::Probe>> extra = {},
              SysRoot::Liveness liveness = SysRoot::Liveness::kCapture) {
  auto root = SysRoot::open(host.root(), liveness);
  if (!root) throw std::runtime_error(root.error().describe());
  std::vector<std::unique_ptr<probes::Probe>> list;
  list.push_back(std::make_unique<probes::PciProbe>());
  list.push_back(std::make_unique<probes::NvmlProbe>());
  for (auto& p : extra)
    list.push_back(std::move(p));
  return ::nodetopo::test::run_probes(root.value(), list, options);
}

const Node& node(const Topology& t, const std::string& id) {
  auto found = t.find(id);
  if (!found) throw std::runtime_error("no node " + id);
  return t.node(*found);
}

// NVLink links as "from -> to" : value.
std::map<std::string, std::int64_t> nvlinks(const Topology& t) {
  std::map<std::string, std::int64_t> out;
  for (const Link& l : t.links()) {
    if (l.kind != LinkKind::kNvLink) continue;
    out[t.node(l.from).id + " -> " + t.node(l.to).id] = l.value;
  }
  return out;
}

// Whether a shared object whose path contains `needle` is loaded in this process.
bool library_loaded(const std::string& needle) {
  struct Search {
    const std::string* needle;
    bool found;
  } search{&needle, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name != nullptr &&
            std::string(info->dlpi_name).find(*s->needle) != std::string::npos) {
          s->found = true;
        }
        return 0;
      },
      &search);
  return search.found;
}

// ---- The HGX H100 shape ----------------------------------------------------------------------

TEST(NvmlProbe, HgxH100GpusLinkToFourNvSwitchesWithTheirLinkCounts) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kOk) << r.error;
  EXPECT_THAT(r.warnings, IsEmpty());
  EXPECT_EQ(report_of(d, "pci").status, ProbeStatus::kOk);

  const Topology& t = d.topology;
  EXPECT_EQ(t.nodes_of_kind(NodeKind::kAccelerator).size(), 8u);
  EXPECT_EQ(t.nodes_of_kind(NodeKind::kNvSwitch).size(), 4u);
  const auto links = nvlinks(t);
  EXPECT_EQ(links.size(), 32u);  // 8 GPUs x 4 switches, no GPU-GPU link
  const std::vector<std::int64_t> per_switch = {5, 4, 4, 5};
  for (const auto& gpu : hgx_gpus()) {
    std::int64_t total = 0;
    for (std::size_t s = 0; s < 4; ++s) {
      const std::string key = "accelerator/" + gpu + " -> nvswitch/" + hgx_switches()[s];
      ASSERT_TRUE(links.contains(key)) << key;
      EXPECT_EQ(links.at(key), per_switch[s]) << key;
      total += links.at(key);
    }
    EXPECT_EQ(total, 18);
  }
  for (const auto& sw : hgx_switches()) {
    const Node& n = node(t, "nvswitch/" + sw);
    EXPECT_EQ(n.kind, NodeKind::kNvSwitch);
    EXPECT_EQ(t.node(n.parent).id, "pci/" + sw);
    EXPECT_EQ(n.as<AcceleratorInfo>().vendor, AcceleratorVendor::kNvidia);
    EXPECT_EQ(n.as<AcceleratorInfo>().product, "NVSwitch (3rd gen)");
  }
}

TEST(NvmlProbe, AcceleratorNodesCarryNvmlIdentityUnderTheirPciFunction) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  const Discovery d = run(host, with_mock());
  // Index 2's fixture bus id is "00000000:52:00.0" in NVML's upper-case 8-digit form.
  const Node& gpu = node(d.topology, "accelerator/0000:52:00.0");
  EXPECT_EQ(gpu.kind, NodeKind::kAccelerator);
  EXPECT_EQ(d.topology.node(gpu.parent).id, "pci/0000:52:00.0");
  const auto& info = gpu.as<AcceleratorInfo>();
  EXPECT_EQ(info.vendor, AcceleratorVendor::kNvidia);
  EXPECT_EQ(info.product, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(info.uuid, "GPU-3f1e7a52-0b4c-5d1e-9a7f-2c8b6e4d1a02");
  EXPECT_EQ(info.serial, "1654922001232");
  EXPECT_EQ(info.memory_bytes, 85520809984ULL);
  EXPECT_EQ(info.driver_version, "550.54.15");
  EXPECT_EQ(info.architecture, "hopper");
  ASSERT_TRUE(info.index.has_value());
  EXPECT_EQ(*info.index, 2u);
  EXPECT_EQ(info.fabric_cluster_uuid, "6a0f4c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b");
  ASSERT_TRUE(info.fabric_clique_id.has_value());
  EXPECT_EQ(*info.fabric_clique_id, 32766u);
}

// ---- Direct GPU-GPU NVLink (A100 with NVLink bridges, no NVSwitch) ----------------------------

TEST(NvmlProbe, DirectGpuPairsGiveOneLinkPerDirectionWithTheBondedCount) {
  FakeHost host;
  const std::vector<std::string> gpus = {"0000:17:00.0", "0000:31:00.0", "0000:b1:00.0",
                                         "0000:ca:00.0"};
  nlohmann::json devices = nlohmann::json::array();
  for (unsigned int i = 0; i < 4; ++i) {
    host.add_pci_function(gpus[i], kNvidia, 0x20b5, k3dController);
    nlohmann::json gpu = fixture_gpu(i, gpus[i]);
    gpu["name"] = "NVIDIA A100 80GB PCIe";
    gpu["architecture"] = 7;
    const std::string peer = gpus[i ^ 1U];  // 0<->1, 2<->3
    for (unsigned int link = 0; link < 12; ++link) {
      // GPU 2 has 4 links down (a missing bridge): NV8 from its side only.
      if (i == 2 && link >= 8) {
        gpu["nvlinks"].push_back({{"link", link}, {"active", false}});
      } else {
        gpu["nvlinks"].push_back(active_link(link, peer, "gpu"));
      }
    }
    devices.push_back(gpu);
  }
  host.set_fixture({{"driver_version", "535.104.05"}, {"devices", devices}});
  const Discovery d = run(host, with_mock());
  EXPECT_EQ(report_of(d, "nvml").status, ProbeStatus::kOk) << report_of(d, "nvml").error;
  const auto links = nvlinks(d.topology);
  EXPECT_EQ(links, (std::map<std::string, std::int64_t>{
                       {"accelerator/0000:17:00.0 -> accelerator/0000:31:00.0", 12},
                       {"accelerator/0000:31:00.0 -> accelerator/0000:17:00.0", 12},
                       {"accelerator/0000:b1:00.0 -> accelerator/0000:ca:00.0", 8},
                       {"accelerator/0000:ca:00.0 -> accelerator/0000:b1:00.0", 12},
                   }));
  EXPECT_THAT(d.topology.nodes_of_kind(NodeKind::kNvSwitch), IsEmpty());
  EXPECT_EQ(node(d.topology, "accelerator/0000:17:00.0").as<AcceleratorInfo>().architecture,
            "ampere");
}

// ---- Fabric
// ---------------------------------------------------------------------------------------

nlohmann::json one_gpu_with_fabric(FakeHost& host, const nlohmann::json& fabric) {
  host.add_gpu("0000:1b:00.0");
  nlohmann::json gpu = fixture_gpu(0, "0000:1b:00.0");
  if (!fabric.is_null()) gpu["fabric"] = fabric;
  return {{"driver_version", "570.86.15"}, {"devices", {gpu}}};
}

const AcceleratorInfo& only_gpu(const Discovery& d) {
  return node(d.topology, "accelerator/0000:1b:00.0").as<AcceleratorInfo>();
}

TEST(NvmlProbe, FabricFallsBackToTheUnversionedCallOnOlderDrivers) {
  const nlohmann::json fabric = {{"cluster_uuid", "00112233-4455-6677-8899-aabbccddeeff"},
                                 {"clique_id", 7}};
  // A driver that knows v2 but not v3, one without the versioned call, one where it says
  // NOT_SUPPORTED or fails: all end up with the unversioned call's answer, without a warning.
  for (const char* fail : {"", "25", "13", "3", "999"}) {
    SCOPED_TRACE(std::string("nvmlDeviceGetGpuFabricInfoV fails with ") + fail);
    FakeHost host;
    nlohmann::json f = one_gpu_with_fabric(host, fabric);
    if (*fail != '\0') f["fail"] = {{"nvmlDeviceGetGpuFabricInfoV", std::stoi(fail)}};
    host.set_fixture(f);
    const Discovery d = run(host, with_mock());
    EXPECT_EQ(report_of(d, "nvml").status, ProbeStatus::kOk);
    EXPECT_EQ(only_gpu(d).fabric_cluster_uuid, "00112233-4455-6677-8899-aabbccddeeff");
    EXPECT_EQ(only_gpu(d).fabric_clique_id, 7u);
  }
}

TEST(NvmlProbe, FabricCallsAllFailingGiveOneWarningWithTheFirstRealError) {
  FakeHost host;
  nlohmann::json f = one_gpu_with_fabric(
      host, {{"cluster_uuid", "00112233-4455-6677-8899-aabbccddeeff"}, {"clique_id", 7}});
  f["devices"][0]["fail"] = {{"nvmlDeviceGetGpuFabricInfoV", 15},
                             {"nvmlDeviceGetGpuFabricInfo", 999}};
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  EXPECT_THAT(report_of(d, "nvml").warnings,
              ElementsAre(AllOf(HasSubstr("NVML device 0000:1b:00.0"),
                                HasSubstr("nvmlDeviceGetGpuFabricInfoV failed"),
                                HasSubstr("GPU is lost"))));
  EXPECT_EQ(only_gpu(d).fabric_cluster_uuid, "");
}

TEST(NvmlProbe, FabricNotCompletedOrAbsentLeavesTheFieldsEmptyWithoutWarning) {
  for (const nlohmann::json& fabric :
       {nlohmann::json(),
        nlohmann::json{{"cluster_uuid", "00112233-4455-6677-8899-aabbccddeeff"},
                       {"clique_id", 7},
                       {"state", 2}},
        nlohmann::json{{"clique_id", 0}}}) {  // completed, but an all-zero cluster UUID
    SCOPED_TRACE(fabric.dump());
    FakeHost host;
    host.set_fixture(one_gpu_with_fabric(host, fabric));
    const Discovery d = run(host, with_mock());
    EXPECT_EQ(report_of(d, "nvml").status, ProbeStatus::kOk);
    EXPECT_EQ(only_gpu(d).fabric_cluster_uuid, "");
    EXPECT_FALSE(only_gpu(d).fabric_clique_id.has_value());
  }
}

TEST(NvmlProbe, FabricRegistrationErrorIsAWarningNamingTheDevice) {
  FakeHost host;
  host.set_fixture(one_gpu_with_fabric(
      host, {{"cluster_uuid", "00112233-4455-6677-8899-aabbccddeeff"}, {"status", 10}}));
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kWarnings);
  EXPECT_THAT(r.warnings, ElementsAre(AllOf(HasSubstr("0000:1b:00.0"), HasSubstr("fabric"),
                                            HasSubstr("Timeout"))));
  EXPECT_EQ(only_gpu(d).fabric_cluster_uuid, "");
}

// ---- Unavailable
// ----------------------------------------------------------------------------------

TEST(NvmlProbe, MissingLibraryIsUnavailableAndTheOtherProbesStillWork) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  ProbeOptions options;
  options.nvml_library = (host.root() / "no-such-dir/libnvidia-ml.so.1").string();
  const Discovery d = run(host, options);
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error,
              AllOf(HasSubstr("no-such-dir/libnvidia-ml.so.1"), HasSubstr("cannot be loaded")));
  EXPECT_EQ(r.error.find('\n'), std::string::npos);  // one line
  EXPECT_EQ(report_of(d, "pci").status, ProbeStatus::kOk);
  EXPECT_NE(d.topology.find("pci/0000:1b:00.0"), std::nullopt);
  EXPECT_THAT(d.topology.nodes_of_kind(NodeKind::kAccelerator), IsEmpty());
  EXPECT_THAT(d.topology.links(), IsEmpty());
}

TEST(NvmlProbe, LibraryWithoutNvmlSymbolsIsUnavailable) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");
  ProbeOptions options;
  options.nvml_library = "libc.so.6";  // loads, but is not NVML
  const ProbeReport r = report_of(run(host, options), "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error, AllOf(HasSubstr("lacks required symbols"), HasSubstr("nvmlInit_v2")));
}

TEST(NvmlProbe, InitFailureIsUnavailableWithNvmlsReason) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  f["fail"] = {{"nvmlInit_v2", 9}};
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error, AllOf(HasSubstr("nvmlInit_v2"), HasSubstr("Driver Not Loaded"),
                             HasSubstr("NVML error 9")));
  EXPECT_THAT(r.warnings, IsEmpty());
  EXPECT_EQ(report_of(d, "pci").status, ProbeStatus::kOk);
}

TEST(NvmlProbe, MockWithoutFixtureBehavesLikeAHostWithoutDriver) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");  // no fixture: the variable is not set at all
  const ProbeReport r = report_of(run(host, with_mock()), "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error, AllOf(HasSubstr("NVML error 12"),
                             HasSubstr("NODETOPO_MOCK_NVML_FIXTURE is not set")));
  EXPECT_THAT(r.error, Not(HasSubstr("/dev/nvidia"))) << "no guess about a driver for the mock";
}

// A fixture that is there but unusable is not "library not found": the probe's message says what
// the mock refused, through nvmlErrorString as for the vendor library's errors.
TEST(NvmlProbe, MockWithMalformedFixtureSaysWhichFieldAndFile) {
  for (const char* text : {"{ not json", R"({"devices":[{"index":0}]})",
                           R"({"devices":[{"index":1,"pci_bus_id":"0000:1b:00.0"}]})"}) {
    SCOPED_TRACE(text);
    FakeHost host;
    host.add_gpu("0000:1b:00.0");
    host.set_fixture_text(text);
    const ProbeReport r = report_of(run(host, with_mock()), "nvml");
    EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
    EXPECT_THAT(r.error, AllOf(HasSubstr("nvmlInit_v2 failed"), HasSubstr("NVML error 999"),
                               HasSubstr("mock NVML fixture " +
                                         (host.root() / "nodetopo-mock/nvml.json").string())));
    EXPECT_THAT(r.error, Not(HasSubstr("Library Not Found")));
  }
}

TEST(NvmlProbe, MockWithUnreadableFixtureSaysWhy) {
  struct Case {
    const char* name;
    std::function<void(const std::filesystem::path&)> make;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"missing", [](const std::filesystem::path&) {}, "cannot open it: No such file or directory"},
      {"directory", [](const std::filesystem::path& p) { std::filesystem::create_directory(p); },
       "a directory, not a regular file"},
      {"fifo", [](const std::filesystem::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); },
       "a FIFO, not a regular file"},
      {"huge",
       [](const std::filesystem::path& p) {
         { std::ofstream(p) << "{}"; }
         std::filesystem::resize_file(p, std::uintmax_t{17} << 20);  // sparse
       },
       "17825792 bytes, larger than 16 MiB"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeHost host;
    host.add_gpu("0000:1b:00.0");
    host.set_fixture_text("{}");
    const std::filesystem::path fixture = host.root() / "nodetopo-mock/nvml.json";
    std::filesystem::remove(fixture);
    c.make(fixture);
    const ProbeReport r = report_of(run(host, with_mock()), "nvml");
    EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
    EXPECT_THAT(r.error, AllOf(HasSubstr("mock NVML fixture " + fixture.string() + ": "),
                               HasSubstr(c.reason), HasSubstr("Driver Not Loaded"),
                               HasSubstr("NVML error 9")));
  }
}

// EACCES on the fixture answers NVML_ERROR_NO_PERMISSION, as the vendor library does for
// /dev/nvidia*. Root reads any file, so as root the probe runs in a child that drops to nobody.
TEST(NvmlProbe, MockWithFixtureWithoutPermissionSaysSo) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");
  host.set_fixture_text("{}");
  const std::filesystem::path fixture = host.root() / "nodetopo-mock/nvml.json";
  std::filesystem::permissions(fixture, std::filesystem::perms::none);
  // Everything but the fixture stays readable for nobody (TempDir makes its directory 0700).
  for (const auto& dir : {host.root(), host.root() / "nodetopo-mock"}) {
    std::filesystem::permissions(
        dir, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                 std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                 std::filesystem::perms::others_exec);
  }
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(3);
    std::string error;
    try {
      error = report_of(run(host, with_mock()), "nvml").error;
    } catch (const std::exception& e) {
      error = std::string("exception: ") + e.what();
    }
    (void)!::write(pipe_fds[1], error.data(), error.size());
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  std::string error;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;)
    error.append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  EXPECT_THAT(error, AllOf(HasSubstr("mock NVML fixture " + fixture.string() +
                                     ": cannot open it: Permission denied"),
                           HasSubstr("Insufficient Permissions"), HasSubstr("NVML error 4")));
}

TEST(NvmlProbe, NoGpuIsUnavailable) {
  FakeHost host;
  host.set_fixture({{"driver_version", "550.54.15"}, {"devices", nlohmann::json::array()}});
  const ProbeReport r = report_of(run(host, with_mock()), "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error, HasSubstr("no GPU"));
}

TEST(NvmlProbe, NonLiveRootWithoutLibraryIsUnavailableWithoutLoadingNvml) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  // (An NVML loaded earlier in this process and never unloaded would make this check vacuous;
  // ctest runs every test in its own process.)
  const bool loaded_before = library_loaded("libnvidia-ml");
  const Discovery d = run(host, ProbeOptions{});
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error, HasSubstr("capture or mock tree"));
  EXPECT_EQ(library_loaded("libnvidia-ml"), loaded_before);
  EXPECT_EQ(report_of(d, "pci").status, ProbeStatus::kOk);
}

TEST(NvmlProbe, LiveRootWithoutLibraryTriesTheSystemNvml) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");
  const Discovery d = run(host, ProbeOptions{}, {}, SysRoot::Liveness::kLive);
  const ProbeReport& r = report_of(d, "nvml");
  // Here the system library decides: absent (CI) -> unavailable naming it; present (a GPU host)
  // -> whatever the driver says, but never the non-live refusal.
  EXPECT_THAT(r.error, ::testing::Not(HasSubstr("capture or mock tree")));
  if (r.status == ProbeStatus::kUnavailable &&
      r.error.find("cannot be loaded") != std::string::npos) {
    EXPECT_THAT(r.error, HasSubstr("'libnvidia-ml.so.1'"));
  }
}

// ---- Per-device failures ------------------------------------------------------------------------

TEST(NvmlProbe, OneDeviceFailingACallWarnsNamingDeviceAndCallAndTheRestCarriesOn) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  f["devices"][3]["fail"] = {{"nvmlDeviceGetUUID", 999},
                             {"nvmlDeviceGetNvLinkRemotePciInfo_v2", 15},
                             {"nvmlDeviceGetSerial", 3}};  // NOT_SUPPORTED: silent
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kWarnings);
  EXPECT_THAT(r.warnings,
              ElementsAre(AllOf(HasSubstr("NVML device 0000:61:00.0 (index 3)"),
                                HasSubstr("nvmlDeviceGetUUID failed"), HasSubstr("Unknown Error")),
                          AllOf(HasSubstr("NVML device 0000:61:00.0 (index 3)"),
                                HasSubstr("nvmlDeviceGetNvLinkRemotePciInfo_v2 failed"),
                                HasSubstr("GPU is lost"), HasSubstr("NVLinks 0-17"))));
  const auto& failed = node(d.topology, "accelerator/0000:61:00.0").as<AcceleratorInfo>();
  EXPECT_EQ(failed.uuid, "");
  EXPECT_EQ(failed.serial, "");
  EXPECT_EQ(failed.product, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(failed.memory_bytes, 85520809984ULL);
  EXPECT_EQ(failed.fabric_clique_id, 32766u);
  const auto links = nvlinks(d.topology);
  EXPECT_EQ(links.size(), 28u);  // the 7 other GPUs keep their 4 switch links
  EXPECT_FALSE(links.contains("accelerator/0000:61:00.0 -> nvswitch/0000:05:00.0"));
  EXPECT_EQ(node(d.topology, "accelerator/0000:1b:00.0").as<AcceleratorInfo>().uuid,
            "GPU-3f1e7a52-0b4c-5d1e-9a7f-2c8b6e4d1a00");
}

TEST(NvmlProbe, DeviceWhosePciInfoFailsIsSkippedWithAWarning) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  f["devices"][0]["fail"] = {{"nvmlDeviceGetPciInfo_v3", 999}};
  f["devices"][1]["fail"] = {{"nvmlDeviceGetHandleByIndex_v2", 15}};
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_THAT(r.warnings,
              ElementsAre(AllOf(HasSubstr("index 0"), HasSubstr("nvmlDeviceGetPciInfo_v3")),
                          AllOf(HasSubstr("index 1"), HasSubstr("nvmlDeviceGetHandleByIndex_v2"))));
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kAccelerator).size(), 6u);
  EXPECT_EQ(nvlinks(d.topology).size(), 24u);
}

TEST(NvmlProbe, RemoteTypeFailureFallsBackToThePciTree) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  f["devices"][5]["fail"] = {{"nvmlDeviceGetNvLinkRemoteDeviceType", 999}};
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_THAT(r.warnings, ElementsAre(AllOf(HasSubstr("0000:c3:00.0"),
                                            HasSubstr("nvmlDeviceGetNvLinkRemoteDeviceType"),
                                            HasSubstr("taken from the PCI tree"))));
  EXPECT_EQ(nvlinks(d.topology).size(), 32u);
  EXPECT_EQ(nvlinks(d.topology).at("accelerator/0000:c3:00.0 -> nvswitch/0000:08:00.0"), 5);
}

TEST(NvmlProbe, RemoteAddressWithoutPciFunctionWarnsAndKeepsTheOtherLinks) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  // Links 13-17 of GPU 0 lead to a switch absent from the PCI tree; GPU 1's link 0 to a GPU that
  // is not there either.
  for (unsigned int link = 13; link < 18; ++link)
    f["devices"][0]["nvlinks"][link]["remote_pci_bus_id"] = "0000:e0:00.0";
  f["devices"][1]["nvlinks"][0] = active_link(0, "0001:00:00.0", "gpu");
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kWarnings);
  EXPECT_THAT(r.warnings,
              ElementsAre(AllOf(HasSubstr("NVML device 0000:1b:00.0"),
                                HasSubstr("remote NVSwitch 0000:e0:00.0 has no PCI function"),
                                HasSubstr("NVLinks 13-17")),
                          AllOf(HasSubstr("NVML device 0000:43:00.0"),
                                HasSubstr("remote GPU 0001:00:00.0 has no PCI function"),
                                HasSubstr("NVLink 0)"))));
  const auto links = nvlinks(d.topology);
  EXPECT_FALSE(links.contains("accelerator/0000:1b:00.0 -> nvswitch/0000:08:00.0"));
  EXPECT_EQ(links.at("accelerator/0000:1b:00.0 -> nvswitch/0000:05:00.0"), 5);
  EXPECT_EQ(links.at("accelerator/0000:43:00.0 -> nvswitch/0000:05:00.0"), 4);
  EXPECT_EQ(d.topology.find("nvswitch/0000:e0:00.0"), std::nullopt);
}

TEST(NvmlProbe, AFarEndIsLookedUpOnceButEveryLinkToItCounts) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  // GPUs 0 and 1 both lose links 13-17 to a switch absent from the PCI tree: the lookup is made
  // once, the warning is each GPU's own. GPU 2 says its link 0 leads to a *GPU* at the first
  // switch's address: refused, while its links 1-4 (type switch) to that address still count.
  for (int gpu : {0, 1}) {
    for (unsigned int link = 13; link < 18; ++link)
      f["devices"][gpu]["nvlinks"][link]["remote_pci_bus_id"] = "0000:e0:00.0";
  }
  f["devices"][2]["nvlinks"][0]["remote_type"] = "gpu";
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  EXPECT_THAT(report_of(d, "nvml").warnings,
              ElementsAre(AllOf(HasSubstr("NVML device 0000:1b:00.0"),
                                HasSubstr("remote NVSwitch 0000:e0:00.0 has no PCI function"),
                                HasSubstr("NVLinks 13-17")),
                          AllOf(HasSubstr("NVML device 0000:43:00.0"),
                                HasSubstr("remote NVSwitch 0000:e0:00.0 has no PCI function"),
                                HasSubstr("NVLinks 13-17")),
                          AllOf(HasSubstr("NVML device 0000:52:00.0"),
                                HasSubstr("remote GPU 0000:05:00.0 is not an NVML device here"),
                                HasSubstr("(NVLink 0)"))));
  const auto links = nvlinks(d.topology);
  EXPECT_EQ(links.at("accelerator/0000:52:00.0 -> nvswitch/0000:05:00.0"), 4);
  EXPECT_EQ(links.at("accelerator/0000:61:00.0 -> nvswitch/0000:05:00.0"), 5);
  EXPECT_FALSE(links.contains("accelerator/0000:1b:00.0 -> nvswitch/0000:08:00.0"));
  EXPECT_FALSE(links.contains("accelerator/0000:43:00.0 -> nvswitch/0000:08:00.0"));
  EXPECT_EQ(links.at("accelerator/0000:52:00.0 -> nvswitch/0000:08:00.0"), 5);
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kNvSwitch).size(), 4u);
}

TEST(NvmlProbe, SwitchAddressOfANonNvidiaFunctionIsRefused) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  host.add_pci_function("0000:00:00.0", 0x8086, 0x09a2, 0x060000);  // a host bridge function
  for (unsigned int link = 0; link < 18; ++link)
    f["devices"][7]["nvlinks"][link]["remote_pci_bus_id"] = "0000:00:00.0";
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  EXPECT_THAT(report_of(d, "nvml").warnings,
              ElementsAre(AllOf(HasSubstr("0000:df:00.0"), HasSubstr("vendor 8086"))));
  EXPECT_EQ(d.topology.find("nvswitch/0000:00:00.0"), std::nullopt);
}

TEST(NvmlProbe, GpuWithoutPciFunctionIsSkippedWithAWarning) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  f["devices"].push_back(fixture_gpu(8, "0000:ee:00.0"));
  host.set_fixture(f);
  const Discovery d = run(host, with_mock());
  EXPECT_THAT(report_of(d, "nvml").warnings,
              ElementsAre(AllOf(HasSubstr("NVML device 0000:ee:00.0 (index 8)"),
                                HasSubstr("no PCI function pci/0000:ee:00.0"))));
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kAccelerator).size(), 8u);
}

// ---- Cooperation with other probes -------------------------------------------------------------

TEST(NvmlProbe, CompletesAcceleratorAndNvSwitchNodesAnotherProbeMade) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  std::vector<std::unique_ptr<probes::Probe>> extra;
  // What a sysfs accelerator probe (phase kDevices) would have made from PCI ids.
  extra.push_back(std::make_unique<LambdaProbe>(probes::ProbePhase::kDevices, [](auto& b) {
    AcceleratorInfo gpu;
    gpu.vendor = AcceleratorVendor::kNvidia;
    gpu.product = "H100 SXM5 80GB";
    gpu.memory_bytes = 1;
    ASSERT_TRUE(b.add(NodeKind::kAccelerator, "accelerator/0000:1b:00.0",
                      *b.find("pci/0000:1b:00.0"), gpu));
    AcceleratorInfo sw;
    sw.vendor = AcceleratorVendor::kNvidia;
    sw.product = "from the sysfs probe";
    ASSERT_TRUE(
        b.add(NodeKind::kNvSwitch, "nvswitch/0000:05:00.0", *b.find("pci/0000:05:00.0"), sw));
  }));
  const Discovery d = run(host, with_mock(), std::move(extra));
  EXPECT_EQ(report_of(d, "nvml").status, ProbeStatus::kOk);
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kAccelerator).size(), 8u);
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kNvSwitch).size(), 4u);
  const auto& gpu = node(d.topology, "accelerator/0000:1b:00.0").as<AcceleratorInfo>();
  EXPECT_EQ(gpu.product, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.memory_bytes, 85520809984ULL);
  EXPECT_EQ(gpu.uuid, "GPU-3f1e7a52-0b4c-5d1e-9a7f-2c8b6e4d1a00");
  EXPECT_EQ(node(d.topology, "nvswitch/0000:05:00.0").as<AcceleratorInfo>().product,
            "from the sysfs probe");
  EXPECT_EQ(nvlinks(d.topology).at("accelerator/0000:1b:00.0 -> nvswitch/0000:05:00.0"), 5);
}

TEST(NvmlProbe, GpuMemoryNumaNodeIsMarkedAsTheGpusAndCpuNodeFillsUnknownLocality) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");
  host.add_gpu("0000:43:00.0");
  nlohmann::json g0 = fixture_gpu(0, "0000:1b:00.0");
  g0["numa_node"] = 4;  // GPU memory node (coherent platform)
  nlohmann::json g1 = fixture_gpu(1, "0000:43:00.0");
  g1["numa_node"] = 0;  // a node with CPUs: locality hint
  host.set_fixture({{"devices", {g0, g1}}});
  std::vector<std::unique_ptr<probes::Probe>> extra;
  extra.push_back(std::make_unique<LambdaProbe>(probes::ProbePhase::kPlatform, [](auto& b) {
    NumaInfo cpu;
    cpu.os_index = 0;
    cpu.cpus.insert_range(0, 7);
    ASSERT_TRUE(b.add(NodeKind::kNumaNode, "numa/0", b.root(), cpu));
    NumaInfo mem;
    mem.os_index = 4;
    mem.subtype = "GPUMemory";
    ASSERT_TRUE(b.add(NodeKind::kNumaNode, "numa/4", b.root(), mem));
  }));
  const Discovery d = run(host, with_mock(), std::move(extra));
  EXPECT_EQ(report_of(d, "nvml").status, ProbeStatus::kOk);
  const auto& mem = node(d.topology, "numa/4").as<NumaInfo>();
  ASSERT_TRUE(mem.device.has_value());
  EXPECT_EQ(mem.device->to_string(), "0000:1b:00.0");
  EXPECT_FALSE(node(d.topology, "numa/0").as<NumaInfo>().device.has_value());
  EXPECT_EQ(node(d.topology, "pci/0000:43:00.0").as<PciFunctionInfo>().numa_node, 0u);
}

// ---- Old drivers: only the required symbols --------------------------------------------------

TEST(NvmlProbe, LibraryWithOnlyTheRequiredSymbolsStillGivesAccelerators) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  ProbeOptions options;
  options.nvml_library = mock_nvml_minimal_library().string();
  const Discovery d = run(host, options);
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kOk) << r.error;
  EXPECT_THAT(r.warnings, IsEmpty());
  const auto& gpu = node(d.topology, "accelerator/0000:9d:00.0").as<AcceleratorInfo>();
  EXPECT_EQ(gpu.index, 4u);
  EXPECT_EQ(gpu.product, "H100 SXM5 80GB");  // the PCI name: NVML could not tell its own
  EXPECT_EQ(gpu.uuid, "");
  EXPECT_THAT(d.topology.links(), IsEmpty());
}

// ---- The whole runner path ---------------------------------------------------------------------

TEST(NvmlProbe, DiscoverRunsItAsTheNvmlProbeOfTheDefaultList) {
  FakeHost host;
  host.set_fixture(hgx_h100(host));
  auto root = SysRoot::open(host.root(), SysRoot::Liveness::kCapture);
  ASSERT_TRUE(root);
  const Discovery d = ::nodetopo::test::discover(root.value(), with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  EXPECT_EQ(r.status, ProbeStatus::kOk) << r.error;
  EXPECT_EQ(report_of(d, "cpu").status, ProbeStatus::kOk) << report_of(d, "cpu").error;
  EXPECT_EQ(report_of(d, "pci").status, ProbeStatus::kOk);
  EXPECT_EQ(nvlinks(d.topology).size(), 32u);
  // GPUs 0-3 report NUMA node 0 (a node with CPUs): it fills their unknown PCI locality.
  EXPECT_EQ(node(d.topology, "pci/0000:1b:00.0").as<PciFunctionInfo>().numa_node, 0u);
  EXPECT_EQ(d.topology.nodes_of_kind(NodeKind::kNvSwitch).size(), 4u);

  // Without a library on this non-live root: unavailable, the same tree otherwise.
  const Discovery plain = ::nodetopo::test::discover(root.value(), ProbeOptions{});
  EXPECT_EQ(report_of(plain, "nvml").status, ProbeStatus::kUnavailable);
  EXPECT_EQ(report_of(plain, "cpu").status, ProbeStatus::kOk);
  EXPECT_EQ(report_of(plain, "pci").status, ProbeStatus::kOk);
  EXPECT_EQ(plain.topology.find("pci/0000:1b:00.0").has_value(), true);
}

TEST(NvmlProbe, RepeatedDiscoveriesInOneProcessReadTheCurrentFixture) {
  FakeHost host;
  nlohmann::json f = hgx_h100(host);
  host.set_fixture(f);
  auto root = SysRoot::open(host.root(), SysRoot::Liveness::kCapture);
  ASSERT_TRUE(root);
  EXPECT_EQ(nvlinks(::nodetopo::test::discover(root.value(), with_mock()).topology).size(), 32u);
  f["devices"][0]["nvlinks"] = nlohmann::json::array();
  host.set_fixture(f);
  EXPECT_EQ(nvlinks(::nodetopo::test::discover(root.value(), with_mock()).topology).size(), 28u);
}

// ---- The mock's fixture parser -----------------------------------------------------------------

// What the mock says on stderr (NODETOPO_MOCK_NVML_DEBUG=1) when it refuses `text`; the probe
// must then see a host without a driver.
std::string refusal(const std::string& text) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");
  host.set_fixture_text(text);
  ::setenv("NODETOPO_MOCK_NVML_DEBUG", "1", 1);
  ::testing::internal::CaptureStderr();
  const ProbeReport r = report_of(run(host, with_mock()), "nvml");
  std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("NODETOPO_MOCK_NVML_DEBUG");
  EXPECT_EQ(r.status, ProbeStatus::kUnavailable);
  EXPECT_THAT(r.error, HasSubstr("NVML error 999"));
  EXPECT_THAT(err, HasSubstr("nodetopo-mock/nvml.json: ")) << "names the file";
  // The probe's message carries the same reason.
  const std::string reason = err.substr(err.find("nvml.json: ") + 11);
  EXPECT_THAT(r.error, HasSubstr(reason.substr(0, reason.find('\n'))));
  return err;
}

TEST(MockNvml, MalformedFixtureMessagesNameTheField) {
  const std::string gpu = R"("index":0,"pci_bus_id":"0000:1b:00.0")";
  const std::string link = R"({"link":0,"active":true,"remote_pci_bus_id":"0000:05:00.0")";
  // Text that is not JSON: the mock's reader says where (line and column, in bytes) and what.
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"{ not json",
       {"not valid JSON: line 1, column 3: expected a member name in double quotes, or '}'"}},
      {R"({"a":01})", {"not valid JSON: line 1, column 7: a number with a leading zero"}},
      {R"({"a":tru})", {"not valid JSON: line 1, column 6: expected true"}},
      {R"({"a":1,})",
       {"not valid JSON: line 1, column 8: expected a member name in double quotes"}},
      {R"({"a":1 "b":2})",
       {"not valid JSON: line 1, column 8: expected ',' or '}' after an object member"}},
      {R"({"a":[1 2]})",
       {"not valid JSON: line 1, column 9: expected ',' or ']' after an array element"}},
      {R"({"a":[1,]})", {"not valid JSON: line 1, column 9: expected a value"}},
      {R"({"a" 1})", {"not valid JSON: line 1, column 6: expected ':' after a member name"}},
      {R"({"a":1} // comment)",
       {"not valid JSON: line 1, column 9: text after the top-level value"}},
      {"", {"not valid JSON: line 1, column 1: the text ends where a value was expected"}},
      {"{\n  \"a\": [", {"not valid JSON: line 2, column 9: the text ends inside an array"}},
      {"[]", {"expected an object, found an array"}},
      {"{} x", {"not valid JSON: line 1, column 4: text after the top-level value"}},
      {R"({"a":-})", {"not valid JSON: line 1, column 7: a number without digits"}},
      {R"({"a":1.})", {"not valid JSON: line 1, column 8: a number without digits after '.'"}},
      {R"({"a":1e+})",
       {"not valid JSON: line 1, column 9: a number without digits in its exponent"}},
      {R"({"a":"\x"})", {"not valid JSON: line 1, column 7: an invalid escape in a string"}},
      {R"({"a":"\u12G4"})",
       {"not valid JSON: line 1, column 7: \\u without 4 hex digits in a string"}},
      {"{\"a\":\"tab\there\"}",
       {"not valid JSON: line 1, column 10: a control character in a string"}},
      // A syntax error anywhere wins over a field's error before it: the file is not JSON.
      {R"({"driver_version":550,"x":nul})", {"not valid JSON: line 1, column 27: expected null"}},
      {"{\n  \"driver_version\": 550\n}", {"driver_version: expected a string, found a number"}},
      {R"({"devices":[{"index":0}]})", {"devices[0]: missing \"pci_bus_id\""}},
      {R"({"devices":[{"index":1,"pci_bus_id":"0000:1b:00.0"}]})",
       {"devices: device indices are not 0..N-1, each once: index 0 missing"}},
      {R"({"devices":[{)" + gpu + R"(},{)" + gpu + R"(}]})",
       {"devices: device indices are not 0..N-1, each once: index 0 twice"}},
      {R"({"devices":[{"index":0,"pci_bus_id":"0000:1b:00"}]})",
       {"devices[0].pci_bus_id: '0000:1b:00' is not domain:bus:device.function"}},
      {R"({"devices":[{"index":0,"pci_bus_id":"0000:1b:20.0"}]})",
       {"devices[0].pci_bus_id: '0000:1b:20.0' is not"}},
      {R"({"devices":[{)" + gpu + R"(,"pci_device_id":"0xZZ"}]})",
       {"devices[0].pci_device_id: '0xZZ' is not a 32-bit hex value"}},
      {R"({"devices":[{)" + gpu + R"(,"memory_total_bytes":-1}]})",
       {"devices[0].memory_total_bytes: expected an integer from 0 to 18446744073709551615, "
        "found -1"}},
      // JSON numbers have no size limit: one beyond 64 bits is out of the field's range.
      {R"({"devices":[{)" + gpu + R"(,"memory_total_bytes":18446744073709551616}]})",
       {"devices[0].memory_total_bytes: expected an integer from 0 to 18446744073709551615, "
        "found 18446744073709551616"}},
      {R"({"cuda_driver_version":-2147483649})",
       {"cuda_driver_version: expected an integer from -2147483648 to 2147483647, "
        "found -2147483649"}},
      {R"({"devices":[{)" + gpu + R"(,"numa_node":1e2}]})",
       {"devices[0].numa_node: expected an integer from 0 to 4294967295, found 1e2"}},
      {R"({"devices":[{)" + gpu + R"(,"architecture":9.5}]})",
       {"devices[0].architecture: expected an integer", "found 9.5"}},
      {R"({"devices":[{)" + gpu + R"(,"numa_node":4294967296}]})",
       {"devices[0].numa_node: expected an integer from 0 to 4294967295, found 4294967296"}},
      {R"({"devices":[{)" + gpu + R"(,"fabric":{"state":256}}]})",
       {"devices[0].fabric.state: expected an integer from 0 to 255, found 256"}},
      {R"({"devices":[{)" + gpu + R"(,"fabric":{"cluster_uuid":"0011"}}]})",
       {"devices[0].fabric.cluster_uuid: not a UUID (32 hex digits)"}},
      {R"({"devices":[{)" + gpu + R"(,"nvlinks":[)" + link + R"(,"remote_type":"nvswitch"}]}]})",
       {"devices[0].nvlinks[0].remote_type: 'nvswitch' is not gpu, switch or ibmnpu"}},
      {R"({"devices":[{)" + gpu + R"(,"nvlinks":[)" + link + R"(}]}]})",
       {"devices[0].nvlinks[0]: missing \"remote_type\""}},
      {R"({"devices":[{)" + gpu + R"(,"nvlinks":[{"link":0,"active":1}]}]})",
       {"devices[0].nvlinks[0].active: expected true or false, found a number"}},
      {R"({"devices":[{)" + gpu + R"(,"nvlinks":[{"active":false}]}]})",
       {"devices[0].nvlinks[0]: missing \"link\""}},
      {R"({"devices":[{)" + gpu +
           R"(,"nvlinks":[{"link":0,"active":false},{"link":0,"active":false}]}]})",
       {"devices[0].nvlinks[1]: link 0 listed twice"}},
      {R"({"devices":[{)" + gpu + R"(,"fail":{"nvmlDeviceGetUUID":"x"}}]})",
       {"devices[0].fail.nvmlDeviceGetUUID: expected an integer, found a string"}},
      {R"({"devices":{}})", {"devices: expected an array, found an object"}},
      {R"({"devices":[{)" + gpu +
           R"(,"nvlinks":[{"link":1,"active":false},{"link":2,)"
           R"("active":false},{"link":1,"active":false}]}]})",
       {"devices[0].nvlinks[2]: link 1 listed twice"}},
      {"{\"driver_version\":\"\xff\"}",
       {"not valid JSON: line 1, column 20: invalid UTF-8 in a string"}},
      // Overlong form of '/', a UTF-16 surrogate in UTF-8, a code point above U+10FFFF, a
      // sequence cut short.
      {"{\"driver_version\":\"\xc0\xaf\"}", {"not valid JSON: line 1, column 20: invalid UTF-8"}},
      {"{\"driver_version\":\"\xed\xa0\x80\"}", {"invalid UTF-8"}},
      {"{\"driver_version\":\"\xf4\x90\x80\x80\"}", {"invalid UTF-8"}},
      {"{\"driver_version\":\"\xe2\x82\"}", {"invalid UTF-8"}},
      {R"({"driver_version":"\ud800"})",
       {"not valid JSON: line 1, column 20: an unpaired UTF-16 surrogate (\\uD800-\\uDBFF)"}},
      {R"({"driver_version":"\ud800\u0041"})", {"an unpaired UTF-16 surrogate"}},
      {R"({"driver_version":"\udc00"})",
       {"not valid JSON: line 1, column 20: an unpaired UTF-16 surrogate (\\uDC00-\\uDFFF)"}},
      {R"({"driver_version":"550)",
       {"not valid JSON: line 1, column 19: a string that is never closed"}},
      {R"({"x":)" + std::string(2000, '[') + std::string(2000, ']') + "}",
       {"not valid JSON: line 1, column 1029: arrays and objects nested deeper than 1024"}},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    const std::string err = refusal(text);
    for (const std::string& part : expected)
      EXPECT_THAT(err, HasSubstr(part));
  }
}

TEST(MockNvml, FixtureParserTakesAnyValidJsonForm) {
  FakeHost host;
  host.add_gpu("0000:1b:00.0");
  host.add_gpu("0000:43:00.0");
  // A byte order mark, white space everywhere, members in any order, unknown members (skipped
  // whatever they hold, a number beyond 64 bits too), null for absent, a repeated member (the
  // first one counts), escapes (in a member name too) and UTF-8, and an inactive link whose other
  // members are never looked at.
  host.set_fixture_text(
      "\xEF\xBB\xBF {\r\n\t\"devices\" : [ {\"nvlinks\": [ {\"remote_type\": \"gpu\", "
      "\"remote_pci_bus_id\": \"0000:43:00.0\", \"active\": true, \"link\": 3}, {\"link\": 4, "
      "\"active\": false, \"remote_pci_bus_id\": 17} ],"
      "\"name\": \"H100 \\\"SXM\\\" \\u00e9\\ud83d\\ude00 \xc3\xa9\\/\", \"uuid\": null, "
      "\"serial\": \"first\", \"serial\": \"second\", \"x-note\": {\"a\": [1, -2.5e+3, true, "
      "null, \"\\n\", 123456789012345678901234567890]}, \"pci_bus_id\": \"00000000:1B:00.0\", "
      "\"\\u0069ndex\": 0, "
      "\"pci_device_id\": 590352606, \"fabric\": null},"
      "{\"index\": 1, \"pci_bus_id\": \"0000:43:00.0\", \"memory_total_bytes\": 2048, "
      "\"memory_total_bytes\": 1024} ], \"driver_version\": \"550.54.15\", \"unknown\": [] } \n");
  const Discovery d = run(host, with_mock());
  const ProbeReport& r = report_of(d, "nvml");
  ASSERT_EQ(r.status, ProbeStatus::kOk) << r.error;
  const auto& g0 = node(d.topology, "accelerator/0000:1b:00.0").as<AcceleratorInfo>();
  EXPECT_EQ(g0.product, "H100 \"SXM\" \u00e9\U0001F600 \u00e9/");
  EXPECT_EQ(g0.uuid, "");
  EXPECT_EQ(g0.serial, "first");
  EXPECT_EQ(g0.driver_version, "550.54.15");
  EXPECT_EQ(node(d.topology, "accelerator/0000:43:00.0").as<AcceleratorInfo>().memory_bytes, 2048u);
  EXPECT_EQ(nvlinks(d.topology), (std::map<std::string, std::int64_t>{
                                     {"accelerator/0000:1b:00.0 -> accelerator/0000:43:00.0", 1}}));
}

// ---- The mock's answers ------------------------------------------------------------------------

TEST(MockNvml, AnswersPerHandleAndLinkAsNvmlDoes) {
  using namespace nvml_abi;
  FakeHost host;
  nlohmann::json g0 = fixture_gpu(0, "0000:1b:00.0");
  g0["nvlinks"] = {active_link(0, "0001:c3:00.0", "gpu"),
                   active_link(1, "0000:05:00.0", "switch"),
                   {{"link", 2}, {"active", false}}};
  nlohmann::json g1 = fixture_gpu(1, "0001:c3:00.0");
  g1["pci_device_id"] = "0x20b510de";
  g1["pci_subsystem_id"] = 0x154010de;
  host.set_fixture({{"devices", {g0, g1}}});

  auto library = probes::NvmlLibrary::open(mock_nvml_library().string());
  ASSERT_TRUE(library) << library.error().describe();
  const probes::NvmlLibrary::Api& api = library->api();
  const probes::NvmlSession session(library.value());
  ASSERT_TRUE(session.ok());

  nvmlDevice_t d0 = nullptr;
  ASSERT_EQ(api.nvmlDeviceGetHandleByIndex_v2(0, &d0), NVML_SUCCESS);
  nvmlPciInfo_t pci{};
  ASSERT_EQ(api.nvmlDeviceGetPciInfo_v3(d0, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:1B:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0000:1B:00.0");
  EXPECT_EQ(pci.pciDeviceId, 0x233010deU);

  // A remote GPU: its address in NVML's form, and its PCI ids.
  ASSERT_EQ(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(d0, 0, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000001:C3:00.0");
  EXPECT_STREQ(pci.busIdLegacy, "0001:C3:00.0");
  EXPECT_EQ(pci.domain, 1U);
  EXPECT_EQ(pci.bus, 0xc3U);
  EXPECT_EQ(pci.device, 0U);
  EXPECT_EQ(pci.pciDeviceId, 0x20b510deU);
  EXPECT_EQ(pci.pciSubSystemId, 0x154010deU);
  // An NVSwitch is no NVML device: no ids.
  ASSERT_EQ(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(d0, 1, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000000:05:00.0");
  EXPECT_EQ(pci.pciDeviceId, 0U);
  EXPECT_EQ(pci.pciSubSystemId, 0U);
  // An inactive link has no far end; a link the GPU lacks is an invalid argument.
  EXPECT_EQ(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(d0, 2, &pci), NVML_ERROR_NOT_FOUND);
  EXPECT_EQ(api.nvmlDeviceGetNvLinkRemotePciInfo_v2(d0, 3, &pci), NVML_ERROR_INVALID_ARGUMENT);
  nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
  ASSERT_EQ(api.nvmlDeviceGetNvLinkRemoteDeviceType(d0, 1, &type), NVML_SUCCESS);
  EXPECT_EQ(type, NVML_NVLINK_DEVICE_TYPE_SWITCH);

  // Handles are checked: anything but a handle the library gave out is refused.
  nvmlDevice_t d1 = nullptr;
  ASSERT_EQ(api.nvmlDeviceGetHandleByIndex_v2(1, &d1), NVML_SUCCESS);
  EXPECT_NE(d1, d0);
  EXPECT_EQ(api.nvmlDeviceGetPciInfo_v3(d1, &pci), NVML_SUCCESS);
  EXPECT_STREQ(pci.busId, "00000001:C3:00.0");
  for (nvmlDevice_t bad :
       {static_cast<nvmlDevice_t>(nullptr),
        reinterpret_cast<nvmlDevice_t>(reinterpret_cast<char*>(d0) + 1),
        reinterpret_cast<nvmlDevice_t>(reinterpret_cast<char*>(d1) +
                                       (reinterpret_cast<char*>(d1) - reinterpret_cast<char*>(d0))),
        reinterpret_cast<nvmlDevice_t>(&pci)}) {
    EXPECT_EQ(api.nvmlDeviceGetPciInfo_v3(bad, &pci), NVML_ERROR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(api.nvmlDeviceGetHandleByIndex_v2(2, &d1), NVML_ERROR_INVALID_ARGUMENT);
}

// ---- The mock's ABI
// ------------------------------------------------------------------------------

// The mock loads like the vendor's C library (issue 18): libc is all it needs. libstdc++.so.6 and
// libgcc_s.so.1 cost every `topo dump` of a mock host 0.9 ms of dlopen, and libgcc_s's constructor
// runs CPUID (a hypervisor trap in a VM); a JSON library would be one more object to map. Only a
// sanitizer build adds its runtimes.
TEST(MockNvml, NeedsOnlyLibc) {
  for (const auto& library : {mock_nvml_library(), mock_nvml_minimal_library()}) {
    SCOPED_TRACE(library.string());
    const CommandResult r = run_command({"readelf", "-d", library.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> needed;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("(NEEDED)") == std::string::npos) continue;
      const std::size_t open = line.find('[');
      needed.push_back(line.substr(open + 1, line.find(']') - open - 1));
    }
    EXPECT_THAT(needed, ::testing::Contains("libc.so.6"));
    for (const std::string& lib : needed) {
      EXPECT_TRUE(lib == "libc.so.6" || lib.starts_with("libasan.so") ||
                  lib.starts_with("libubsan.so"))
          << "the mock needs " << lib;
    }
  }
}

TEST(MockNvml, ExportsExactlyTheSymbolsTheProbeResolves) {
  for (const auto& [library, expected_count] :
       {std::pair{mock_nvml_library(), probes::nvml_symbols().size()},
        std::pair{mock_nvml_minimal_library(), std::size_t{5}}}) {
    SCOPED_TRACE(library.string());
    const CommandResult nm = run_command({"nm", "-D", "--defined-only", library.string()});
    ASSERT_EQ(nm.exit_code, 0) << nm.err;
    std::vector<std::string> exported;
    std::istringstream lines(nm.out);
    for (std::string line; std::getline(lines, line);) {
      const std::string name = line.substr(line.rfind(' ') + 1);
      EXPECT_EQ(line.substr(line.find(' ') + 1, 2), "T ") << line;  // functions only
      exported.push_back(name);
    }
    std::vector<std::string> expected(
        probes::nvml_symbols().begin(),
        probes::nvml_symbols().begin() + static_cast<std::ptrdiff_t>(expected_count));
    std::sort(exported.begin(), exported.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(exported, expected);
  }
  const CommandResult soname = run_command({"readelf", "-d", mock_nvml_library().string()});
  EXPECT_THAT(soname.out, HasSubstr("Library soname: [libnvidia-ml.so.1]"));
  EXPECT_THAT(soname.out, ::testing::Not(HasSubstr("libnodetopo")));
}

}  // namespace
}  // namespace nodetopo::test
