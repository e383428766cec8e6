// The node's export settings file: accepted forms and a clear error for each mistake.
#include <gtest/gtest.h>

#include <nodetopo/exporters/export_config.hpp>

namespace nodetopo::exporters {
namespace {

TEST(ExportConfig, EmptyFileChangesNothing) {
  auto c = parse_export_config("", "f");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->driver);
  EXPECT_FALSE(c->sharing);
}

TEST(ExportConfig, FullFile) {
  auto c = parse_export_config(
      "driver: gpu.example.com\nsharing:\n  mode: partitionable\n  cores: 1000\n"
      "  memoryStep: 512Mi\n  partitions: [4, 2, 8]\n",
      "f");
  ASSERT_TRUE(c.ok()) << c.error().describe();
  EXPECT_EQ(*c->driver, "gpu.example.com");
  ASSERT_TRUE(c->sharing);
  EXPECT_EQ(c->sharing->mode, SharingMode::kPartitionable);
  EXPECT_EQ(c->sharing->cores, 1000U);
  EXPECT_EQ(c->sharing->memory_step, 512ULL << 20);
  EXPECT_EQ(c->sharing->partitions, (std::vector<std::uint32_t>{2, 4, 8}));
}

TEST(ExportConfig, ErrorsNameTheFileAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"drivr: x\n", "drivr"},
      {"driver: Not_A_Domain\n", "driver"},
      {"sharing:\n  mode: halves\n", "sharing.mode"},
      {"sharing:\n  cores: 0\n", "sharing.cores"},
      {"sharing:\n  cores: lots\n", "sharing.cores"},
      {"sharing:\n  memoryStep: 1k\n", "sharing.memoryStep"},
      {"sharing:\n  partitions: [2, 2]\n", "duplicate"},
      {"sharing:\n  partitions: [1]\n", "sharing.partitions"},
      {"sharing: yes\n", "sharing"},
      {"- a\n- b\n", "mapping"},
      {"sharing: {mode: [\n", "YAML"},
  };
  for (const auto& [text, needle] : cases) {
    auto c = parse_export_config(text, "etc/nodetopo/export.yaml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.error().path, "etc/nodetopo/export.yaml");
    EXPECT_NE(c.error().describe().find(needle), std::string::npos)
        << text << " -> " << c.error().describe();
  }
}

}  // namespace
}  // namespace nodetopo::exporters
