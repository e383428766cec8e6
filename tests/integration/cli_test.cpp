// The `topo` command line through the built binary: help, version, exit codes (0 success,
// 1 failure naming the path, 2 usage error) and --output.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "test_support.hpp"

namespace nodetopo::agent {
namespace {

namespace fs = std::filesystem;

test::CommandResult topo(const std::vector<std::string>& args) {
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.push_back((test::build_dir() / "topo").string());
  for (const std::string& a : args)
    argv.push_back(a);
  return test::run_command(argv, {"HOST_ROOT="});
}

// A minimal root: enough for a dump (an empty sys/ and proc/), fast to discover.
class MinimalRoot : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.path() / "root/sys");
    fs::create_directories(dir_.path() / "root/proc");
    root_ = (dir_.path() / "root").string();
  }
  test::TempDir dir_;
  std::string root_;
};

TEST(Cli, HelpExitsZero) {
  const auto r = topo({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dump"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--log-level"), std::string::npos) << r.out;
}

TEST(Cli, DumpHelpExitsZeroAndListsEveryOption) {
  const auto r = topo({"dump", "--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"--root", "--format", "--output"}) {
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing from\n" << r.out;
  }
}

TEST(Cli, VersionExitsZero) {
  const auto r = topo({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("topo (nodetopo) "), std::string::npos) << r.out;
}

TEST(Cli, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases{
      {},                                 // no subcommand
      {"--bogus"},                        // unknown global option
      {"bogus"},                          // unknown subcommand
      {"dump", "--bogus"},                // unknown option of dump
      {"dump", "--format"},               // missing value
      {"dump", "--format", "bogus"},      // value not allowed
      {"--log-level", "loud", "dump"},    // value not allowed
      {"--log-format", "xml", "dump"},    // value not allowed
      {"dump", "--root", "a", "--root"},  // missing value again
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args)
      joined += a + " ";
    SCOPED_TRACE("topo " + joined);
    const auto r = topo(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(r.err.empty()) << "a usage error says what is wrong";
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(Cli, BadFormatNamesTheValue) {
  const auto r = topo({"dump", "--format", "bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--format"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
}

TEST_F(MinimalRoot, OutputWritesTheFileAndNothingToStdout) {
  const std::string file = (dir_.path() / "out.json").string();
  const auto r = topo({"dump", "--root", root_, "--format", "json", "--output", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  const auto stdout_run = topo({"dump", "--root", root_, "--format", "json"});
  ASSERT_EQ(stdout_run.exit_code, 0) << stdout_run.err;
  EXPECT_EQ(test::read_file(file), stdout_run.out);
  EXPECT_NE(stdout_run.out.find("\"schema_version\": 1"), std::string::npos);

  const auto short_option = topo({"dump", "--root", root_, "-o", file});
  ASSERT_EQ(short_option.exit_code, 0) << short_option.err;
  EXPECT_TRUE(test::read_file(file).starts_with("Machine")) << "text is the default format";
}

TEST_F(MinimalRoot, OutputIntoAMissingDirectoryExitsOneNamingIt) {
  const fs::path missing = dir_.path() / "no-such-dir";
  const auto r = topo({"dump", "--root", root_, "--output", (missing / "out.txt").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(missing.string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(MinimalRoot, OutputUnderAFileExitsOneNamingIt) {
  const fs::path file = dir_.path() / "plain-file";
  test::write_file(file, "x");
  const auto r = topo({"dump", "--root", root_, "--output", (file / "out.txt").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
  EXPECT_EQ(test::read_file(file), "x");
}

TEST_F(MinimalRoot, OutputIntoAnUnwritableDirectoryExitsOneNamingIt) {
  // procfs refuses new files to everyone, root included.
  const auto r = topo({"dump", "--root", root_, "--output", "/proc/self/nodetopo-out.txt"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("/proc/self/"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nodetopo-out.txt"), std::string::npos) << r.err;

  if (::geteuid() != 0) {  // permission bits bind only unprivileged users
    const fs::path ro = dir_.path() / "read-only";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    const auto denied = topo({"dump", "--root", root_, "--output", (ro / "out.txt").string()});
    EXPECT_EQ(denied.exit_code, 1) << denied.err;
    EXPECT_NE(denied.err.find(ro.string()), std::string::npos) << denied.err;
    fs::permissions(ro, fs::perms::owner_all);
  }
}

TEST_F(MinimalRoot, JsonLogFormatKeepsStdoutClean) {
  const auto r = topo(
      {"--log-level", "info", "--log-format", "json", "dump", "--root", root_, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("{\n  \"schema_version\"")) << "logs go to stderr only";
  // Every line on stderr is one JSON object: hwloc, which prints its critical errors itself
  // ("[hwloc/linux] failed to find sysfs cpu topology directory ..." on this empty root), is
  // silenced in JSON mode.
  std::istringstream lines(r.err);
  std::string line;
  int ours = 0;
  while (std::getline(lines, line)) {
    ++ours;
    EXPECT_TRUE(line.starts_with("{\"time\":\"") && line.ends_with("\"}")) << line;
  }
  EXPECT_GE(ours, 1) << "the failed CPU probe is logged: " << r.err;
}

}  // namespace
}  // namespace nodetopo::agent
