// Real tools as oracles: lstopo (hwloc's Linux backend) and lspci (libpci's sysfs method) read
// every shipped profile's fake root and must see what the profile says — CPU and NUMA counts,
// memory, the PCI nesting, NUMA locality, link speed and width, decoded port types, and the
// network/RDMA/GPU/disk devices under the right PCI functions.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/mock/profiles.hpp>

#include "mock_fixture.hpp"
#include "test_support.hpp"

namespace nodetopo::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string file_value(const fs::path& root, const std::string& rel) {
  std::string text = read_file(root / rel);
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

// hwloc's link speed in GB/s: per-lane rate after line encoding, times width, over 8 bits.
double hwloc_link_speed(std::uint32_t mts, std::uint32_t width) {
  const double gts = mts / 1000.0;
  const double encoding = mts <= 5000 ? 8.0 / 10.0 : 128.0 / 130.0;
  return gts * encoding * width / 8.0;
}

std::string lspci_speed(std::uint32_t mts) {
  if (mts == 2500) return "2.5";
  return std::to_string(mts / 1000);
}

// Every symlink is relative and resolves inside the root, as in a capture of /sys.
void check_symlinks(const BuiltHost& host) {
  const fs::path root = fs::canonical(host.root);
  std::size_t links = 0;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (!it->is_symlink()) continue;
    ++links;
    const fs::path target = fs::read_symlink(it->path());
    ASSERT_TRUE(target.is_relative()) << it->path() << " -> " << target;
    std::error_code ec;
    const fs::path resolved = fs::canonical(it->path(), ec);
    ASSERT_FALSE(ec) << it->path() << " -> " << target << " does not resolve";
    ASSERT_TRUE(resolved.string().starts_with(root.string() + "/"))
        << it->path() << " leaves the root: " << resolved;
  }
  EXPECT_GT(links, 10U);
}

// The sysfs attributes say what the config space says; locality masks and lists agree.
void check_pci_attributes(const BuiltHost& host) {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(host.root / "sys/bus/pci/devices")) {
    const std::string name = entry.path().filename().string();
    const std::string config = read_file(entry.path() / "config");
    ASSERT_EQ(config.size(), 4096U) << name;
    auto byte = [&](std::size_t off) {
      return static_cast<unsigned>(static_cast<unsigned char>(config[off]));
    };
    auto u16 = [&](std::size_t off) { return byte(off) | (byte(off + 1) << 8); };
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%04x", u16(0));
    EXPECT_EQ(file_value(entry.path(), "vendor"), buf) << name;
    std::snprintf(buf, sizeof(buf), "0x%04x", u16(2));
    EXPECT_EQ(file_value(entry.path(), "device"), buf) << name;
    std::snprintf(buf, sizeof(buf), "0x%02x%02x%02x", byte(0x0b), byte(0x0a), byte(0x09));
    EXPECT_EQ(file_value(entry.path(), "class"), buf) << name;
    const bool bridge = file_value(entry.path(), "class").starts_with("0x0604");
    EXPECT_EQ(byte(0x0e) & 0x7f, bridge ? 1U : 0U) << name;
    if (bridge) {
      EXPECT_EQ(std::to_string(byte(0x19)), file_value(entry.path(), "secondary_bus_number"))
          << name;
      EXPECT_EQ(std::to_string(byte(0x1a)), file_value(entry.path(), "subordinate_bus_number"))
          << name;
      EXPECT_EQ(byte(0x18), std::stoul(name.substr(name.find(':') + 1, 2), nullptr, 16)) << name;
    }
    const std::string numa = file_value(entry.path(), "numa_node");
    if (numa != "-1") {
      EXPECT_EQ(file_value(entry.path(), "local_cpulist"),
                file_value(host.root, "sys/devices/system/node/node" + numa + "/cpulist"))
          << name;
      EXPECT_EQ(file_value(entry.path(), "local_cpus"),
                file_value(host.root, "sys/devices/system/node/node" + numa + "/cpumap"))
          << name;
    }
    ++count;
  }
  EXPECT_EQ(count, host.summary.pci_functions);
}

