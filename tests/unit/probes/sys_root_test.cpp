// SysRoot on hand-made trees: symlinks resolved inside the root the way sysfs' relative links are
// meant to be read, escapes and loops refused with the path named, attribute reads and caching.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "path_walks.hpp"
#include "test_support.hpp"

namespace nodetopo::probes {
namespace {

namespace fs = std::filesystem;
using test::make_symlink;
using test::TempDir;
using test::write_file;

// A root with one PCI function linked the way the kernel links it.
class SysRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_ = "sys/devices/pci0000:00/0000:00:01.0";
    write_file(dir_.path() / dev_ / "vendor", "0x8086\n");
    write_file(dir_.path() / dev_ / "class", "  0x060400 \n\n");
    write_file(dir_.path() / dev_ / "numa_node", "-1\n");
    make_symlink("../../../devices/pci0000:00/0000:00:01.0",
                 dir_.path() / "sys/bus/pci/devices/0000:00:01.0");
    fs::create_directories(dir_.path() / "proc");
  }

  [[nodiscard]] SysRoot open(SysRoot::Liveness liveness = SysRoot::Liveness::kAuto) const {
    auto root = SysRoot::open(dir_.path(), liveness, walk_);
    EXPECT_TRUE(root.ok()) << (root.ok() ? "" : root.error().describe());
    return std::move(root).value();
  }

  [[nodiscard]] std::string host(const std::string& rel) const {
    return (dir_.path() / rel).string();
  }

  TempDir dir_;
  std::string dev_;
  SysRoot::PathWalk walk_ = SysRoot::PathWalk::kKernelChecked;
};

// Path semantics must not depend on how the path is walked: every such test runs with the
// kernel-checked fast path and with the user-space walk alone (kernels without openat2).
class SysRootWalkTest : public SysRootTest,
                        public ::testing::WithParamInterface<SysRoot::PathWalk> {
 protected:
  void SetUp() override {
    SysRootTest::SetUp();
    walk_ = GetParam();
  }
};

INSTANTIATE_TEST_SUITE_P(Walks, SysRootWalkTest, test::all_path_walks(), test::path_walk_name);

// ---------------------------------------------------------------------------------------------
// open

TEST_P(SysRootWalkTest, OpenNormalisesThePathAndIsNotLive) {
  auto root = SysRoot::open(dir_.path() / "sys" / ".." / "");
  ASSERT_TRUE(root.ok()) << root.error().describe();
  EXPECT_EQ(root->path(), dir_.path());
  EXPECT_FALSE(root->is_live());
  EXPECT_TRUE(SysRoot::open(dir_.path(), SysRoot::Liveness::kLive)->is_live());
}

TEST(SysRootOpen, MissingSysFailsNamingDirSys) {
  TempDir dir;
  fs::create_directories(dir.path() / "proc");
  auto root = SysRoot::open(dir.path());
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(root.error().path, (dir.path() / "sys").string());
  EXPECT_NE(root.error().describe().find((dir.path() / "sys").string()), std::string::npos);
  EXPECT_NE(root.error().message.find("--root"), std::string::npos) << "says what to do";
}

TEST(SysRootOpen, SysThatIsAFileIsRefused) {
  TempDir dir;
  write_file(dir.path() / "sys", "not a directory");
  auto root = SysRoot::open(dir.path());
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().path, (dir.path() / "sys").string());
}

TEST(SysRootOpen, NonexistentRootNamesIt) {
  TempDir dir;
  const fs::path missing = dir.path() / "no-such-root";
  auto root = SysRoot::open(missing);
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(root.error().path, missing.string());
}

TEST(SysRootOpen, RootThatIsAFileIsInvalid) {
  TempDir dir;
  write_file(dir.path() / "file", "x");
  auto root = SysRoot::open(dir.path() / "file");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(root.error().path, (dir.path() / "file").string());
}

TEST(SysRootOpen, EmptyPathIsInvalid) {
  auto root = SysRoot::open("");
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().code, ErrorCode::kInvalid);
}

