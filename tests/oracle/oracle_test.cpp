// Every real hwloc capture, discovered by nodetopo (in process and through the built `topo`
// binary), compared with what the real tools say about the same tree:
//   NUMA nodes, their CPU sets, memory and distances   == lstopo-no-graphics --of xml
//   PCI functions and each one's parent bridge          == lstopo's XML nesting (--whole-io)
//                                                       == lspci -tv's tree
// plus a golden JSON per capture. Where a tool is known to disagree on a capture, the
// disagreement itself is asserted (the notes of tests/captures/cases.txt), never skipped.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/base/log.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/mock/sysfs_image.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/sys_root.hpp>
#include <nodetopo/topology/relations.hpp>

#include "captures.hpp"
#include "discover.hpp"
#include "oracle_tools.hpp"
#include "test_support.hpp"

namespace nodetopo::oracle {
namespace {

namespace fs = std::filesystem;

// What is known to differ between the tools on a capture, and why.
struct KnownDisagreement {
  // hwloc 2.9 is built without --enable-32bits-pci-domain: it drops functions of domains above
  // ffff ("Ignoring PCI device with non-16bit domain"). Those are compared with lspci only, and
  // the test asserts that lstopo indeed lacks them.
  bool hwloc_drops_32bit_domains = false;
  // The capture's PCI directories hold only `class` and `local_cpus` (no vendor, device or
  // config): lspci exits with an error. The test asserts the failure and compares with lstopo.
  bool lspci_fails = false;
  // hwloc skips a bridge whose bus numbers are invalid (secondary or subordinate bus not above
  // its own bus, or secondary above subordinate: hwloc_pcidisc_find_bridge_buses), such as the
  // C600 chipset's virtual root port 0000:00:11.0 with [bus 00-00]. The kernel enumerates it,
  // lspci shows it, and nodetopo keeps it (a function must not vanish). Compared with lspci
  // only; the tests assert that lstopo lacks exactly these and that their bus numbers are
  // invalid by hwloc's rule.
  std::set<std::string> hwloc_drops_invalid_bridges;
};

// The notes of the machine's line in tests/captures/cases.txt.
KnownDisagreement disagreement_for(const std::string& capture) {
  const test::CaptureCase& c = test::capture_case(capture);
  KnownDisagreement known;
  known.hwloc_drops_32bit_domains = c.has("lstopo-ignores-32bit-domains");
  known.lspci_fails = c.has("lspci-fails");
  for (const std::string& bdf : c.values("lstopo-skips-bridge"))
    known.hwloc_drops_invalid_bridges.insert(bdf);
  return known;
}

bool has_32bit_domain(const std::string& bdf) {
  return bdf.find(':') > 4;
}

// Splits off the functions in domains above ffff.
PciParents take_32bit_domains(PciParents& pci) {
  PciParents wide;
  for (auto it = pci.begin(); it != pci.end();) {
    if (has_32bit_domain(it->first)) {
      wide.insert(*it);
      it = pci.erase(it);
    } else {
      ++it;
    }
  }
  return wide;
}

std::string cpus_text(const std::set<std::uint32_t>& cpus) {
  CpuSet set;
  for (std::uint32_t c : cpus)
    set.insert(c);
  return "{" + set.to_list() + "}";
}

// NUMA facts of nodetopo (model or JSON) against lstopo's. Normal nodes: same CPUs and memory.
// GPU-memory nodes (HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES): hwloc gives them the cpuset of the place
// they attach to, nodetopo's model none of their own (the kernel's cpulist is empty); their
// locality is checked separately against the model's tree.
void expect_numa_equal(const std::map<std::uint32_t, NumaFacts>& ours, const LstopoFacts& hwloc,
                       const std::string& what) {
  std::set<std::uint32_t> our_ids;
  std::set<std::uint32_t> hwloc_ids;
  for (const auto& [id, f] : ours)
    our_ids.insert(id);
  for (const auto& [id, f] : hwloc.numa)
    hwloc_ids.insert(id);
  EXPECT_EQ(our_ids, hwloc_ids) << what << ": NUMA node os indexes differ from lstopo";
  EXPECT_EQ(ours.size(), hwloc.numa.size()) << what;
  for (const auto& [id, theirs] : hwloc.numa) {
    auto it = ours.find(id);
    if (it == ours.end()) continue;
    const NumaFacts& mine = it->second;
    SCOPED_TRACE(what + ": NUMA node " + std::to_string(id));
    EXPECT_EQ(mine.subtype, theirs.subtype);
    EXPECT_EQ(mine.memory_bytes, theirs.memory_bytes);
    if (theirs.subtype.empty()) {
      EXPECT_EQ(cpus_text(mine.cpus), cpus_text(theirs.cpus)) << "CPU set differs from lstopo";
      EXPECT_FALSE(mine.cpus.empty()) << "a DRAM node of these captures has CPUs";
    } else {
      EXPECT_TRUE(mine.cpus.empty()) << "a memory-only node has no CPUs of its own";
    }
  }
}

std::string capture_param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return name;
}

class CaptureOracle : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { configure_logging(spdlog::level::off, LogFormat::kText); }

