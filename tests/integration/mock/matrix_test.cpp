// `topo matrix --mock P` prints, for each GPU profile, what the machine it imitates is publicly
// known to print with `nvidia-smi topo -m` (or, for AMD, with the xGMI column of rocm-smi).
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace nodetopo::test {
namespace {

using Json = nlohmann::json;

struct Matrix {
  std::vector<std::string> gpus;
  std::vector<std::string> nics;
  Json cells;
  Json numa;
  [[nodiscard]] std::string at(const std::string& a, const std::string& b) const {
    return cells.at(a).at(b).get<std::string>();
  }
};

Matrix matrix_of(const std::string& profile) {
  const CommandResult r = run_command(
      {(build_dir() / "topo").string(), "matrix", "--mock", profile, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  Matrix m;
  for (const Json& d : doc["devices"]) {
    (d["kind"] == "gpu" ? m.gpus : m.nics).push_back(d["name"].get<std::string>());
  }
  m.cells = doc["cells"];
  m.numa = doc["numa_affinity"];
  return m;
}

// The NICs a GPU reaches with `cls`.
std::vector<std::string> nics_with(const Matrix& m, const std::string& gpu,
                                   const std::string& cls) {
  std::vector<std::string> out;
  for (const std::string& nic : m.nics) {
    if (m.at(gpu, nic) == cls) out.push_back(nic);
  }
  return out;
}

TEST(ProfileMatrix, DgxH100) {
  const Matrix m = matrix_of("dgx-h100");
  ASSERT_EQ(m.gpus.size(), 8U);
  ASSERT_EQ(m.nics.size(), 12U);  // 8 compute ConnectX-7 + 2 dual-port storage NICs
  std::map<std::string, int> pix_nic_users;
  for (const std::string& g : m.gpus) {
    // NV18: every pair through the four NVSwitches (5+4+4+5 links).
    for (const std::string& h : m.gpus)
      EXPECT_EQ(m.at(g, h), g == h ? "X" : "NV18") << g << h;
    // Each GPU shares its PCIe switch with exactly one compute NIC...
    const auto pix = nics_with(m, g, "PIX");
    ASSERT_EQ(pix.size(), 1U) << g;
    ++pix_nic_users[pix.front()];
    // ... and reaches every other NIC through its socket (NODE) or across sockets (SYS).
    for (const std::string& nic : m.nics) {
      if (nic == pix.front()) continue;
      const std::string expected = m.numa[g] == m.numa[nic] ? "NODE" : "SYS";
      EXPECT_EQ(m.at(g, nic), expected) << g << " " << nic;
    }
  }
  for (const auto& [nic, users] : pix_nic_users)
    EXPECT_EQ(users, 1) << nic << ": one GPU each";
  EXPECT_EQ(pix_nic_users.size(), 8U);
  // GPUs 0-3 on NUMA 0, 4-7 on NUMA 1.
  for (std::size_t i = 0; i < m.gpus.size(); ++i) {
    EXPECT_EQ(m.numa[m.gpus[i]], i < 4 ? "0" : "1") << m.gpus[i];
  }
}

TEST(ProfileMatrix, HgxA100) {
  const Matrix m = matrix_of("hgx-a100");
  ASSERT_EQ(m.gpus.size(), 8U);
  for (const std::string& g : m.gpus) {
    // NV12: six NVSwitches, two links each.
    for (const std::string& h : m.gpus)
      EXPECT_EQ(m.at(g, h), g == h ? "X" : "NV12") << g << h;
    // Two levels of switches between a GPU and its NICs: PXB, never PIX.
    EXPECT_FALSE(nics_with(m, g, "PXB").empty()) << g;
    EXPECT_TRUE(nics_with(m, g, "PIX").empty()) << g;
    // NPS4: the other NICs are on other NUMA nodes, even in the same socket.
    for (const std::string& nic : m.nics) {
      if (m.at(g, nic) != "PXB") {
        EXPECT_EQ(m.at(g, nic), "SYS") << g << " " << nic;
      }
    }
  }
  // As a DGX A100 prints: GPU0 is local to NUMA node 3.
  EXPECT_EQ(m.numa["GPU0"], "3");
}

TEST(ProfileMatrix, Mi300xIsAllToAllXgmi) {
  const Matrix m = matrix_of("mi300x");
  ASSERT_EQ(m.gpus.size(), 8U);
  for (const std::string& g : m.gpus) {
    for (const std::string& h : m.gpus)
      EXPECT_EQ(m.at(g, h), g == h ? "X" : "XGMI") << g << h;
    EXPECT_EQ(nics_with(m, g, "PIX").size(), 1U) << g;
  }
}

TEST(ProfileMatrix, CpuOnlyHasNoAcceleratorRows) {
  const Matrix m = matrix_of("cpu-only");
  EXPECT_TRUE(m.gpus.empty());
  EXPECT_FALSE(m.nics.empty());
}

}  // namespace
}  // namespace nodetopo::test