TEST(SysRootOpen, SlashIsLiveByDefault) {
  auto root = SysRoot::open("/");
  ASSERT_TRUE(root.ok()) << root.error().describe();
  EXPECT_TRUE(root->is_live());
  EXPECT_EQ(root->host_path("sys/bus/pci"), "/sys/bus/pci");
  EXPECT_FALSE(SysRoot::open("/", SysRoot::Liveness::kCapture)->is_live());
}

// ---------------------------------------------------------------------------------------------
// paths

TEST_P(SysRootWalkTest, HostPathAndRelativeAreInverse) {
  const SysRoot root = open();
  const std::string full = root.host_path("sys/bus/pci");
  EXPECT_EQ(full, host("sys/bus/pci"));
  EXPECT_EQ(root.host_path("/sys/bus/pci"), full) << "a leading '/' is still root-relative";
  EXPECT_EQ(root.host_path(""), dir_.path().string());
  EXPECT_EQ(root.relative(full), "sys/bus/pci");
  EXPECT_EQ(root.relative("/elsewhere/sys"), "/elsewhere/sys");
}

// ---------------------------------------------------------------------------------------------
// resolve

TEST_P(SysRootWalkTest, RelativeSymlinksResolveInsideTheRoot) {
  const SysRoot root = open();
  auto resolved = root.resolve("sys/bus/pci/devices/0000:00:01.0");
  ASSERT_TRUE(resolved.ok()) << resolved.error().describe();
  EXPECT_EQ(resolved.value(), dev_);
  EXPECT_EQ(root.resolve("sys/bus/pci/devices/0000:00:01.0/vendor").value(), dev_ + "/vendor");
  EXPECT_EQ(root.resolve("sys/./bus//pci/devices/").value(), "sys/bus/pci/devices");
  EXPECT_EQ(root.resolve("").value(), "");
}

TEST_P(SysRootWalkTest, ChainedAndNestedLinksResolve) {
  // sys/class/x -> ../bus/pci/devices/0000:00:01.0 -> ../../../devices/...
  make_symlink("../bus/pci/devices/0000:00:01.0", dir_.path() / "sys/class/x");
  make_symlink("x/vendor", dir_.path() / "sys/class/vendor_of_x");
  const SysRoot root = open();
  EXPECT_EQ(root.resolve("sys/class/x").value(), dev_);
  EXPECT_EQ(root.resolve("sys/class/vendor_of_x").value(), dev_ + "/vendor");
  EXPECT_EQ(root.read_attr("sys/class/vendor_of_x").value(), "0x8086");
}

TEST_P(SysRootWalkTest, DotDotAfterALinkIsPhysical) {
  // Like the kernel: ".." after a symlinked directory leaves the link's target, not the link.
  const SysRoot root = open();
  EXPECT_EQ(root.resolve("sys/bus/pci/devices/0000:00:01.0/..").value(), "sys/devices/pci0000:00");
}

TEST_P(SysRootWalkTest, DotDotAboveTheRootIsRefused) {
  const SysRoot root = open();
  for (const char* rel : {"..", "../etc/passwd", "sys/../..", "sys/bus/../../../x"}) {
    SCOPED_TRACE(rel);
    auto resolved = root.resolve(rel);
    ASSERT_FALSE(resolved.ok());
    EXPECT_EQ(resolved.error().code, ErrorCode::kEscapesRoot);
    EXPECT_NE(resolved.error().path.find(dir_.path().string()), std::string::npos);
  }
  auto read = root.read_file("../" + dir_.path().filename().string() + "/sys/bus/pci/x");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kEscapesRoot);
}

TEST_P(SysRootWalkTest, RelativeLinkClimbingOutOfTheRootIsRefused) {
  // Five ".." climb from sys/bus/pci/devices above the root, then back down to a real file
  // beside it: what a naive join-and-open would happily read.
  write_file(dir_.path().parent_path() / (dir_.path().filename().string() + "-outside"), "secret");
  make_symlink("../../../../../" + dir_.path().filename().string() + "-outside",
               dir_.path() / "sys/bus/pci/devices/evil");
  const SysRoot root = open();
  auto resolved = root.resolve("sys/bus/pci/devices/evil");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().code, ErrorCode::kEscapesRoot);
  auto read = root.read_attr("sys/bus/pci/devices/evil");
  ASSERT_FALSE(read.ok()) << "read a file outside the root: " << read.value();
  EXPECT_EQ(read.error().code, ErrorCode::kEscapesRoot);
  fs::remove(dir_.path().parent_path() / (dir_.path().filename().string() + "-outside"));
}

