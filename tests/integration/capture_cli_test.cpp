// `topo capture` through the built binary: a capture of a mock host or of a real capture unpacks
// with `tar xzf` into a root whose dump equals the original's, byte for byte, text and JSON; it
// holds `topo --version` and the dump; links stay links; a bad output path is named.
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nodetopo::agent {
namespace {

namespace fs = std::filesystem;

test::CommandResult topo(const std::vector<std::string>& args) {
  std::vector<std::string> argv{(test::build_dir() / "topo").string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return test::run_command(argv, {"HOST_ROOT="});
}

std::string test_name(std::string name) {
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return name;
}

// Captures `host` (--mock NAME or --root DIR) into dir/<name>.tar.gz, unpacks it there with the
// system's tar and checks that the unpacked root dumps as the host does.
void expect_replays(const std::vector<std::string>& host, const fs::path& dir,
                    const std::string& name) {
  const fs::path tarball = dir / (name + ".tar.gz");
  std::vector<std::string> capture{"capture"};
  capture.insert(capture.end(), host.begin(), host.end());
  capture.insert(capture.end(), {"--output", tarball.string()});
  const auto captured = topo(capture);
  ASSERT_EQ(captured.exit_code, 0) << captured.err;
  const auto untar = test::run_command({"tar", "xzf", tarball.string(), "-C", dir.string()});
  ASSERT_EQ(untar.exit_code, 0) << untar.err;
  const fs::path replay = dir / name;
  ASSERT_TRUE(fs::is_directory(replay / "sys")) << replay;

  for (const char* format : {"text", "json"}) {
    std::vector<std::string> original{"dump"};
    original.insert(original.end(), host.begin(), host.end());
    original.insert(original.end(), {"--format", format});
    const auto want = topo(original);
    const auto got = topo({"dump", "--root", replay.string(), "--format", format});
    ASSERT_EQ(want.exit_code, 0) << want.err;
    EXPECT_EQ(got.exit_code, 0) << got.err;
    EXPECT_TRUE(got.out == want.out) << format << " dump of the replayed capture differs";
    EXPECT_EQ(got.err, want.err) << format;
    if (std::string(format) == "json") {
      EXPECT_TRUE(test::read_file(replay / "nodetopo-capture/dump.json") == want.out);
    }
  }
  const auto version = topo({"--version"});
  EXPECT_EQ(test::read_file(replay / "nodetopo-capture/version"), version.out);
}

class CaptureMock : public ::testing::TestWithParam<std::string> {};

TEST_P(CaptureMock, ReplaysToTheSameDump) {
  const test::TempDir dir;
  expect_replays({"--mock", GetParam()}, dir.path(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Profiles, CaptureMock, ::testing::Values("dgx-h100", "mi300x", "hgx-a100"),
                         [](const auto& p) { return test_name(p.param); });

// Real machines (hwloc's captures from shared/, unpacked here): the CPU and NUMA files that
// hwloc reads on its own are in the capture too, or the replay would differ.
class CaptureReal : public ::testing::TestWithParam<std::string> {};

TEST_P(CaptureReal, ReplaysToTheSameDump) {
  const fs::path tarball = test::shared_dir() / "fixtures/hwloc/linux" / (GetParam() + ".tar.bz2");
  const test::TempDir dir;
  const auto untar = test::run_command({"tar", "xjf", tarball.string(), "-C", dir.path().string()});
  ASSERT_EQ(untar.exit_code, 0) << tarball << ": " << untar.err;
  const fs::path root = dir.path() / GetParam();
  ASSERT_TRUE(fs::is_directory(root)) << root;
  expect_replays({"--root", root.string()}, dir.path(), "replay");
}

INSTANTIATE_TEST_SUITE_P(Machines, CaptureReal,
                         ::testing::Values("nvidiagpunumanodes", "2pa-pcidomain32bits"),
                         [](const auto& p) { return test_name(p.param); });

TEST(Capture, KeepsLinksAsLinksAndOnlyWhatWasRead) {
  const test::TempDir dir;
  const fs::path built = dir.path() / "built";
  ASSERT_EQ(topo({"mock", "build", "dgx-h100", built.string()}).exit_code, 0);
  const auto captured =
      topo({"capture", "--root", built.string(), "-o", (dir.path() / "c.tar.gz").string()});
  ASSERT_EQ(captured.exit_code, 0) << captured.err;
  ASSERT_EQ(test::run_command(
                {"tar", "xzf", (dir.path() / "c.tar.gz").string(), "-C", dir.path().string()})
                .exit_code,
            0);
  const fs::path replay = dir.path() / "c";
  std::size_t links = 0;
  for (const auto& entry : fs::directory_iterator(replay / "sys/bus/pci/devices")) {
    EXPECT_TRUE(entry.is_symlink()) << entry.path();
    EXPECT_EQ(fs::read_symlink(entry.path()),
              fs::read_symlink(built / "sys/bus/pci/devices" / entry.path().filename()));
    ++links;
  }
  EXPECT_GT(links, 10U);
  // Files a probe lists but never reads (a PCI function's resource and config files where the
  // uevent sufficed) keep their names, not their bytes.
  std::size_t captured_bytes = 0;
  std::size_t built_bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(replay / "sys"))
    captured_bytes += e.is_regular_file() && !e.is_symlink() ? e.file_size() : 0;
  for (const auto& e : fs::recursive_directory_iterator(built / "sys"))
    built_bytes += e.is_regular_file() && !e.is_symlink() ? e.file_size() : 0;
  EXPECT_LT(captured_bytes, built_bytes);
}

TEST(Capture, UnwritableOutputFailsNamingThePath) {
  const test::TempDir dir;
  const fs::path out = dir.path() / "missing/dir/c.tar.gz";
  const auto r = topo({"capture", "--mock", "dgx-h100", "--output", out.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(out.string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Capture, OutputIsRequiredAndHelpListsIt) {
  EXPECT_EQ(topo({"capture", "--mock", "dgx-h100"}).exit_code, 2);
  const auto help = topo({"capture", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* option : {"--root", "--mock", "--output"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option << "\n" << help.out;
  }
}

TEST(Capture, MissingRootFailsNamingIt) {
  const test::TempDir dir;
  const fs::path root = dir.path() / "absent";
  const auto r =
      topo({"capture", "--root", root.string(), "-o", (dir.path() / "c.tar.gz").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(root.string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() / "c.tar.gz"));
}

}  // namespace
}  // namespace nodetopo::agent