  void SetUp() override {
    root_ = test::capture_root(GetParam()).string();
    ASSERT_TRUE(fs::is_directory(root_))
        << root_ << " is missing: run through ctest (the captures fixture unpacks it)";
    known_ = disagreement_for(GetParam());
  }

  // In-process discovery, as `topo dump` does it.
  probes::Discovery discover() const {
    auto root = probes::SysRoot::open(root_);
    EXPECT_TRUE(root.ok()) << (root.ok() ? "" : root.error().describe());
    return ::nodetopo::test::discover(root.value());
  }

  // Compares PCI parents with lstopo, minus what hwloc is known to drop (asserted).
  void expect_pci_matches_lstopo(PciParents ours, const LstopoFacts& hwloc,
                                 const std::string& what) const {
    const PciParents wide = take_32bit_domains(ours);
    if (known_.hwloc_drops_32bit_domains) {
      EXPECT_FALSE(wide.empty()) << what << ": the capture was expected to hold 32-bit domains";
      for (const auto& [bdf, parent] : wide) {
        EXPECT_FALSE(hwloc.pci.contains(bdf)) << bdf << ": hwloc 2.9 was expected to ignore it";
      }
      EXPECT_NE(hwloc.stderr_text.find("non-16bit domain"), std::string::npos)
          << "lstopo no longer warns about 32-bit domains: " << hwloc.stderr_text;
    } else {
      EXPECT_TRUE(wide.empty())
          << what << ": functions in 32-bit domains; hwloc 2.9 cannot see "
          << "them: note lstopo-ignores-32bit-domains in tests/captures/cases.txt";
    }
    for (const std::string& bdf : known_.hwloc_drops_invalid_bridges) {
      EXPECT_EQ(ours.erase(bdf), 1U) << what << " lacks " << bdf;
      EXPECT_FALSE(hwloc.pci.contains(bdf)) << bdf << ": hwloc was expected to skip this bridge";
    }
    EXPECT_EQ(ours.size(), hwloc.pci.size()) << what << ": PCI function count differs from lstopo";
    EXPECT_EQ(diff_parents(ours, what, hwloc.pci, "lstopo"), "");
  }

  void expect_pci_matches_lspci(const PciParents& ours, const LspciResult& lspci,
                                const std::string& what) const {
    if (known_.lspci_fails) {
      EXPECT_NE(lspci.exit_code, 0) << "lspci was expected to fail on " << GetParam();
      EXPECT_NE(lspci.stderr_text.find("Cannot open"), std::string::npos) << lspci.stderr_text;
      return;
    }
    ASSERT_EQ(lspci.exit_code, 0) << "lspci failed: " << lspci.stderr_text;
    EXPECT_EQ(ours.size(), lspci.pci.size()) << what << ": PCI function count differs from lspci";
    EXPECT_EQ(diff_parents(ours, what, lspci.pci, "lspci"), "");
  }