TEST_P(SysRootWalkTest, AbsoluteLinksAreRefusedInACapture) {
  make_symlink("/etc", dir_.path() / "sys/bus/pci/devices/abs_dir");
  make_symlink("/etc/hostname", dir_.path() / "sys/bus/pci/devices/abs_file");
  const SysRoot root = open();
  ASSERT_FALSE(root.is_live());
  auto dir = root.resolve("sys/bus/pci/devices/abs_dir/hostname");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().code, ErrorCode::kEscapesRoot);
  EXPECT_EQ(dir.error().path, host("sys/bus/pci/devices/abs_dir")) << "names the link";
  EXPECT_NE(dir.error().message.find("/etc"), std::string::npos) << "quotes the target";

  auto file = root.read_file("sys/bus/pci/devices/abs_file");
  ASSERT_FALSE(file.ok()) << "read the host's /etc/hostname through a capture";
  EXPECT_EQ(file.error().code, ErrorCode::kEscapesRoot);
  auto listed = root.list_dir("sys/bus/pci/devices/abs_dir");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::kEscapesRoot);
  EXPECT_FALSE(root.exists("sys/bus/pci/devices/abs_file"));
}

TEST_P(SysRootWalkTest, AbsoluteLinksInALiveRootStayUnderTheRoot) {
  // HOST_ROOT=/host: the host's absolute link /sys/devices/... means /host/sys/devices/...
  make_symlink("/" + dev_, dir_.path() / "sys/class/abs");
  const SysRoot root = open(SysRoot::Liveness::kLive);
  ASSERT_TRUE(root.is_live());
  EXPECT_EQ(root.resolve("sys/class/abs").value(), dev_);
  EXPECT_EQ(root.read_attr("sys/class/abs/vendor").value(), "0x8086");
}

TEST_P(SysRootWalkTest, SymlinkLoopsAreRefused) {
  make_symlink("b", dir_.path() / "sys/loop/a");
  make_symlink("a", dir_.path() / "sys/loop/b");
  make_symlink("self", dir_.path() / "sys/loop/self");
  make_symlink("grow/x", dir_.path() / "sys/loop/grow");
  const SysRoot root = open();
  for (const char* rel : {"sys/loop/a", "sys/loop/self", "sys/loop/grow", "sys/loop/a/file"}) {
    SCOPED_TRACE(rel);
    auto resolved = root.resolve(rel);
    ASSERT_FALSE(resolved.ok());
    EXPECT_EQ(resolved.error().code, ErrorCode::kSymlinkLoop);
    EXPECT_EQ(resolved.error().path, host(rel));
  }
  auto read = root.read_attr("sys/loop/a");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code, ErrorCode::kSymlinkLoop);
  auto listed = root.list_dir("sys/loop/self");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, ErrorCode::kSymlinkLoop);
}

TEST_P(SysRootWalkTest, LongButFiniteChainsResolve) {
  // 30 hops stay below the kernel's limit of 40.
  write_file(dir_.path() / "sys/chain/end", "ok\n");
  std::string prev = "end";
  for (int i = 0; i < 30; ++i) {
    const std::string name = "l" + std::to_string(i);
    make_symlink(prev, dir_.path() / "sys/chain" / name);
    prev = name;
  }
  const SysRoot root = open();
  EXPECT_EQ(root.read_attr("sys/chain/" + prev).value(), "ok");
}

