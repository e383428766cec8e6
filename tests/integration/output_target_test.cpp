// Output targets a careless or hostile operator gives `--output`, and `mock build --force` on
// directories that are not mock hosts: nothing that is not a regular file is replaced, nothing
// planted is truncated, nothing foreign deleted, and every refusal names the path.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nodetopo/base/atomic_file.hpp>

#include "test_support.hpp"

namespace nodetopo {
namespace {

namespace fs = std::filesystem;

std::string topo() {
  return (test::build_dir() / "topo").string();
}

class OutputTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() / "root";
    ASSERT_EQ(test::run_command({topo(), "mock", "build", "cpu-only", root_.string()}).exit_code,
              0);
  }
  test::CommandResult dump_to(const std::string& out) {
    return test::run_command(
        {"timeout", "-s", "KILL", "30", topo(), "dump", "--root", root_.string(), "-o", out});
  }
  test::TempDir tmp_;
  fs::path root_;
};

TEST_F(OutputTarget, DashAndDevStdoutAreStandardOutput) {
  for (const char* out : {"-", "/dev/stdout"}) {
    const auto r = dump_to(out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("Machine"), std::string::npos) << out;
  }
  EXPECT_FALSE(fs::exists(fs::current_path() / "-"));
  EXPECT_TRUE(fs::is_symlink("/dev/stdout"));
}

TEST_F(OutputTarget, DeviceNodesAreWrittenInPlaceNeverReplaced) {
  const fs::path null_dev = tmp_.path() / "null";
  const fs::path full_dev = tmp_.path() / "full";
  if (::mknod(null_dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
      ::mknod(full_dev.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0) {
    GTEST_SKIP() << "mknod needs CAP_MKNOD: " << std::strerror(errno);
  }
  auto r = dump_to(null_dev.string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_character_file(null_dev));
  r = dump_to(full_dev.string());
  EXPECT_EQ(r.exit_code, 1) << "a write to /dev/full fails";
  EXPECT_NE(r.err.find(full_dev.string()), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_character_file(full_dev)) << "/dev/full was replaced";
  // And through a link, as /dev/stdout and friends are.
  fs::create_symlink(full_dev, tmp_.path() / "full-link");
  r = dump_to((tmp_.path() / "full-link").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(fs::is_symlink(tmp_.path() / "full-link"));
  EXPECT_TRUE(fs::is_character_file(full_dev));
}

TEST_F(OutputTarget, FifoWithAReaderGetsTheDocumentAndStaysAFifo) {
  const fs::path fifo = tmp_.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo);
    received.assign(std::istreambuf_iterator<char>(in), {});
  });
  // The reader opens first, else the writer would find no reader and refuse.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto r = dump_to(fifo.string());
  reader.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(received.find("Machine"), std::string::npos);
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(OutputTarget, FifoWithoutAReaderIsRefusedNotWaitedOn) {
  const fs::path fifo = tmp_.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto r = dump_to(fifo.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(fifo.string()), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_fifo(fifo));
}

TEST_F(OutputTarget, SymlinkToAFileKeepsTheLinkAndReplacesTheFile) {
  const fs::path file = tmp_.path() / "real.txt";
  test::write_file(file, "old\n");
  fs::create_symlink(file, tmp_.path() / "link.txt");
  const auto r = dump_to((tmp_.path() / "link.txt").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(tmp_.path() / "link.txt"));
  EXPECT_NE(test::read_file(file).find("Machine"), std::string::npos);
}

TEST_F(OutputTarget, DirectoryIsRefusedNamingIt) {
  const auto r = dump_to(tmp_.path().string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(tmp_.path().string()), std::string::npos) << r.err;
}

// The temporary file used to be ".NAME.tmp.PID", opened without O_EXCL: a file or hard link
// planted under that name was truncated and became the output.
TEST(AtomicWriter, PlantedTemporaryNamesAreNeverOpened) {
  test::TempDir tmp;
  const fs::path victim = tmp.path() / "victim";
  test::write_file(victim, "precious\n");
  const fs::path out = tmp.path() / "out.txt";
  const fs::path guessed = tmp.path() / (".out.txt.tmp." + std::to_string(::getpid()));
  fs::create_hard_link(victim, guessed);
  fs::create_symlink(victim, tmp.path() / ".out.txt.tmp");
  ASSERT_TRUE(write_file_atomic(out, "new\n").ok());
  EXPECT_EQ(test::read_file(victim), "precious\n");
  EXPECT_EQ(test::read_file(out), "new\n");
  EXPECT_EQ(fs::hard_link_count(victim), 2U) << "the planted link was touched";
  // No temporary file is left behind.
  int left = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    left += e.path().filename().string().starts_with(".out.txt.tmp.") ? 1 : 0;
  }
  EXPECT_EQ(left, 1) << "only the planted one";
}