void check_lstopo(const BuiltHost& host) {
  const Json& m = host.manifest;
  auto machine = parse_hwloc_xml(run_lstopo(host.root, {"--of", "xml", "--whole-io"}));
  ASSERT_NE(machine, nullptr);
  EXPECT_EQ(machine->type, "Machine");
  const auto objects = all_objects(*machine);
  std::map<std::string, int> counts;
  std::map<std::string, const XmlObject*> pci;         // busid -> PCIDev or Bridge
  std::map<std::string, const XmlObject*> numa_by_id;  // os_index -> NUMANode
  for (const XmlObject* o : objects) {
    ++counts[o->type];
    if (!o->attr("pci_busid").empty()) pci[o->attr("pci_busid")] = o;
    if (o->type == "NUMANode") numa_by_id[o->attr("os_index")] = o;
  }
  EXPECT_EQ(counts["Package"], m["sockets"]);
  EXPECT_EQ(counts["PU"], m["cpus"]);
  ASSERT_EQ(counts["NUMANode"], static_cast<int>(m["numa_nodes"].size()));
  for (const Json& n : m["numa_nodes"]) {
    const XmlObject* node = numa_by_id.at(std::to_string(n["id"].get<int>()));
    EXPECT_EQ(node->attr("local_memory"), std::to_string(n["memory_bytes"].get<std::uint64_t>()));
  }
  EXPECT_EQ(pci.size(), m["pci_functions"].get<std::size_t>());

  for (const Json& d : m["devices"]) {
    const std::string name = d["name"];
    for (const Json& f : d["functions"]) {
      ASSERT_TRUE(pci.count(f.get<std::string>())) << name << " " << f << " not seen by hwloc";
    }
    const XmlObject* obj = pci.at(d["pci"].get<std::string>());
    EXPECT_EQ(obj->type, "PCIDev") << name;
    // PCI nesting: the bridges above it, outermost first, are the profile's ports and switches.
    std::vector<std::string> bridges;
    const XmlObject* up = obj->parent;
    for (; up != nullptr && (up->type == "Bridge" || up->type == "PCIDev"); up = up->parent) {
      if (up->attr("bridge_type") == "1-1") bridges.insert(bridges.begin(), up->attr("pci_busid"));
    }
    std::vector<std::string> expected;
    for (const Json& b : d["bridges"])
      expected.push_back(b);
    EXPECT_EQ(bridges, expected) << name;
    // NUMA locality: the I/O tree hangs below the object whose CPUs are the device's node's.
    ASSERT_NE(up, nullptr) << name;
    const int numa = d["numa"];
    if (numa >= 0) {
      EXPECT_EQ(up->attr("cpuset"), numa_by_id.at(std::to_string(numa))->attr("cpuset"))
          << name << " attached below " << up->type;
    }
    // Link speed and width, as hwloc computes them from the link attributes.
    if (d.contains("link")) {
      const double expected_speed = hwloc_link_speed(d["link"]["speed_mts"], d["link"]["width"]);
      EXPECT_NEAR(std::stod(obj->attr("pci_link_speed")), expected_speed, 0.01) << name;
    }
    // OS devices below the function: network interfaces, RDMA devices, DRM cards, disks.
    std::set<std::string> osdevs;
    for (const XmlObject* o : all_objects(*obj)) {
      if (o->type == "OSDev") osdevs.insert(o->attr("name"));
    }
    if (d.contains("ports")) {
      for (const Json& port : d["ports"]) {
        if (port["pci"] != d["pci"]) {
          std::set<std::string> other;
          for (const XmlObject* o : all_objects(*pci.at(port["pci"].get<std::string>()))) {
            if (o->type == "OSDev") other.insert(o->attr("name"));
          }
          EXPECT_TRUE(other.count(port["netdev"].get<std::string>())) << port["netdev"];
          if (port.contains("rdma")) {
            EXPECT_TRUE(other.count(port["rdma"].get<std::string>()));
          }
          continue;
        }
        EXPECT_TRUE(osdevs.count(port["netdev"].get<std::string>())) << port["netdev"];
        if (port.contains("rdma")) {
          EXPECT_TRUE(osdevs.count(port["rdma"].get<std::string>())) << port["rdma"];
        }
      }
    }
    if (d["type"] == "gpu" && d["vendor"] == "1002") {
      EXPECT_TRUE(osdevs.count("card" + std::to_string(d["ordinal"].get<int>()))) << name;
    }
    if (d["type"] == "nvme") {
      EXPECT_TRUE(osdevs.count("nvme" + std::to_string(d["ordinal"].get<int>()) + "n1")) << name;
    }
  }
}

void check_lspci(const BuiltHost& host) {
  const Json& m = host.manifest;
  const auto paths = parse_lspci_paths(run_lspci(host.root, {"-D", "-PP"}));
  const auto functions = parse_lspci_verbose(run_lspci(host.root, {"-D", "-vvv"}));
  ASSERT_EQ(functions.size(), m["pci_functions"].get<std::size_t>());
  ASSERT_EQ(paths.size(), functions.size());

  // Nesting: lspci's path through the bridges is the profile's.
  for (const Json& d : m["devices"]) {
    for (const Json& f : d["functions"]) {
      std::string expected;
      for (const Json& b : d["bridges"]) {
        const std::string a = b;
        expected += expected.empty() ? a : "/" + a.substr(5);
      }
      const std::string fn = f;
      expected += expected.empty() ? fn : "/" + fn.substr(5);
      ASSERT_TRUE(paths.count(fn)) << fn;
      EXPECT_EQ(paths.at(fn), expected) << d["name"];
    }
  }

  // Port types: derived from the bus structure lspci decoded (primary/secondary buses), and
  // compared with the type lspci decodes from the PCI Express capability.
  std::map<std::string, std::string> express;
  for (const LspciFunction& f : functions)
    express[f.address] = f.express;
  for (const LspciFunction& f : functions) {
    const std::string& path = paths.at(f.address);
    const bool bridge = f.description.starts_with("PCI bridge");
    std::string expected;
    if (!bridge) {
      expected =
          path.find('/') == std::string::npos ? "Root Complex Integrated Endpoint" : "Endpoint";
    } else if (path.find('/') == std::string::npos) {
      expected = "Root Port";
    } else {
      const std::string parent_path = path.substr(0, path.rfind('/'));
      std::string parent = parent_path.substr(parent_path.rfind('/') + 1);
      if (parent.size() == 7) parent = f.address.substr(0, 5) + parent;
      const std::string& parent_type = express.at(parent);
      expected = parent_type == "Upstream Port" ? "Downstream Port" : "Upstream Port";
    }
    EXPECT_EQ(f.express, expected) << f.address << " " << f.description;

    // Links: the capability lspci decodes says what the sysfs attributes say.
    const fs::path dir = host.root / "sys/bus/pci/devices" / f.address;
    if (file_value(dir, "max_link_speed") == "Unknown") continue;  // VFs, integrated endpoints
    const std::string max_speed = file_value(dir, "max_link_speed");
    EXPECT_EQ(f.lnkcap_speed + (f.lnkcap_speed == "2.5" ? "" : ".0") + " GT/s PCIe", max_speed)
        << f.address;
    EXPECT_EQ(f.lnkcap_width, file_value(dir, "max_link_width")) << f.address;
    const std::string cur_speed = file_value(dir, "current_link_speed");
    EXPECT_EQ(f.lnksta_speed + (f.lnksta_speed == "2.5" ? "" : ".0") + " GT/s PCIe", cur_speed)
        << f.address;
    EXPECT_EQ(f.lnksta_width, file_value(dir, "current_link_width")) << f.address;
    EXPECT_EQ(f.numa_node.empty() ? "-1" : f.numa_node, file_value(dir, "numa_node")) << f.address;
  }

  // Endpoints: locality, driver and link as the profile gives them.
  std::map<std::string, const LspciFunction*> by_address;
  for (const LspciFunction& f : functions)
    by_address[f.address] = &f;
  for (const Json& d : m["devices"]) {
    const LspciFunction& f = *by_address.at(d["pci"].get<std::string>());
    if (d["numa"].get<int>() >= 0) {
      EXPECT_EQ(f.numa_node, std::to_string(d["numa"].get<int>()));
    }
    if (d.contains("link")) {
      EXPECT_EQ(f.lnksta_speed, lspci_speed(d["link"]["speed_mts"])) << d["name"];
      EXPECT_EQ(f.lnksta_width, std::to_string(d["link"]["width"].get<int>())) << d["name"];
    }
    EXPECT_FALSE(f.driver.empty()) << d["name"];
  }
}

void check_lspci_tree(const BuiltHost& host) {
  const std::string tree = run_lspci(host.root, {"-tv"});
  std::set<std::string> roots;
  for (const auto& entry : fs::directory_iterator(host.root / "sys/devices")) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("pci")) roots.insert(name.substr(3));
  }
  ASSERT_FALSE(roots.empty());
  for (const std::string& root : roots) {
    EXPECT_NE(tree.find("[" + root + "]"), std::string::npos) << root << "\n" << tree;
  }
  for (const auto& entry : fs::directory_iterator(host.root / "sys/bus/pci/devices")) {
    const fs::path dir = entry.path();
    if (!fs::exists(dir / "secondary_bus_number")) continue;
    // lspci prints "-[18]" for a single bus and "-[16-1c]" for a range.
    const auto secondary =
        static_cast<unsigned>(std::stoul(file_value(dir, "secondary_bus_number")));
    const auto subordinate =
        static_cast<unsigned>(std::stoul(file_value(dir, "subordinate_bus_number")));
    char range[16];
    if (secondary == subordinate) {
      std::snprintf(range, sizeof(range), "-[%02x]", secondary);
    } else {
      std::snprintf(range, sizeof(range), "-[%02x-%02x]", secondary, subordinate);
    }
    EXPECT_NE(tree.find(range), std::string::npos) << dir.filename() << " " << range;
  }
}

// One test per shipped profile (ctest runs each test in its own process: one build each).
class ShippedHost : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedHost, BuildsAndRealToolsSeeTheProfile) {
  const BuiltHost* host = built_host(GetParam());
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->manifest["profile"], GetParam());
  std::cout << GetParam() << ": " << host->summary.entries << " entries, "
            << host->summary.pci_functions << " PCI functions, built in " << host->seconds
            << " s\n";
  {
    SCOPED_TRACE("symlinks");
    check_symlinks(*host);
  }
  {
    SCOPED_TRACE("sysfs attributes vs config space");
    check_pci_attributes(*host);
  }
  {
    SCOPED_TRACE("lstopo --of xml --whole-io");
    check_lstopo(*host);
  }
  {
    SCOPED_TRACE("lspci -PP / -vvv");
    check_lspci(*host);
  }
  {
    SCOPED_TRACE("lspci -tv");
    check_lspci_tree(*host);
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, ShippedHost, ::testing::ValuesIn(shipped_profile_names()),
                         [](const auto& p) {
                           std::string n = p.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(OracleSriov, LspciDecodesVirtualFunctions) {
  const BuiltHost* host = built_host(
      "synthetic:gpus=2,nics=2,nic_vfs=4,nvswitches=0,"
      "nvlinks_per_gpu=0");
  ASSERT_NE(host, nullptr);
  const auto functions = parse_lspci_verbose(run_lspci(host->root, {"-D", "-vvv"}));
  std::size_t pfs = 0;
  std::size_t vfs = 0;
  for (const LspciFunction& f : functions) {
    if (f.sriov) {
      ++pfs;
      EXPECT_EQ(f.sriov_total_vfs, "4");
      EXPECT_EQ(f.sriov_number_of_vfs, "4");
    }
    if (f.description.find("Virtual Function") != std::string::npos) ++vfs;
  }
  EXPECT_EQ(pfs, 2U);
  EXPECT_EQ(vfs, 8U);
}

TEST(OracleDegradedLink, LspciReportsTheNegotiatedLink) {
  TempDir dir;
  const fs::path file = dir.path() / "degraded.yaml";
  write_file(file, R"(version: 1
name: degraded
description: a GPU trained at x8 Gen4 in a Gen5 x16 slot
cpu: {model_name: X, sockets: 1, cores_per_socket: 4, threads_per_core: 1}
numa: [{id: 0, socket: 0, memory: 4 GiB}]
pci:
  - bus: 0x20
    numa: 0
    ports:
      - {address: "01.0", slot: 3, device: {model: h100-sxm5, current_link: gen4 x8}}
)");
  auto profile = mock::load_profile(file.string());
  ASSERT_TRUE(profile.ok()) << profile.error().describe();
  ASSERT_TRUE(mock::build_host(*profile, dir.path() / "root").ok());
  const auto functions = parse_lspci_verbose(run_lspci(dir.path() / "root", {"-D", "-vvv"}));
  ASSERT_EQ(functions.size(), 2U);
  const LspciFunction& gpu = functions[1];
  EXPECT_EQ(gpu.lnkcap_speed, "32");
  EXPECT_EQ(gpu.lnkcap_width, "16");
  EXPECT_EQ(gpu.lnksta_speed, "16");
  EXPECT_EQ(gpu.lnksta_width, "8");
  EXPECT_EQ(gpu.physical_slot, "3");
  EXPECT_EQ(functions[0].lnksta_width, "8");  // both ends of a link report the same state
}

}  // namespace
}  // namespace nodetopo::test