TEST_P(SysRootWalkTest, MissingPathsAreNotFoundAndNamed) {
  const SysRoot root = open();
  auto resolved = root.resolve("sys/bus/usb/devices");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(resolved.error().path, host("sys/bus/usb"));

  auto dangling_target = root.read_attr("sys/bus/pci/devices/0000:00:01.0/missing_attr");
  ASSERT_FALSE(dangling_target.ok());
  EXPECT_EQ(dangling_target.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(dangling_target.error().path, host("sys/bus/pci/devices/0000:00:01.0/missing_attr"));

  make_symlink("../nowhere", dir_.path() / "sys/dangling");
  EXPECT_EQ(root.resolve("sys/dangling").error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(root.exists("sys/dangling"));
  EXPECT_TRUE(root.exists("sys/bus/pci/devices/0000:00:01.0/vendor"));
}

// exists() answers a plain path with one kernel-checked open and resolves the rest in full: the
// two ways agree on every kind of path.
TEST_P(SysRootWalkTest, ExistsAgreesWithResolveOnPlainPathsAndLinks) {
  make_symlink("b", dir_.path() / "sys/loop/a");
  make_symlink("a", dir_.path() / "sys/loop/b");
  make_symlink("/etc", dir_.path() / "sys/abs");
  make_symlink("../nowhere", dir_.path() / "sys/dangling");
  const SysRoot root = open();
  for (const char* rel :
       {"sys", "sys/devices/pci0000:00/0000:00:01.0/vendor", "sys/bus/pci/devices/0000:00:01.0",
        "sys/bus/pci/devices/0000:00:01.0/vendor", "sys/nope", "sys/nope/deeper",
        "sys/devices/pci0000:00/0000:00:01.0/vendor/deeper", "sys/loop/a", "sys/abs",
        "sys/dangling", "../outside", "/sys"}) {
    SCOPED_TRACE(rel);
    EXPECT_EQ(root.exists(rel), root.resolve(rel).ok());
  }
  EXPECT_TRUE(root.exists("sys/bus/pci/devices/0000:00:01.0"));
  EXPECT_FALSE(root.exists("sys/devices/pci0000:00/0000:00:01.0/vendor/deeper"));
}

TEST_P(SysRootWalkTest, FileInsteadOfDirectoryIsNotFound) {
  const SysRoot root = open();
  auto resolved = root.resolve("sys/bus/pci/devices/0000:00:01.0/vendor/deeper");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().code, ErrorCode::kNotFound);
}

// ---------------------------------------------------------------------------------------------
// reading

TEST_P(SysRootWalkTest, ReadAttrTrimsWhitespaceAndNuls) {
  write_file(dir_.path() / dev_ / "label", std::string("\t board \0\0", 10));
  write_file(dir_.path() / dev_ / "empty", "\n");
  const SysRoot root = open();
  EXPECT_EQ(root.read_attr("sys/bus/pci/devices/0000:00:01.0/class").value(), "0x060400");
  EXPECT_EQ(root.read_attr("sys/bus/pci/devices/0000:00:01.0/label").value(), "board");
  EXPECT_EQ(root.read_attr("sys/bus/pci/devices/0000:00:01.0/empty").value(), "");
}

TEST_P(SysRootWalkTest, ReadFileKeepsContentAndHonoursTheLimit) {
  const SysRoot root = open();
  EXPECT_EQ(root.read_file("sys/bus/pci/devices/0000:00:01.0/class").value(), "  0x060400 \n\n");
  EXPECT_EQ(root.read_file("sys/bus/pci/devices/0000:00:01.0/class", 4).value(), "  0x");
  const std::string big(100000, 'x');
  write_file(dir_.path() / "sys/big", big);
  EXPECT_EQ(root.read_file("sys/big").value().size(), 65536U);
  EXPECT_EQ(root.read_file("sys/big", 200000).value(), big);
}

TEST_P(SysRootWalkTest, ReadFileFollowsALinkAsLastComponent) {
  make_symlink("../bus/pci/devices/0000:00:01.0/vendor", dir_.path() / "sys/class/vendor_link");
  const SysRoot root = open();
  EXPECT_EQ(root.read_attr("sys/class/vendor_link").value(), "0x8086");
}

TEST_P(SysRootWalkTest, ReadingADirectoryIsAnErrorNamingIt) {
  const SysRoot root = open();
  auto read = root.read_file("sys/bus/pci/devices/0000:00:01.0");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().path, host("sys/bus/pci/devices/0000:00:01.0"));
}

TEST_P(SysRootWalkTest, ReadingAFifoDoesNotBlock) {
  // A FIFO planted in a capture: open() without O_NONBLOCK would wait for a writer forever.
  ASSERT_EQ(::mkfifo((dir_.path() / dev_ / "fifo").c_str(), 0600), 0);
  const SysRoot root = open();
  auto read = root.read_attr("sys/bus/pci/devices/0000:00:01.0/fifo");
  if (read.ok()) {
    EXPECT_EQ(read.value(), "");  // no writer: end of file at once
  }
}

