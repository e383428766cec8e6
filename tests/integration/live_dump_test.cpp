// A dump of the machine running the tests (root "/"): it runs, and the result is sane, whatever
// the machine is. The facts checked come from the machine itself, read through SysRoot.
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "discover.hpp"
#include "test_support.hpp"

namespace nodetopo::agent {
namespace {

struct LiveFacts {
  std::size_t packages = 0;
  std::set<std::uint32_t> numa_ids;
  std::set<std::uint32_t> numa_with_cpus;
  std::set<std::string> pci;
  // Functions whose local CPUs are known but that carry no NUMA node.
  std::set<std::string> pci_without_numa;
  std::vector<std::int64_t> pci_numa_values;
};

void collect(const nlohmann::json& node, LiveFacts& facts) {
  const std::string kind = node.at("kind").get<std::string>();
  if (kind == "package") ++facts.packages;
  if (kind == "numa_node") {
    facts.numa_ids.insert(node.at("os_index").get<std::uint32_t>());
    if (node.at("cpu_count").get<std::size_t>() > 0) {
      facts.numa_with_cpus.insert(node.at("os_index").get<std::uint32_t>());
    }
  }
  if (kind == "pci_bridge" || kind == "pci_device") {
    const std::string address = node.at("address").get<std::string>();
    facts.pci.insert(address);
    if (node.contains("numa_node")) {
      facts.pci_numa_values.push_back(node.at("numa_node").get<std::int64_t>());
    } else if (node.contains("local_cpus")) {
      facts.pci_without_numa.insert(address);
    }
  }
  if (kind == "host_bridge" && node.contains("numa_node")) {
    facts.pci_numa_values.push_back(node.at("numa_node").get<std::int64_t>());
  }
  if (node.contains("children")) {
    for (const auto& child : node.at("children"))
      collect(child, facts);
  }
}

std::set<std::string> listed_pci_functions() {
  std::set<std::string> out;
  auto root = probes::SysRoot::open("/");
  if (!root) return out;
  auto names = root->list_dir("sys/bus/pci/devices");
  if (!names) return out;  // a machine (container) without PCI
  out.insert(names->begin(), names->end());
  return out;
}

void expect_sane(const nlohmann::json& doc) {
  LiveFacts facts;
  collect(doc.at("machine"), facts);
  EXPECT_GE(facts.packages, 1U);
  EXPECT_GE(facts.numa_ids.size(), 1U);
  EXPECT_EQ(facts.pci, listed_pci_functions()) << "every function of sys/bus/pci/devices";
  for (std::int64_t v : facts.pci_numa_values) {
    EXPECT_GE(v, 0) << "a NUMA attribute of -1 is never published";
    EXPECT_TRUE(facts.numa_ids.contains(static_cast<std::uint32_t>(v)))
        << "NUMA node " << v << " does not exist";
  }
  if (facts.numa_with_cpus.size() == 1) {
    // With one NUMA node holding CPUs, any function with local CPUs is local to it.
    EXPECT_TRUE(facts.pci_without_numa.empty())
        << "NUMA node not derived for " << *facts.pci_without_numa.begin();
  }
  bool cpu = false;
  for (const auto& probe : doc.at("probes")) {
    EXPECT_NE(probe.at("status"), "failed") << probe.dump();
    if (probe.at("name") == "cpu") {
      cpu = true;
      EXPECT_EQ(probe.at("status"), "ok") << probe.dump();
    }
  }
  EXPECT_TRUE(cpu) << "the CPU probe reports";
}

TEST(LiveDump, BinaryJsonIsSane) {
  const auto r = test::run_command(
      {(test::build_dir() / "topo").string(), "dump", "--format", "json"}, {"HOST_ROOT="});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sane(nlohmann::json::parse(r.out));
}

TEST(LiveDump, BinaryTextRunsAndHostRootSlashIsTheSameMachine) {
  const auto text =
      test::run_command({(test::build_dir() / "topo").string(), "dump"}, {"HOST_ROOT="});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with("Machine")) << text.out;
  EXPECT_NE(text.out.find("Package "), std::string::npos);
  EXPECT_NE(text.out.find("NUMA node "), std::string::npos);

  const auto env = test::run_command(
      {(test::build_dir() / "topo").string(), "dump", "--format", "json"}, {"HOST_ROOT=/"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  expect_sane(nlohmann::json::parse(env.out));
}

TEST(LiveDump, InProcessDiscoveryIsSane) {
  configure_logging(spdlog::level::off, LogFormat::kText);
  auto root = probes::SysRoot::open("/");
  ASSERT_TRUE(root.ok()) << root.error().describe();
  EXPECT_TRUE(root->is_live());
  const probes::Discovery d = ::nodetopo::test::discover(root.value());
  EXPECT_FALSE(d.topology.nodes_of_kind(NodeKind::kPackage).empty());
  EXPECT_FALSE(d.topology.nodes_of_kind(NodeKind::kNumaNode).empty());
  for (NodeIndex i = 0; i < d.topology.size(); ++i) {
    const Node& n = d.topology.node(i);
    if (!n.is_pci()) continue;
    const auto& f = n.as<PciFunctionInfo>();
    EXPECT_FALSE(f.sysfs_path.empty()) << n.id;
    EXPECT_TRUE(f.sysfs_path.starts_with("sys/devices/")) << n.id << ": " << f.sysfs_path;
    EXPECT_EQ(f.pcie_root.rfind("pci", 0), 0U) << n.id;
  }
}

}  // namespace
}  // namespace nodetopo::agent