  std::string root_;
  KnownDisagreement known_;
};

TEST_P(CaptureOracle, ProbesRunCleanly) {
  const probes::Discovery d = discover();
  std::set<std::string> seen;
  for (const ProbeReport& r : d.reports) {
    seen.insert(r.probe);
    EXPECT_NE(r.status, ProbeStatus::kFailed) << r.probe << ": " << r.error;
    if (r.probe == "cpu" || r.probe == "pci") {
      // Every capture has CPUs and PCI; probes of what a capture lacks may be unavailable.
      EXPECT_NE(r.status, ProbeStatus::kUnavailable) << r.probe << ": " << r.error;
    }
    if (r.probe == "cpu") {
      EXPECT_EQ(r.status, ProbeStatus::kOk) << testing::PrintToString(r.warnings);
    }
    for (const std::string& w : r.warnings) {
      EXPECT_EQ(w.find(root_), std::string::npos)
          << "warnings name files relative to the root, so reports are the same wherever the "
             "capture is unpacked: "
          << w;
    }
  }
  EXPECT_TRUE(seen.contains("cpu"));
  EXPECT_TRUE(seen.contains("pci"));
  EXPECT_FALSE(d.topology.nodes_of_kind(NodeKind::kPackage).empty());
  EXPECT_FALSE(d.topology.nodes_of_kind(NodeKind::kNumaNode).empty());
}

TEST_P(CaptureOracle, NumaNodesMatchLstopo) {
  const probes::Discovery d = discover();
  const LstopoFacts hwloc = run_lstopo(root_);
  ASSERT_FALSE(hwloc.numa.empty());
  expect_numa_equal(model_numa(d.topology), hwloc, "model");

  // Memory-only nodes: hwloc's cpuset is their locality; the model hangs them under the package
  // (or machine) with exactly those CPUs.
  for (NodeIndex i : d.topology.nodes_of_kind(NodeKind::kNumaNode)) {
    const auto& numa = d.topology.node(i).as<NumaInfo>();
    if (numa.subtype.empty()) continue;
    const NumaFacts& theirs = hwloc.numa.at(numa.os_index);
    const auto pkg = d.topology.ancestor_of_kind(i, NodeKind::kPackage);
    ASSERT_TRUE(pkg.has_value()) << "NUMA node " << numa.os_index << " is not below a package";
    std::set<std::uint32_t> pkg_cpus;
    for (std::uint32_t c : d.topology.node(*pkg).as<PackageInfo>().cpus.members())
      pkg_cpus.insert(c);
    EXPECT_EQ(cpus_text(pkg_cpus), cpus_text(theirs.cpus))
        << "NUMA node " << numa.os_index << ": locality differs from lstopo";
    EXPECT_TRUE(numa.device.has_value()) << "GPU memory names its device";
  }
}

TEST_P(CaptureOracle, NumaDistancesMatchLstopo) {
  const probes::Discovery d = discover();
  const LstopoFacts hwloc = run_lstopo(root_);
  std::size_t ours = 0;
  for (const Link& l : d.topology.links())
    ours += l.kind == LinkKind::kNumaDistance ? 1 : 0;
  EXPECT_EQ(ours, hwloc.distances.size());
  for (const auto& [pair, value] : hwloc.distances) {
    EXPECT_EQ(d.topology.numa_distance(pair.first, pair.second), std::optional<std::int64_t>(value))
        << "distance " << pair.first << " -> " << pair.second;
  }
}

TEST_P(CaptureOracle, PciParentsMatchLstopo) {
  const probes::Discovery d = discover();
  expect_pci_matches_lstopo(model_pci_parents(d.topology), run_lstopo(root_), "model");
}