TEST_P(SysRootWalkTest, SysDirReadsOnlyRegularFilesAndResolvesLinksThroughTheRoot) {
  ASSERT_EQ(::mkfifo((dir_.path() / dev_ / "fifo").c_str(), 0600), 0);
  make_symlink("/etc/hostname", dir_.path() / dev_ / "abs");
  make_symlink("vendor", dir_.path() / dev_ / "vendor_link");
  std::filesystem::create_directories(dir_.path() / dev_ / "subdir");
  const SysRoot root = open();
  auto dir = root.open_dir("sys/bus/pci/devices/0000:00:01.0");
  ASSERT_TRUE(dir.ok()) << dir.error().describe();
  EXPECT_EQ(dir->rel(), dev_) << "opened through the device link";
  EXPECT_EQ(dir->read_attr("vendor").value(), "0x8086");
  EXPECT_EQ(dir->read_attr("vendor_link").value(), "0x8086") << "links inside are fine";
  auto fifo = dir->read_file("fifo");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(fifo.error().path, host(dev_ + "/fifo"));
  EXPECT_EQ(dir->read_file("subdir").error().code, ErrorCode::kInvalid) << "a directory";
  EXPECT_EQ(dir->read_file("abs").error().code, ErrorCode::kEscapesRoot);
  EXPECT_EQ(dir->read_file("missing").error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(dir->has("vendor"));
  EXPECT_FALSE(dir->has("missing"));
  EXPECT_EQ(dir->read_link("vendor_link").value(), "vendor");
  EXPECT_EQ(dir->read_link("vendor").error().code, ErrorCode::kInvalid) << "not a link";
  EXPECT_EQ(dir->link_if_present("vendor_link"), std::optional<std::string>("vendor"));
  EXPECT_EQ(dir->link_if_present("vendor"), std::nullopt) << "not a link";
  EXPECT_EQ(dir->link_if_present("missing"), std::nullopt);
}

TEST_P(SysRootWalkTest, SysDirOpensOnlyRegularFilesForReadsAtOffsets) {
  write_file(dir_.path() / dev_ / "config", "0123456789");
  ASSERT_EQ(::mkfifo((dir_.path() / dev_ / "fifo").c_str(), 0600), 0);
  make_symlink("config", dir_.path() / dev_ / "config_link");
  const SysRoot root = open();
  auto dir = root.open_dir("sys/bus/pci/devices/0000:00:01.0");
  ASSERT_TRUE(dir.ok()) << dir.error().describe();
  auto file = dir->open_file("config");
  ASSERT_TRUE(file.ok()) << file.error().describe();
  std::array<std::uint8_t, 4> buf{};
  EXPECT_EQ(file->read_at(6, buf).value(), 4U);
  EXPECT_EQ(std::string(buf.begin(), buf.end()), "6789");
  EXPECT_EQ(file->read_at(8, buf).value(), 2U) << "short at the end";
  EXPECT_EQ(file->read_at(64, buf).value(), 0U) << "nothing past it";
  // Moved, it still reads; the moved-from object closes nothing.
  SysFile moved = std::move(file.value());
  EXPECT_EQ(moved.read_at(0, buf).value(), 4U);
  EXPECT_EQ(moved.read_up_to(4).value(), "0123");
  EXPECT_EQ(moved.read_up_to(100).value(), "0123456789") << "from the start again";
  auto fifo = dir->open_file("fifo");
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(fifo.error().path, host(dev_ + "/fifo"));
  EXPECT_EQ(dir->open_file("config_link").error().code, ErrorCode::kInvalid)
      << "a link is left to read_file(), which resolves it through the root";
  EXPECT_EQ(dir->open_file("missing").error().code, ErrorCode::kNotFound);
}

// read_file_below() reads a file some plain components down with one open, and leaves all it
// cannot vouch for to the caller's read by path: a link on the way or at the end, a climb out, a
// FIFO, a missing file, and every path when the kernel does not check paths (the user-space
// walk, or a kernel without openat2).
TEST_P(SysRootWalkTest, SysDirReadsBelowOnlyWhatTheKernelChecked) {
  write_file(dir_.path() / dev_ / "sub/inner/value", "42\n");
  ASSERT_EQ(::mkfifo((dir_.path() / dev_ / "sub/fifo").c_str(), 0600), 0);
  make_symlink("inner", dir_.path() / dev_ / "sub/inner_link");
  make_symlink("inner/value", dir_.path() / dev_ / "sub/value_link");
  const SysRoot root = open();
  auto dir = root.open_dir("sys/bus/pci/devices/0000:00:01.0");
  ASSERT_TRUE(dir.ok()) << dir.error().describe();
  const auto value = dir->read_file_below("sub/inner/value");
  if (root.checks_paths_in_kernel()) {
    ASSERT_TRUE(value.has_value());
    EXPECT_EQ(*value, "42\n");
  } else {
    EXPECT_FALSE(value.has_value()) << "without the kernel's checks, nothing";
  }
  if (walk_ == SysRoot::PathWalk::kUserSpace) {
    EXPECT_FALSE(root.checks_paths_in_kernel());
  }
  EXPECT_FALSE(dir->read_file_below("sub/inner_link/value")) << "a link on the way";
  EXPECT_FALSE(dir->read_file_below("sub/value_link")) << "a link at the end";
  EXPECT_FALSE(dir->read_file_below("sub/fifo")) << "not a regular file";
  EXPECT_FALSE(dir->read_file_below("sub/missing"));
  EXPECT_FALSE(dir->read_file_below("../0000:00:01.0/sub/inner/value")) << "climbs out";
  EXPECT_FALSE(dir->read_file_below("sub/./inner/value")) << "not plain components";
  EXPECT_FALSE(dir->read_file_below((dir_.path() / dev_ / "sub/inner/value").string()))
      << "an absolute path";
  // What the path read then gives: the link resolved through the root.
  EXPECT_EQ(root.read_file("sys/bus/pci/devices/0000:00:01.0/sub/value_link").value(), "42\n");
}

// ---------------------------------------------------------------------------------------------
// directories and links

TEST_P(SysRootWalkTest, ListDirIsSortedWithoutDots) {
  for (const char* name : {"numa_node", "b", "a", "0000:00:02.0", "Z"}) {
    write_file(dir_.path() / dev_ / "sub" / name, "");
  }
  const SysRoot root = open();
  auto names = root.list_dir("sys/bus/pci/devices/0000:00:01.0/sub");
  ASSERT_TRUE(names.ok()) << names.error().describe();
  EXPECT_EQ(names.value(), (std::vector<std::string>{"0000:00:02.0", "Z", "a", "b", "numa_node"}));
  fs::create_directories(dir_.path() / "sys/empty");
  auto empty = root.list_dir("sys/empty");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_P(SysRootWalkTest, ListDirOfMissingOrFileFails) {
  const SysRoot root = open();
  auto missing = root.list_dir("sys/bus/usb/devices");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto file = root.list_dir("sys/bus/pci/devices/0000:00:01.0/vendor");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().path, host("sys/bus/pci/devices/0000:00:01.0/vendor"));
}

TEST_P(SysRootWalkTest, ReadLinkReturnsTheStoredTarget) {
  make_symlink("../../../bus/pci/drivers/pcieport", dir_.path() / dev_ / "driver");
  const SysRoot root = open();
  EXPECT_EQ(root.read_link("sys/bus/pci/devices/0000:00:01.0").value(),
            "../../../devices/pci0000:00/0000:00:01.0");
  // The parents are resolved, the link itself is not followed (its target need not exist).
  EXPECT_EQ(root.read_link("sys/bus/pci/devices/0000:00:01.0/driver").value(),
            "../../../bus/pci/drivers/pcieport");
  auto not_link = root.read_link("sys/bus/pci/devices/0000:00:01.0/vendor");
  ASSERT_FALSE(not_link.ok());
  EXPECT_EQ(not_link.error().code, ErrorCode::kInvalid);
  auto missing = root.read_link("sys/bus/pci/devices/0000:00:01.0/physfn");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

// ---------------------------------------------------------------------------------------------
// caching

TEST_F(SysRootTest, SecondReadUnderTheSamePrefixDoesNotLookUpAgain) {
  walk_ = SysRoot::PathWalk::kUserSpace;
  const SysRoot root = open();
  const SysRoot::Stats start = root.stats();
  EXPECT_EQ(start.readlinks, 0U);

  // Each path component is looked up once (one readlink: a link's target, or EINVAL for a
  // directory), then cached.
  ASSERT_TRUE(root.read_attr("sys/bus/pci/devices/0000:00:01.0/vendor").ok());
  const SysRoot::Stats first = root.stats();
  EXPECT_GE(first.readlinks, 5U) << "sys, bus, pci, devices, the device link, its target";
  EXPECT_EQ(first.lstats, 0U);
  EXPECT_EQ(first.opens, 1U);

  // Same directory prefix: no lookup, one more open each.
  ASSERT_TRUE(root.read_attr("sys/bus/pci/devices/0000:00:01.0/class").ok());
  ASSERT_TRUE(root.read_attr("sys/bus/pci/devices/0000:00:01.0/numa_node").ok());
  const SysRoot::Stats second = root.stats();
  EXPECT_EQ(second.lstats, first.lstats);
  EXPECT_EQ(second.readlinks, first.readlinks);
  EXPECT_EQ(second.opens, first.opens + 2);

  // Listing the same directory twice costs two directory reads but no lookups.
  ASSERT_TRUE(root.list_dir("sys/bus/pci/devices/0000:00:01.0").ok());
  const SysRoot::Stats third = root.stats();
  ASSERT_TRUE(root.list_dir("sys/bus/pci/devices/0000:00:01.0").ok());
  const SysRoot::Stats fourth = root.stats();
  EXPECT_EQ(fourth.lstats, third.lstats);
  EXPECT_EQ(fourth.dir_lists, third.dir_lists + 1);
}

// A path without symlinks costs one kernel-checked open and no lookup; a path through a link
// falls back to the walk, whose results are cached as before.
TEST_F(SysRootTest, CanonicalPathsAreOpenedWithoutLookups) {
  const SysRoot root = open();
  ASSERT_TRUE(root.read_attr(dev_ + "/vendor").ok());
  ASSERT_TRUE(root.read_attr(dev_ + "/class").ok());
  auto dir = root.open_canonical_dir(dev_);
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->rel(), dev_);
  SysRoot::Stats stats = root.stats();
  EXPECT_EQ(stats.readlinks, 0U);
  EXPECT_EQ(stats.opens, 3U);

  // Not canonical: through a link, with "..", or absent. The caller resolves those.
  EXPECT_FALSE(root.open_canonical_dir("sys/bus/pci/devices/0000:00:01.0").has_value());
  EXPECT_FALSE(root.open_canonical_dir(dev_ + "/../0000:00:01.0").has_value());
  EXPECT_FALSE(root.open_canonical_dir("sys/devices/pci0000:00/0000:00:02.0").has_value());
  EXPECT_FALSE(root.open_canonical_dir(dev_ + "/vendor").has_value()) << "a file";

  ASSERT_TRUE(root.read_attr("sys/bus/pci/devices/0000:00:01.0/vendor").ok());
  stats = root.stats();
  EXPECT_GE(stats.readlinks, 5U) << "the link path took the user-space walk";
}

TEST_F(SysRootTest, UserSpaceWalkNeverOpensCanonicalDirectoriesDirectly) {
  walk_ = SysRoot::PathWalk::kUserSpace;
  const SysRoot root = open();
  EXPECT_FALSE(root.open_canonical_dir(dev_).has_value());
  auto dir = root.open_dir(dev_);
  ASSERT_TRUE(dir.ok()) << dir.error().describe();
  EXPECT_EQ(dir->rel(), dev_);
}

TEST_F(SysRootTest, CopiesShareTheCache) {
  const SysRoot root = open();
  ASSERT_TRUE(root.resolve("sys/bus/pci/devices/0000:00:01.0").ok());
  const SysRoot copy = root;  // NOLINT(performance-unnecessary-copy-initialization)
  const std::size_t before = copy.stats().lstats;
  ASSERT_TRUE(copy.resolve("sys/bus/pci/devices/0000:00:01.0").ok());
  EXPECT_EQ(copy.stats().lstats, before);
}

}  // namespace
}  // namespace nodetopo::probes
