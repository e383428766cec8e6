// The HAMi documents and the instance labels on whole mock hosts, through the one discovery path
// (core::HostSource, core::take_snapshot, the mock NVML library): HAMi's pair scores on dgx-h100
// and hgx-a100 compared with expectations worked out by hand from the profiles, cloud-init's
// instance data carried by a mock profile, and hostile instance data (too big, a FIFO, bad JSON,
// a link out of the root) giving a message that names the file and no instance label.
//
// Each TEST opens one mock host: ctest runs every test in its own process, and the process
// environment (HWLOC_FSROOT, the NVML fixture) is written once per host.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <nodetopo/core/host_source.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/core/snapshot.hpp>
#include <nodetopo/exporters/hami.hpp>

#include "test_support.hpp"

namespace nodetopo::test {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

struct Opened {
  core::OpenedHost host;
  fs::path root;
};

Opened open_mock(const std::string& spec) {
  ::setenv("NODETOPO_MOCK_NVML_LIBRARY", (build_dir() / "mock/nvml/libnvidia-ml.so.1").c_str(), 1);
  core::HostSource source(core::HostSpec{.root = {}, .mock = spec});
  auto host = source.open();
  if (!host) throw std::runtime_error(host.error().describe());
  core::write_process_environment(*host);
  fs::path root = host->root().path();
  return {std::move(host.value()), root};
}

core::NodeSnapshot snapshot(const Opened& h, core::SnapshotOptions o = {}) {
  o.node_name = "node-a";
  o.reopen_root = true;  // as the agent does: files written between snapshots are seen afresh
  auto s = core::take_snapshot(h.host, o);
  if (!s) throw std::runtime_error(s.error().describe());
  return std::move(s.value());
}

// index -> (index -> score), decoded from HAMi's two annotations.
std::map<std::uint32_t, std::map<std::uint32_t, int>> scores_by_index(const Topology& t) {
  auto docs = exporters::render_hami(t, {});
  EXPECT_TRUE(docs.ok());
  std::map<std::string, std::uint32_t> index;
  for (const Json& d : Json::parse(docs->register_json))
    index[d["id"].get<std::string>()] = d.value("index", 0U);
  std::map<std::uint32_t, std::map<std::uint32_t, int>> out;
  for (const Json& row : Json::parse(docs->score_json)) {
    for (const auto& [peer, score] : row["score"].items())
      out[index.at(row["uuid"])][index.at(peer)] = score.get<int>();
  }
  return out;
}

// dgx-h100 (docs/mock.md): GPUs 0-3 on NUMA node 0, 4-7 on NUMA node 1, every GPU behind its own
// PCIe switch under its own root complex, so two GPUs of one socket are NODE (HAMi: same CPU, 20)
// and of two sockets SYS (cross CPU, 10); every GPU has 18 NVLinks to the four NVSwitches
// (5+4+4+5), HAMi counts min(18, 18) = 18 links (EighteenNVLINKLinks, 1800). Expected: 1820 and
// 1810.
TEST(HamiMockScore, DgxH100) {
  const Opened h = open_mock("dgx-h100");
  const auto s = snapshot(h);
  const auto scores = scores_by_index(s.topology());
  ASSERT_EQ(scores.size(), 8U);
  for (std::uint32_t i = 0; i < 8; ++i) {
    ASSERT_EQ(scores.at(i).size(), 7U);
    for (std::uint32_t j = 0; j < 8; ++j) {
      if (i == j) continue;
      EXPECT_EQ(scores.at(i).at(j), i / 4 == j / 4 ? 1820 : 1810) << "GPU" << i << "-GPU" << j;
    }
  }
}

// hgx-a100 (docs/mock.md, DGX A100 layout): per GPU pair (0,1), (2,3), (4,5), (6,7) one PCIe
// switch holding both GPUs, so a pair is PIX (HAMi: single switch, 50); the pairs sit on NUMA
// nodes 3, 1, 7, 5 (NPS4), so any two GPUs of different pairs are SYS (10); every GPU has 2
// NVLinks to each of 6 NVSwitches, 12 in all (TwelveNVLINKLinks, 1200). Expected: 1250, 1210.
TEST(HamiMockScore, HgxA100) {
  const Opened h = open_mock("hgx-a100");
  const auto s = snapshot(h);
  const auto scores = scores_by_index(s.topology());
  ASSERT_EQ(scores.size(), 8U);
  for (std::uint32_t i = 0; i < 8; ++i) {
    for (std::uint32_t j = 0; j < 8; ++j) {
      if (i == j) continue;
      EXPECT_EQ(scores.at(i).at(j), i / 2 == j / 2 ? 1250 : 1210) << "GPU" << i << "-GPU" << j;
    }
  }
}

// hami-lab: two Tesla T4 (NVML name "Tesla T4", HAMi prefixes "NVIDIA-"), 15 GiB each as the
// mock NVML reports, both on NUMA node 0, under different root complexes (NODE, 20), no NVLink.
TEST(HamiMockRegister, HamiLabHasTwoT4sAndTwentySlots) {
  const Opened h = open_mock("hami-lab");
  const auto s = snapshot(h);
  auto docs = exporters::render_hami(s.topology(), {});
  ASSERT_TRUE(docs.ok());
  const Json reg = Json::parse(docs->register_json);
  ASSERT_EQ(reg.size(), 2U);
  for (const Json& d : reg) {
    EXPECT_EQ(d["type"], "NVIDIA-Tesla T4");
    EXPECT_EQ(d["count"], 10);
    EXPECT_EQ(d["devcore"], 100);
    EXPECT_GT(d["devmem"].get<int>(), 15000);
    EXPECT_EQ(d.count("numa"), 0U);  // NUMA node 0: left out
  }
  EXPECT_EQ(docs->gpu_count, 20U);
  for (const auto& [i, row] : scores_by_index(s.topology())) {
    for (const auto& [j, score] : row)
      EXPECT_EQ(score, 20);
  }
}

// A profile that carries cloud-init's instance data (machine.cloud_init): the labels come from
// it, an export.yaml `instance:` value wins over it, and the agent config's loses to export.yaml.
TEST(InstanceLabelsMock, CloudInitFromTheProfileThenConfigPrecedence) {
  std::ifstream in(std::string(NODETOPO_SOURCE_DIR) + "/mock/profiles/hami-lab.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string anchor = "  bios_version: CFE130J-4.10\n";
  ASSERT_NE(text.find(anchor), std::string::npos);
  text.replace(text.find(anchor), anchor.size(),
               anchor +
                   "  cloud_init: {cloud_name: aws, platform: ec2, region: eu-west-1, "
                   "instance_id: i-0abc, instance_type: g4dn.12xlarge, life_cycle: spot}\n");
  TempDir dir;
  const fs::path profile = dir.path() / "lab-cloud.yaml";
  std::ofstream(profile) << text;
  const Opened h = open_mock(profile.string());
  ASSERT_TRUE(fs::exists(h.root / "run/cloud-init/instance-data.json"));
  {
    const auto s = snapshot(h);
    EXPECT_TRUE(s.instance.cloud_init_error.empty()) << s.instance.cloud_init_error;
    EXPECT_EQ(s.instance.platform, "Lenovo");  // DMI names the platform, nothing more
    auto labels = core::render(s, core::DocumentKind::kLabels, "plain");
    ASSERT_TRUE(labels.ok()) << labels.error().describe();
    EXPECT_NE(labels->find("nodetopo.dev/instance-type=g4dn.12xlarge\n"), std::string::npos);
    EXPECT_NE(labels->find("nodetopo.dev/capacity-type=spot\n"), std::string::npos);
    EXPECT_EQ(labels->find("nodetopo.dev/reservation="), std::string::npos);
  }
  core::SnapshotOptions o;
  o.instance_config["capacity-type"] = {"on-demand", "agent config instance.capacity_type"};
  o.instance_config["reservation"] = {"from-agent", "agent config instance.reservation"};
  fs::create_directories(h.root / "etc/nodetopo");
  std::ofstream(h.root / "etc/nodetopo/export.yaml") << "instance:\n  reservation: lab-rack-7\n";
  const auto s = snapshot(h, o);
  auto labels = core::render(s, core::DocumentKind::kLabels, "plain");
  ASSERT_TRUE(labels.ok()) << labels.error().describe();
  EXPECT_NE(labels->find("nodetopo.dev/instance-type=g4dn.12xlarge\n"), std::string::npos);
  EXPECT_NE(labels->find("nodetopo.dev/capacity-type=on-demand\n"), std::string::npos);
  EXPECT_NE(labels->find("nodetopo.dev/reservation=lab-rack-7\n"), std::string::npos);
  EXPECT_EQ(s.instance.config.at("reservation").source,
            "etc/nodetopo/export.yaml instance.reservation");
}

// Hostile instance data: each refused with the file's path in the message, never a hang or a
// crash, and the labels rendered without instance facts.
TEST(InstanceLabelsMock, HostileInstanceDataNamesTheFile) {
  const Opened h = open_mock("cpu-only");
  const fs::path dir = h.root / "run/cloud-init";
  const fs::path file = dir / "instance-data.json";
  fs::create_directories(dir);
  const auto check = [&](const std::string& what, const std::string& expect) {
    const auto s = snapshot(h);
    EXPECT_NE(s.instance.cloud_init_error.find(file.string()), std::string::npos)
        << what << ": " << s.instance.cloud_init_error;
    EXPECT_NE(s.instance.cloud_init_error.find(expect), std::string::npos)
        << what << ": " << s.instance.cloud_init_error;
    auto labels = core::render(s, core::DocumentKind::kLabels, "plain");
    ASSERT_TRUE(labels.ok()) << labels.error().describe();
    EXPECT_EQ(labels->find("nodetopo.dev/instance-type"), std::string::npos) << what;
  };
  {
    std::ofstream out(file);
    out << R"({"ds": {"meta_data": {"instance-type": ")" << std::string(1 << 20, 'x') << "\"}}}";
  }
  check("too big", "larger than 1 MiB");
  fs::remove(file);
  ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0);
  check("FIFO", "not a regular file");
  fs::remove(file);
  std::ofstream(file) << R"({"v1": {"instance_type": "g4dn.xlarge")";
  check("bad JSON", "not valid JSON");
  fs::remove(file);
  fs::create_symlink("/etc/passwd", file);
  {
    const auto s = snapshot(h);
    EXPECT_FALSE(s.instance.cloud_init_error.empty());
    EXPECT_TRUE(s.instance.cloud_init.values.empty());
  }
  fs::remove(file);
  // Absent: no message, no label.
  const auto s = snapshot(h);
  EXPECT_TRUE(s.instance.cloud_init_error.empty()) << s.instance.cloud_init_error;
}

}  // namespace
}  // namespace nodetopo::test