// --- mock build --force ------------------------------------------------------------------------

TEST(MockForce, ForeignDirectoryWithAnEmptyMarkerIsNotDeleted) {
  test::TempDir tmp;
  const fs::path dir = tmp.path() / "home";
  test::write_file(dir / "thesis.tex", "years of work\n");
  test::write_file(dir / "nodetopo-mock/manifest.json", "{}");
  auto r = test::run_command({topo(), "mock", "build", "cpu-only", dir.string(), "--force"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(dir.string()), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "thesis.tex"));

  // A real manifest next to foreign files is refused too, naming the foreign entry.
  const fs::path host = tmp.path() / "host";
  ASSERT_EQ(test::run_command({topo(), "mock", "build", "cpu-only", host.string()}).exit_code, 0);
  fs::copy_file(host / "nodetopo-mock/manifest.json", dir / "nodetopo-mock/manifest.json",
                fs::copy_options::overwrite_existing);
  r = test::run_command({topo(), "mock", "build", "cpu-only", dir.string(), "--force"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("thesis.tex"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "thesis.tex"));

  // A previous mock host is replaced.
  r = test::run_command({topo(), "mock", "build", "dgx-h100", host.string(), "--force"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(MockProfile, InvalidUtf8FifoAndDeviceProfilesAreRefusedNamingTheFile) {
  test::TempDir tmp;
  const fs::path bad = tmp.path() / "bad.yaml";
  std::string text;
  {
    std::ifstream in(test::source_dir() / "mock/profiles/cpu-only.yaml");
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::size_t at = text.find("description:");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 13, "\xff\xfe ");
  test::write_file(bad, text);
  auto r =
      test::run_command({topo(), "mock", "build", bad.string(), (tmp.path() / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not valid UTF-8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad.string()), std::string::npos) << r.err;
  const fs::path fifo = tmp.path() / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  r = test::run_command({"timeout", "-s", "KILL", "20", topo(), "dump", "--mock", fifo.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(fifo.string()), std::string::npos) << r.err;
  const fs::path zero = tmp.path() / "zero.yaml";
  if (::mknod(zero.c_str(), S_IFCHR | 0644, makedev(1, 5)) == 0) {
    r = test::run_command({"timeout", "-s", "KILL", "20", topo(), "dump", "--mock", zero.string()});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find(zero.string()), std::string::npos) << r.err;
  }
}

TEST(HostOptions, EmptyRootOrMockIsAUsageError) {
  for (const char* option : {"--root", "--mock"}) {
    const auto r = test::run_command({topo(), "dump", option, ""});
    EXPECT_EQ(r.exit_code, 2) << option << ": " << r.err;
    EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
  }
}

// Standard output gets the JSON model as it is rendered, in pieces (issue 18's peak RSS): a
// model of several pieces is, byte for byte, the file --output writes in one, and a write that
// fails part-way (/dev/full) is an error naming standard output, not a success.
class StreamedDump : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path() / "root";
    ASSERT_EQ(
        test::run_command({topo(), "mock", "build", "synthetic:gpus=8,nics=8", root_.string()})
            .exit_code,
        0);
  }
  test::TempDir tmp_;
  fs::path root_;
};

TEST_F(StreamedDump, StdoutIsTheFileOutputByteForByte) {
  const auto streamed = test::run_command({"timeout", "-s", "KILL", "30", topo(), "dump",
                                           "--format", "json", "--root", root_.string()});
  ASSERT_EQ(streamed.exit_code, 0) << streamed.err;
  EXPECT_GT(streamed.out.size(), 4U * 16 * 1024) << "a model of several 16 KiB pieces";
  const fs::path file = tmp_.path() / "model.json";
  const auto whole = test::run_command({"timeout", "-s", "KILL", "30", topo(), "dump", "--format",
                                        "json", "--root", root_.string(), "-o", file.string()});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(streamed.out, test::read_file(file));
}

TEST_F(StreamedDump, AFailedWriteToStdoutIsAnError) {
  ASSERT_TRUE(fs::is_character_file("/dev/full"));
  const auto r = test::run_command(
      {"sh", "-c", "exec timeout -s KILL 30 \"$0\" dump --format json --root \"$1\" >/dev/full",
       topo(), root_.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("standard output"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("No space left"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodetopo
