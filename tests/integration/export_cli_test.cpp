// `topo export` end to end on the real captures and the shipped mock profiles: goldens of every
// output, label churn, atomic
// NFD feature files, node-name resolution, the node's settings file and usage errors.
#include <filesystem>
#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "captures.hpp"
#include "test_support.hpp"

namespace nodetopo {
namespace {

namespace fs = std::filesystem;
using test::run_command;

std::string topo() {
  return (test::build_dir() / "topo").string();
}
std::string capture(const std::string& name) {
  return test::capture_root(name).string();
}

// Runs topo with a clean NODE_NAME so that the environment of the test runner cannot leak in.
test::CommandResult run(std::vector<std::string> args, std::vector<std::string> env = {}) {
  args.insert(args.begin(), topo());
  if (env.empty()) env.push_back("NODE_NAME=");
  return run_command(args, env);
}

// A shipped mock profile built once per test process by `topo mock build` (building is the
// slow part); `--root` on such a directory wires its mock NVML fixture like `--mock` does.
std::string mock_host(const std::string& profile) {
  static std::map<std::string, std::unique_ptr<test::TempDir>> built;
  auto& dir = built[profile];
  if (!dir) {
    dir = std::make_unique<test::TempDir>();
    const auto r = run({"mock", "build", profile, (dir->path() / "host").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return (dir->path() / "host").string();
}

// A host to export: "<capture>" (a real capture) or "mock:<profile>" (a shipped mock profile).
std::vector<std::string> source_args(const std::string& param) {
  if (param.starts_with("mock:")) return {"--root", mock_host(param.substr(5))};
  return {"--root", capture(param)};
}
std::string golden_stem(const std::string& param) {
  return param.starts_with("mock:") ? "mock-" + param.substr(5) : param;
}
std::vector<std::string> with_source(std::vector<std::string> args, const std::string& param) {
  const std::vector<std::string> src = source_args(param);
  args.insert(args.begin() + 2, src.begin(), src.end());  // after "export <what>"
  return args;
}

class ExportCapture : public ::testing::TestWithParam<std::string> {};

TEST_P(ExportCapture, Goldens) {
  const std::string stem = "export/" + golden_stem(GetParam());
  struct Case {
    std::string suffix;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {".resourceslices.yaml",
       {"export", "resourceslices", "--node", "golden-node", "--k8s-version", "1.36"}},
      {".labels.txt", {"export", "labels", "--node", "golden-node"}},
      {".nodefeature.yaml",
       {"export", "labels", "--node", "golden-node", "--format", "nodefeature"}},
      {".labels.patch.json", {"export", "labels", "--node", "golden-node", "--format", "patch"}},
      {".nrt.yaml", {"export", "nrt", "--node", "golden-node"}},
      {".shape.txt", {"export", "shape"}},
  };
  for (const Case& c : cases) {
    const auto r = run(with_source(c.args, GetParam()));
    ASSERT_EQ(r.exit_code, 0) << c.suffix << ": " << r.err;
    EXPECT_EQ(test::compare_golden(stem + c.suffix, r.out), "") << c.suffix;
  }
}

TEST_P(ExportCapture, TwoRunsGiveByteIdenticalLabels) {
  // A mock host is rebuilt from scratch by every run, so one format already covers it.
  const std::vector<std::string> formats = GetParam().starts_with("mock:")
                                               ? std::vector<std::string>{"nfd"}
                                               : std::vector<std::string>{"plain", "nfd", "patch"};
  for (const std::string& format : formats) {
    const auto args =
        with_source({"export", "labels", "--node", "golden-node", "--format", format}, GetParam());
    const auto a = run(args);
    const auto b = run(args);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_FALSE(a.out.empty());
    EXPECT_EQ(a.out, b.out) << format;
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& p) {
  std::string n = p.param;
  for (char& c : n) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Captures, ExportCapture, ::testing::ValuesIn(test::capture_names()),
                         param_name);
INSTANTIATE_TEST_SUITE_P(MockProfiles, ExportCapture,
                         ::testing::Values("mock:cpu-only", "mock:dgx-h100", "mock:gaudi3",
                                           "mock:hami-lab", "mock:hgx-a100", "mock:mi300x",
                                           "mock:synthetic"),
                         param_name);

const std::string kCapture = "32intel64-2p8co2t+8ve";

TEST(ExportCli, NfdFeatureFileIsWrittenAtomicallyWithExpiry) {
  test::TempDir dir;
  const fs::path file = dir.path() / "features.d" / "nodetopo";
  fs::create_directories(file.parent_path());
  const auto r = run({"export", "labels", "--root", capture(kCapture), "--format", "nfd",
                      "--expiry", "2030-01-01T00:00:00Z", "--output", file.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string text = test::read_file(file);
  EXPECT_EQ(text.rfind("# +expiry-time=2030-01-01T00:00:00Z\nnodetopo.dev/", 0), 0U) << text;
  for (const auto& entry : fs::directory_iterator(file.parent_path())) {
    EXPECT_EQ(entry.path().filename(), "nodetopo") << "left behind: " << entry.path();
  }
}

TEST(ExportCli, RejectsBadExpiryAndExpiryOutsideNfd) {
  auto bad = run(
      {"export", "labels", "--root", capture(kCapture), "--format", "nfd", "--expiry", "tomorrow"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("RFC 3339"), std::string::npos) << bad.err;
  auto plain =
      run({"export", "labels", "--root", capture(kCapture), "--expiry", "2030-01-01T00:00:00Z"});
  EXPECT_EQ(plain.exit_code, 1);
  EXPECT_NE(plain.err.find("--format nfd"), std::string::npos) << plain.err;
}

TEST(ExportCli, UsageErrors) {
  EXPECT_EQ(run({"export"}).exit_code, 2);
  EXPECT_EQ(run({"export", "resourceslices", "--k8s-version", "1.33"}).exit_code, 2);
  EXPECT_EQ(run({"export", "resourceslices", "--sharing", "halves"}).exit_code, 2);
  EXPECT_EQ(run({"export", "labels", "--format", "xml"}).exit_code, 2);
}

TEST(ExportCli, PartitionableNeeds135) {
  const auto r = run({"export", "resourceslices", "--root", capture(kCapture), "--node", "n1",
                      "--sharing", "partitionable", "--k8s-version", "1.34"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("1.35"), std::string::npos) << r.err;
}

TEST(ExportCli, NodeNameFromFlagEnvOrError) {
  const std::string root = capture(kCapture);
  const auto none = run({"export", "nrt", "--root", root});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("--node"), std::string::npos) << none.err;
  const auto env = run({"export", "nrt", "--root", root}, {"NODE_NAME=from-env"});
  ASSERT_EQ(env.exit_code, 0) << env.err;
  EXPECT_NE(env.out.find("name: from-env"), std::string::npos);
  const auto flag =
      run({"export", "nrt", "--root", root, "--node", "from-flag"}, {"NODE_NAME=from-env"});
  EXPECT_NE(flag.out.find("name: from-flag"), std::string::npos);
  const auto bad = run({"export", "nrt", "--root", root, "--node", "Bad_Name"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("node name"), std::string::npos) << bad.err;
}

// A minimal host root: the hostname and the node's export settings are read from it.
class SettingsRoot {
 public:
  explicit SettingsRoot(const std::string& settings) {
    fs::create_directories(dir_.path() / "sys");
    fs::create_directories(dir_.path() / "proc");
    test::write_minimal_cpu(dir_.path());
    test::write_file(dir_.path() / "etc/hostname", "Worker-7.Example.com\n");
    if (!settings.empty()) test::write_file(dir_.path() / "etc/nodetopo/export.yaml", settings);
  }
  [[nodiscard]] std::string path() const { return dir_.path().string(); }

 private:
  test::TempDir dir_;
};

TEST(ExportCli, SettingsFileChoosesDriverAndHostnameIsTheNodeName) {
  SettingsRoot root("driver: gpu.example.com\nsharing:\n  mode: consumable\n");
  const auto r = run({"export", "resourceslices", "--root", root.path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("generateName: worker-7.example.com-gpu.example.com-"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("driver: gpu.example.com"), std::string::npos);
  const auto flag = run({"export", "resourceslices", "--root", root.path(), "--driver", "x.io"});
  EXPECT_NE(flag.out.find("driver: x.io"), std::string::npos) << flag.out;
}

TEST(ExportCli, BadSettingsFileNamesTheFileAndKey) {
  SettingsRoot root("sharing:\n  mode: consumable\n  slices: 4\n");
  const auto r = run({"export", "resourceslices", "--root", root.path(), "--node", "n1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("etc/nodetopo/export.yaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("slices"), std::string::npos) << r.err;
  SettingsRoot broken("sharing: [unclosed\n");
  const auto b = run({"export", "resourceslices", "--root", broken.path(), "--node", "n1"});
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.err.find("YAML"), std::string::npos) << b.err;
}

TEST(ExportCli, ShapeJsonCarriesHashAndDescription) {
  const auto r = run({"export", "shape", "--root", capture(kCapture), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"shape\": \""), std::string::npos);
  EXPECT_NE(r.out.find("nodetopo-shape/1"), std::string::npos);
}

}  // namespace
}  // namespace nodetopo