// The PCIe relation class of two functions computed on lstopo's tree instead of the model's:
// bridge roles from nesting (root port under a host bridge, upstream port below a root or
// downstream port, downstream port below an upstream port), a switch's ports counted as one
// bridge. Returns "PIX", "PXB", "PHB", or "" when the two sit on different host bridges.
std::string lstopo_relation(const LstopoFacts& hwloc, const std::string& a, const std::string& b) {
  auto chain = [&](const std::string& bdf) {
    std::vector<std::string> up;
    for (std::string cur = hwloc.pci.at(bdf); cur != kHostBridge; cur = hwloc.pci.at(cur)) {
      up.push_back(cur);
    }
    return up;  // nearest first
  };
  auto role = [&](const std::string& bridge) {
    std::vector<std::string> up = chain(bridge);  // the bridge's own ancestors
    std::string r = "root";
    for (auto it = up.rbegin(); it != up.rend(); ++it) {
      r = r == "upstream" ? "downstream" : "upstream";
    }
    return r;
  };
  auto unit = [&](const std::string& bridge) {
    const std::string parent = hwloc.pci.at(bridge);
    return parent != kHostBridge && role(bridge) == "downstream" ? parent : bridge;
  };
  if (a.substr(0, a.size() - 1) == b.substr(0, b.size() - 1)) return "PIX";  // same device
  const std::vector<std::string> ua = chain(a);
  const std::vector<std::string> ub = chain(b);
  // The root bus of each: the bus of its outermost function.
  const std::string top_a = ua.empty() ? a : ua.back();
  const std::string top_b = ub.empty() ? b : ub.back();
  if (top_a.substr(0, top_a.rfind(':')) != top_b.substr(0, top_b.rfind(':'))) return "";
  const std::set<std::string> above_a(ua.begin(), ua.end());
  std::size_t lca = ub.size();
  for (std::size_t i = 0; i < ub.size(); ++i) {
    if (above_a.contains(ub[i])) {
      lca = i;
      break;
    }
  }
  if (lca == ub.size()) return "PHB";
  std::set<std::string> units;
  for (const std::string& br : ua) {
    units.insert(unit(br));
    if (br == ub[lca]) break;
  }
  for (std::size_t i = 0; i <= lca; ++i)
    units.insert(unit(ub[i]));
  return units.size() <= 1 ? "PIX" : "PXB";
}

