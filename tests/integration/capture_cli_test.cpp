// `topo capture` through the built binary: a capture of a mock host or of a real capture unpacks
// with `tar xzf` into a root whose dump equals the original's, byte for byte, text and JSON; it
// holds `topo --version` and the dump; links stay links; a bad output path is named.
#include <cctype>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "captures.hpp"
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

// Real machines (the cases of tests/captures/cases.txt noted `replay`, unpacked here): the CPU
// and NUMA files that hwloc reads on its own are in the capture too, or the replay would differ.
class CaptureReal : public ::testing::TestWithParam<std::string> {};

TEST_P(CaptureReal, ReplaysToTheSameDump) {
  const fs::path tarball = test::capture_tarball(test::capture_case(GetParam()));
  const test::TempDir dir;
  const auto untar = test::run_command({"tar", "xf", tarball.string(), "-C", dir.path().string()});
  ASSERT_EQ(untar.exit_code, 0) << tarball << ": " << untar.err;
  const fs::path root = dir.path() / GetParam();
  ASSERT_TRUE(fs::is_directory(root)) << root;
  expect_replays({"--root", root.string()}, dir.path(), "replay");
}

std::vector<std::string> replayed_machines() {
  std::vector<std::string> names;
  for (const test::CaptureCase& c : test::capture_cases()) {
    if (c.has("replay")) names.push_back(c.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Machines, CaptureReal, ::testing::ValuesIn(replayed_machines()),
                         [](const auto& p) { return test_name(p.param); });

// The case file is data a contributor edits by hand: a bad line must stop the suite with the
// line named, never drop a machine or an oracle exception silently.
TEST(CaptureCases, MalformedLinesNameTheLine) {
  const test::TempDir dir;
  const fs::path file = dir.path() / "cases.txt";
  test::write_file(file,
                   "# comment\n\n  a  a.tar.gz  replay lspci-fails\n"
                   "b shared:hwloc/linux/b.tar.bz2 lstopo-skips-bridge=0000:00:11.0\n");
  const auto cases = test::read_capture_cases(file);
  ASSERT_EQ(cases.size(), 2U);
  EXPECT_TRUE(cases[0].has("replay"));
  EXPECT_TRUE(cases[0].has("lspci-fails"));
  EXPECT_EQ(cases[1].values("lstopo-skips-bridge"), std::vector<std::string>{"0000:00:11.0"});
  for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
           {"a a.tar.gz\nonly-a-name\n", ":2: no tarball after only-a-name"},
           {"a a.tar.gz lspci-fail\n", ":1: unknown note 'lspci-fail'"},
           {"a a.tar.gz\na b.tar.gz\n", ":2: a is listed twice"}}) {
    test::write_file(file, text);
    try {
      (void)test::read_capture_cases(file);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), file.string() + message);
    }
  }
}

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
