// HAMi's node documents (exporters/hami.hpp), checked by a decoder written here from HAMi's
// documented format, not by the encoder: HAMi v2.10.0 pkg/device/devices.go, type DeviceInfo
// (json tags id, index, count, devmem, devcore, type, numa, mode, migProfiles, health,
// devicevendor, custominfo, all `omitempty`) as written by MarshalNodeDevices (json.Marshal of
// []*DeviceInfo: fields in declaration order, zero values left out), and DevicePairScores
// ({"uuid": ..., "score": {uuid: int}}) read by DecodePairScores.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/exporters/hami.hpp>
#include <nodetopo/exporters/k8s_devices.hpp>

#include "test_topologies.hpp"

namespace nodetopo::test {
namespace {

using Json = nlohmann::ordered_json;

// What HAMi's scheduler gets from json.Unmarshal into []*DeviceInfo.
struct Decoded {
  std::string id;
  std::uint64_t index = 0;
  std::int64_t count = 0, devmem = 0, devcore = 0, numa = 0;
  std::string type, mode;
  bool health = false;
};

// Decodes the register annotation the way Go would, and fails the test on anything HAMi's
// encoder would never write: unknown keys, keys out of the struct's order, wrong JSON types,
// zero values written out (omitempty), numbers out of their Go types' range.
std::vector<Decoded> decode_register(const std::string& text) {
  static const std::vector<std::string> kOrder = {
      "id", "index", "count", "devmem", "devcore", "type", "numa", "mode", "migProfiles", "health"};
  std::vector<Decoded> out;
  const Json j = Json::parse(text);
  EXPECT_TRUE(j.is_array()) << text;
  for (const Json& e : j) {
    EXPECT_TRUE(e.is_object());
    Decoded d;
    std::size_t last = 0;
    bool first = true;
    for (const auto& [k, v] : e.items()) {
      const auto pos = std::find(kOrder.begin(), kOrder.end(), k);
      EXPECT_NE(pos, kOrder.end()) << "unknown key " << k;
      if (pos == kOrder.end()) continue;
      const auto at = static_cast<std::size_t>(pos - kOrder.begin());
      EXPECT_TRUE(first || at > last) << "key " << k << " out of DeviceInfo's field order";
      first = false;
      last = at;
      if (k == "id" || k == "type" || k == "mode") {
        EXPECT_TRUE(v.is_string()) << k;
        EXPECT_FALSE(v.get<std::string>().empty()) << k << ": omitempty leaves \"\" out";
        (k == "id" ? d.id : k == "type" ? d.type : d.mode) = v.get<std::string>();
      } else if (k == "health") {
        EXPECT_TRUE(v.is_boolean());
        EXPECT_TRUE(v.get<bool>()) << "omitempty leaves false out";
        d.health = v.get<bool>();
      } else {
        EXPECT_TRUE(v.is_number_integer()) << k;
        EXPECT_NE(v.get<std::int64_t>(), 0) << k << ": omitempty leaves 0 out";
        const std::int64_t n = v.get<std::int64_t>();
        if (k == "index") {
          EXPECT_GE(n, 0) << "index is a Go uint";
          d.index = static_cast<std::uint64_t>(n);
        } else {
          if (k != "numa") {
            EXPECT_LE(n, INT32_MAX) << k << " is a Go int32";
          }
          (k == "count"     ? d.count
           : k == "devmem"  ? d.devmem
           : k == "devcore" ? d.devcore
                            : d.numa) = n;
        }
      }
    }
    out.push_back(d);
  }
  return out;
}

// DecodePairScores: uuid -> (peer uuid -> score).
std::map<std::string, std::map<std::string, int>> decode_scores(const std::string& text) {
  std::map<std::string, std::map<std::string, int>> out;
  const Json j = Json::parse(text);
  EXPECT_TRUE(j.is_array());
  for (const Json& e : j) {
    EXPECT_TRUE(e.contains("uuid") && e["uuid"].is_string());
    EXPECT_TRUE(e.contains("score") && e["score"].is_object());
    auto& row = out[e["uuid"].get<std::string>()];
    std::string previous;
    for (const auto& [peer, score] : e["score"].items()) {
      EXPECT_LT(previous, peer) << "Go writes map keys sorted";
      previous = peer;
      EXPECT_TRUE(score.is_number_integer());
      row[peer] = score.get<int>();
    }
  }
  return out;
}

TEST(HamiRegister, DecodesAsHamiReadsItWithTheDefaults) {
  const Topology t = make_dgx();
  auto docs = exporters::render_hami(t, {});
  ASSERT_TRUE(docs.ok()) << docs.error().describe();
  const auto devices = decode_register(docs->register_json);
  ASSERT_EQ(devices.size(), 8U);
  // The expectations come from the model, one GPU at a time, by its NVML index.
  std::map<std::uint64_t, const AcceleratorInfo*> by_index;
  std::map<std::uint64_t, std::optional<std::uint32_t>> numa_of;
  for (const auto& d : exporters::collect_k8s_devices(t, "")) {
    if (d.accelerator == nullptr) continue;
    by_index[*d.accelerator->index] = d.accelerator;
    numa_of[*d.accelerator->index] = d.numa_node;
  }
  for (const Decoded& d : devices) {
    const AcceleratorInfo* a = by_index.at(d.index);
    EXPECT_EQ(d.id, a->uuid);
    EXPECT_EQ(d.count, 10);                                                 // deviceSplitCount
    EXPECT_EQ(d.devmem, static_cast<std::int64_t>(a->memory_bytes >> 20));  // MiB
    EXPECT_EQ(d.devcore, 100);
    EXPECT_EQ(d.type, a->product);  // starts with "NVIDIA": no prefix
    EXPECT_EQ(d.numa, numa_of.at(d.index).value_or(0));
    EXPECT_EQ(d.mode, "hami-core");
    EXPECT_TRUE(d.health);
  }
  // GPU 0 has index 0 and (in this model) NUMA node 0: both left out, as Go's omitempty does.
  EXPECT_EQ(Json::parse(docs->register_json)[0].count("index"), 0U);
  EXPECT_EQ(docs->gpu_count, 80U);  // 8 GPUs x split count 10
}

TEST(HamiRegister, SplitCountAndScalingFromTheConfig) {
  const Topology t = make_dgx({.gpus = 2});
  exporters::HamiOptions o;
  o.split_count = 4;
  o.memory_scaling = 1.5;
  o.core_scaling = 0.29;  // Go: int32(0.29 * 100) == 28, not 29
  o.mode = "mps";
  auto docs = exporters::render_hami(t, o);
  ASSERT_TRUE(docs.ok()) << docs.error().describe();
  const auto devices = decode_register(docs->register_json);
  ASSERT_EQ(devices.size(), 2U);
  const std::int64_t mib = static_cast<std::int64_t>(85520809984ULL / 1024 / 1024);
  for (const Decoded& d : devices) {
    EXPECT_EQ(d.count, 4);
    EXPECT_EQ(d.devmem, static_cast<std::int64_t>(static_cast<double>(mib) * 1.5));
    EXPECT_EQ(d.devcore, 28);
    EXPECT_EQ(d.mode, "mps");
  }
  EXPECT_EQ(docs->gpu_count, 8U);
}

TEST(HamiRegister, TypeGetsHamisPrefixAndStringsAreEscapedLikeGo) {
  EXPECT_EQ(exporters::go_json_string("Tesla T4"), "\"Tesla T4\"");
  EXPECT_EQ(exporters::go_json_string("a<b>&\"c\\\n"), "\"a\\u003cb\\u003e\\u0026\\\"c\\\\\\n\"");
  EXPECT_EQ(exporters::go_json_string("\x01"), "\"\\u0001\"");
  EXPECT_EQ(exporters::go_json_string("x\xe2\x80\xa8y"), "\"x\\u2028y\"");
}

TEST(HamiRegister, BadOptionsNameTheField) {
  const Topology t = make_dgx({.gpus = 1});
  exporters::HamiOptions o;
  o.split_count = 0;
  auto r = exporters::render_hami(t, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("split_count"), std::string::npos);
  o = {};
  o.memory_scaling = 0;
  EXPECT_NE(exporters::render_hami(t, o).error().message.find("memory_scaling"), std::string::npos);
  o = {};
  o.mode = "mig";
  EXPECT_NE(exporters::render_hami(t, o).error().message.find("mode"), std::string::npos);
}

TEST(HamiRegister, NoNvidiaGpuGivesAnEmptyListAndNoCapacity) {
  const Topology t = make_nic_farm(2);
  auto docs = exporters::render_hami(t, {});
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(docs->register_json, "[]");
  EXPECT_EQ(docs->score_json, "[]");
  EXPECT_EQ(docs->gpu_count, 0U);
}

// The hand-built DGX (test_topologies.cpp): 4 GPUs per socket, each GPU behind its own PCIe switch
// under its own root port (different host bridges), NVLink 5+4+4+5 = 18 through four NVSwitches.
// HAMi's score of a pair = the PCIe weight (same socket: NODE 20; other socket: SYS 10) + 100 per
// NVLink (18: 1800).
TEST(HamiScore, HandBuiltDgxNv18PlusPcieClass) {
  const Topology t = make_dgx();
  auto docs = exporters::render_hami(t, {});
  ASSERT_TRUE(docs.ok());
  const auto scores = decode_scores(docs->score_json);
  ASSERT_EQ(scores.size(), 8U);
  std::map<std::string, std::uint64_t> index;
  for (const Decoded& d : decode_register(docs->register_json))
    index[d.id] = d.index;
  for (const auto& [uuid, row] : scores) {
    EXPECT_EQ(row.size(), 7U);  // every other GPU, never itself
    for (const auto& [peer, score] : row) {
      const bool same_socket = index.at(uuid) / 4 == index.at(peer) / 4;
      EXPECT_EQ(score, 1800 + (same_socket ? 20 : 10)) << uuid << " -> " << peer;
    }
  }
  // Without NVLink only the PCIe weight is left.
  auto plain = exporters::render_hami(make_dgx({.nvlink = false}), {});
  ASSERT_TRUE(plain.ok());
  for (const auto& [uuid, row] : decode_scores(plain->score_json)) {
    for (const auto& [peer, score] : row)
      EXPECT_TRUE(score == 20 || score == 10) << score;
  }
  exporters::HamiOptions off;
  off.score = false;
  EXPECT_TRUE(exporters::render_hami(t, off)->score_json.empty());
}

}  // namespace
}  // namespace nodetopo::test