// Issue 4: relations on the real captures (the 8-accelerator server with PLX switches among them)
// are consistent with lstopo's PCI tree of the same capture, for every pair of endpoints hwloc
// reports.
TEST_P(CaptureOracle, RelationsAgreeWithLstopoTree) {
  const probes::Discovery d = discover();
  const LstopoFacts hwloc = run_lstopo(root_);
  const RelationIndex relations(d.topology);
  std::vector<std::pair<std::string, NodeIndex>> endpoints;
  for (NodeIndex i : d.topology.nodes_of_kind(NodeKind::kPciDevice)) {
    const std::string bdf = d.topology.node(i).as<PciFunctionInfo>().address.to_string();
    if (hwloc.pci.contains(bdf)) endpoints.emplace_back(bdf, i);
  }
  ASSERT_FALSE(endpoints.empty());
  std::size_t compared = 0;
  std::size_t through_a_switch = 0;  // PIX between different devices: one PCIe switch apart
  for (const auto& [a, ia] : endpoints) {
    for (const auto& [b, ib] : endpoints) {
      if (a == b) continue;
      const std::string expected = lstopo_relation(hwloc, a, b);
      if (expected == "PIX" && a.substr(0, a.size() - 1) != b.substr(0, b.size() - 1)) {
        ++through_a_switch;
      }
      const std::string ours = relations.between(ia, ib).label();
      if (expected.empty()) {
        EXPECT_TRUE(ours == "NODE" || ours == "SYS") << a << " " << b << ": " << ours;
      } else {
        EXPECT_EQ(ours, expected) << a << " " << b;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 0U);
  if (GetParam() == "32intel64-2p8co2t+8ve") {
    // Two PLX switches, each with 4 Vector Engines and a ConnectX-4: 2 x 5 x 4 ordered pairs.
    EXPECT_EQ(through_a_switch, 40U);
  }
}

// Data rate of a link in GB/s the way hwloc computes pci_link_speed: lanes x rate x encoding
// (8b/10b up to 5 GT/s, 128b/130b above) / 8 bits.
double link_gbps(const PcieLink& link) {
  const double rate = link.speed_mts / 1000.0;
  const double encoding = link.speed_mts <= 5000 ? 0.8 : 128.0 / 130.0;
  return rate * encoding * link.width / 8;
}

TEST_P(CaptureOracle, PciIdentityAndLinkMatchLstopo) {
  const probes::Discovery d = discover();
  const LstopoFacts hwloc = run_lstopo(root_);
  std::size_t compared = 0;
  std::size_t links = 0;
  for (NodeIndex i = 0; i < d.topology.size(); ++i) {
    const Node& node = d.topology.node(i);
    if (!node.is_pci()) continue;
    const auto& f = node.as<PciFunctionInfo>();
    auto it = hwloc.pci_identity.find(f.address.to_string());
    if (it == hwloc.pci_identity.end()) continue;  // what hwloc skips is asserted elsewhere
    const PciIdentity& id = it->second;
    SCOPED_TRACE(f.address.to_string());
    ++compared;
    EXPECT_EQ(f.class_code >> 8, id.class_id);
    EXPECT_EQ(f.vendor_id, id.vendor);
    EXPECT_EQ(f.device_id, id.device);
    // hwloc shows ff for a revision it cannot read (no `revision` file, no config); the model
    // leaves it unknown.
    if (f.revision) {
      EXPECT_EQ(*f.revision, id.revision);
    } else {
      EXPECT_EQ(id.revision, 0xffU);
    }
    EXPECT_EQ(node.kind == NodeKind::kPciBridge, id.is_bridge);
    if (!id.is_bridge) {
      EXPECT_EQ(f.subsystem_vendor_id, id.subsystem_vendor);
      EXPECT_EQ(f.subsystem_device_id, id.subsystem_device);
    }
    if (f.link_current.speed_mts != 0 && f.link_current.width != 0) {
      ++links;
      EXPECT_NEAR(link_gbps(f.link_current), id.link_gbps, 0.001)
          << "current link " << f.link_current.to_string();
    }
  }
  EXPECT_EQ(compared, hwloc.pci_identity.size());
  RecordProperty("links_compared", static_cast<int>(links));
}

TEST_P(CaptureOracle, BridgesHwlocSkipsHaveInvalidBusNumbers) {
  // The model's bridges whose bus numbers hwloc rejects are exactly the listed ones.
  const probes::Discovery d = discover();
  std::set<std::string> invalid;
  for (NodeIndex i : d.topology.nodes_of_kind(NodeKind::kPciBridge)) {
    const auto& f = d.topology.node(i).as<PciFunctionInfo>();
    if (!f.secondary_bus || !f.subordinate_bus) continue;  // no config space: nothing to judge
    const unsigned own = f.address.bus;
    if (*f.secondary_bus <= own || *f.subordinate_bus <= own ||
        *f.secondary_bus > *f.subordinate_bus) {
      invalid.insert(f.address.to_string());
    }
  }
  EXPECT_EQ(invalid, known_.hwloc_drops_invalid_bridges);
}

TEST_P(CaptureOracle, PciParentsMatchLspci) {
  const probes::Discovery d = discover();
  expect_pci_matches_lspci(model_pci_parents(d.topology), run_lspci_tree(root_), "model");
}

TEST_P(CaptureOracle, EveryEnumeratedFunctionIsInTheModel) {
  // What sys/bus/pci/devices lists, independent of any tool.
  const probes::Discovery d = discover();
  const PciParents model = model_pci_parents(d.topology);
  std::set<std::string> listed;
  for (const auto& entry : fs::directory_iterator(fs::path(root_) / "sys/bus/pci/devices")) {
    listed.insert(entry.path().filename().string());
  }
  std::set<std::string> ours;
  for (const auto& [bdf, parent] : model)
    ours.insert(bdf);
  EXPECT_EQ(ours, listed);
}

TEST_P(CaptureOracle, TopoBinaryJsonAgreesWithTheTools) {
  const fs::path topo = test::build_dir() / "topo";
  const test::CommandResult r =
      test::run_command({topo.string(), "dump", "--root", root_, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc.at("schema_version"), exporters::kModelSchemaVersion);

  // The binary prints what the library discovers.
  const probes::Discovery d = discover();
  EXPECT_EQ(r.out, exporters::render_json_model(d.topology, d.reports));

  const LstopoFacts hwloc = run_lstopo(root_);
  expect_numa_equal(json_numa(doc), hwloc, "topo dump json");
  expect_pci_matches_lstopo(json_pci_parents(doc), hwloc, "topo dump json");
  expect_pci_matches_lspci(json_pci_parents(doc), run_lspci_tree(root_), "topo dump json");
}

TEST_P(CaptureOracle, GoldenJson) {
  const probes::Discovery d = discover();
  const std::string json = exporters::render_json_model(d.topology, d.reports);
  EXPECT_EQ(json.find(root_), std::string::npos) << "the model names files relative to the root";
  EXPECT_EQ(test::compare_golden("captures/" + GetParam() + ".json", json), "");
}

// ---------------------------------------------------------------------------------------------
// A hand-made Intel VMD tree: the kernel puts the VMD domain's root bus inside the VMD endpoint
// (sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/...). lspci shows that domain as its own
// top-level bus; hwloc 2.9 cannot see 32-bit domains at all.

// Writes one function: its directory under sys/devices, the bus/pci/devices link, and the files
// lspci and nodetopo read, with a 64-byte config header (the mock's tree writer, as every
// hand-made host of the tests).
void write_function(const fs::path& root, const std::string& dir, const std::string& bdf,
                    unsigned vendor, unsigned device, unsigned class_code,
                    std::optional<std::pair<unsigned, unsigned>> bridge_buses = std::nullopt) {
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.attr(dir + "/vendor", mock::hex_id(vendor, 4));
  w.attr(dir + "/device", mock::hex_id(device, 4));
  w.attr(dir + "/class", mock::hex_id(class_code, 6));
  w.attr(dir + "/numa_node", "-1");
  w.attr(dir + "/local_cpulist", "0-1");
  std::string config(64, '\0');
  config[0] = static_cast<char>(vendor & 0xff);
  config[1] = static_cast<char>(vendor >> 8);
  config[2] = static_cast<char>(device & 0xff);
  config[3] = static_cast<char>(device >> 8);
  config[9] = static_cast<char>(class_code & 0xff);
  config[10] = static_cast<char>((class_code >> 8) & 0xff);
  config[11] = static_cast<char>(class_code >> 16);
  if (bridge_buses) {
    config[0x0e] = 1;  // header type: PCI-to-PCI bridge
    config[0x18] = static_cast<char>(std::stoul(bdf.substr(bdf.find(':') + 1, 2), nullptr, 16));
    config[0x19] = static_cast<char>(bridge_buses->first);
    config[0x1a] = static_cast<char>(bridge_buses->second);
  }
  w.file(dir + "/config", config);
  w.link("sys/bus/pci/devices/" + bdf, dir);
  if (auto written = mock::write_image(image, root); !written) {
    ADD_FAILURE() << written.error().describe();
  }
}

TEST(SyntheticVmd, NestedRootBusMatchesLspci) {
  configure_logging(spdlog::level::off, LogFormat::kText);
  test::TempDir tmp;
  const fs::path root = tmp.path();
  fs::create_directories(root / "proc");
  const std::string vmd = "sys/devices/pci0000:00/0000:00:0e.0";
  write_function(root, "sys/devices/pci0000:00/0000:00:00.0", "0000:00:00.0", 0x8086, 0x09a2,
                 0x060000);
  write_function(root, vmd, "0000:00:0e.0", 0x8086, 0x28c0, 0x010400);
  write_function(root, vmd + "/pci10000:00/10000:00:02.0", "10000:00:02.0", 0x8086, 0x347a,
                 0x060400, std::pair{1U, 1U});
  write_function(root, vmd + "/pci10000:00/10000:00:02.0/10000:01:00.0", "10000:01:00.0", 0x144d,
                 0xa824, 0x010802);

  const LspciResult lspci = run_lspci_tree(root.string());
  ASSERT_EQ(lspci.exit_code, 0) << lspci.stderr_text;
  const PciParents expected{
      {"0000:00:00.0", kHostBridge},
      {"0000:00:0e.0", kHostBridge},
      {"10000:00:02.0", kHostBridge},
      {"10000:01:00.0", "10000:00:02.0"},
  };
  ASSERT_EQ(lspci.pci, expected) << "lspci reads this tree differently than assumed";

  auto sys_root = probes::SysRoot::open(root);
  ASSERT_TRUE(sys_root.ok()) << sys_root.error().describe();
  const probes::Discovery d = ::nodetopo::test::discover(sys_root.value());
  EXPECT_EQ(diff_parents(model_pci_parents(d.topology), "model", lspci.pci, "lspci"), "");
  for (const ProbeReport& r : d.reports) {
    if (r.probe == "pci") {
      EXPECT_TRUE(r.warnings.empty()) << testing::PrintToString(r.warnings);
    }
  }

  // The VMD domain's functions sit under their own host bridge; their PCIe root, as Kubernetes
  // defines it (the first component under sys/devices), is the VMD endpoint's.
  const auto nvme = d.topology.find("pci/10000:01:00.0");
  ASSERT_TRUE(nvme.has_value());
  const auto hb = d.topology.ancestor_of_kind(*nvme, NodeKind::kHostBridge);
  ASSERT_TRUE(hb.has_value());
  EXPECT_EQ(d.topology.node(*hb).id, "hostbridge/pci10000:00");
  EXPECT_EQ(d.topology.node(*hb).as<HostBridgeInfo>().domain, 0x10000U);
  EXPECT_EQ(d.topology.node(*nvme).as<PciFunctionInfo>().pcie_root, "pci0000:00");
  EXPECT_EQ(d.topology.node(*nvme).as<PciFunctionInfo>().sysfs_path,
            vmd + "/pci10000:00/10000:00:02.0/10000:01:00.0");
}

INSTANTIATE_TEST_SUITE_P(Hwloc, CaptureOracle, ::testing::ValuesIn(test::capture_names()),
                         capture_param_name);

// Every hwloc capture in shared/ has its line in cases.txt, so that a machine dropped in there
// is tested rather than silently ignored, and every line's tarball exists.
TEST(CaptureCases, ListEveryCaptureAndNameRealTarballs) {
  const std::vector<std::string> names = test::capture_names();
  EXPECT_GE(names.size(), 5U);
  for (const std::string& name : test::hwloc_capture_names()) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end())
        << name << ".tar.bz2 has no line in tests/captures/cases.txt";
  }
  for (const test::CaptureCase& c : test::capture_cases()) {
    EXPECT_TRUE(fs::is_regular_file(test::capture_tarball(c))) << c.name << ": " << c.tarball;
    EXPECT_TRUE(fs::is_directory(test::capture_root(c.name)))
        << c.name << ": " << c.tarball << " does not unpack to a directory " << c.name;
  }
}

}  // namespace
}  // namespace nodetopo::oracle
