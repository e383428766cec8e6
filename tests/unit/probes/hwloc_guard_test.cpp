// HwlocGuard's modes on a hand-made root: opens of per-CPU cache descriptions answered ENOENT
// without a system call when skipping (on "/" too, where nothing is contained), every other path
// opened as before, and nothing skipped by a guard that was not asked to skip.
#include "cpu/hwloc_guard.hpp"

#include <cerrno>
#include <optional>
#include <string>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/probes/sys_root.hpp>

#include "test_support.hpp"

namespace nodetopo::probes::detail {
namespace {

using test::TempDir;
using test::write_file;

// What an openat of `rel` relative to `dirfd` gives: the errno, or 0 when it opened.
int open_errno(int dirfd, const char* rel) {
  errno = 0;
  const int fd = ::openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return 0;
  }
  return errno;
}

class HwlocGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* dir : {"sys/devices/system/cpu", "sys/bus/cpu/devices"}) {
      const std::string cpu = std::string(dir) + "/cpu12";
      write_file(dir_.path() / cpu / "cache/index0/shared_cpu_map", "00001000\n");
      write_file(dir_.path() / cpu / "topology/core_id", "6\n");
    }
    write_file(dir_.path() / "sys/devices/system/cpu/cpufreq/boost", "1\n");
    write_file(dir_.path() / "sys/devices/system/cpu/cpu12cache/x", "1\n");
    write_file(dir_.path() / "sys/devices/system/cpu/cpu/cache/x", "1\n");
    root_fd_ = ::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(root_fd_, 0);
    auto opened = SysRoot::open(dir_.path(), SysRoot::Liveness::kCapture);
    ASSERT_TRUE(opened.ok());
    root_.emplace(std::move(opened.value()));
  }
  void TearDown() override {
    if (root_fd_ >= 0) ::close(root_fd_);
  }

  TempDir dir_;
  int root_fd_ = -1;
  std::optional<SysRoot> root_;
};

TEST_F(HwlocGuardTest, SkipsCacheDescriptionsAndOpensEverythingElse) {
  for (const bool contain : {true, false}) {
    SCOPED_TRACE(contain ? "containing guard" : "skipping only (the root /)");
    HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = contain, .skip_cache_descriptions = true});
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map"),
              ENOENT);
    EXPECT_EQ(open_errno(root_fd_, "sys/bus/cpu/devices/cpu12/cache/index0/shared_cpu_map"),
              ENOENT);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache"), ENOENT);
    struct stat st {};
    EXPECT_NE(::fstatat(root_fd_, "sys/devices/system/cpu/cpu12/cache", &st, 0), 0);
    EXPECT_EQ(::faccessat(root_fd_, "sys/devices/system/cpu/cpu12/cache", R_OK, 0), -1);
    EXPECT_EQ(guard.skipped_calls(), 5U);
    // Not cache descriptions: read as hwloc asks.
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/topology/core_id"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/bus/cpu/devices/cpu12/topology/core_id"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpufreq/boost"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12cache/x"), 0);
    EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu/cache/x"), 0);
    EXPECT_EQ(guard.skipped_calls(), 5U);
    EXPECT_EQ(guard.guarded_calls() > 0, contain);
  }
}

// On "/" hwloc opens absolute paths with descriptor -1: a guard that contains nothing skips by
// the path; a containing one leaves such calls (not on its root descriptor) to libc.
TEST_F(HwlocGuardTest, SkipsAbsoluteCachePathsOnlyWhenContainingNothing) {
  const std::string cache =
      (dir_.path() / "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map").string();
  const std::string core = (dir_.path() / "sys/devices/system/cpu/cpu12/topology/core_id").string();
  {
    HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = false, .skip_cache_descriptions = true});
    EXPECT_EQ(open_errno(-1, cache.c_str()), ENOENT);
    EXPECT_EQ(open_errno(-1, core.c_str()), 0);
    EXPECT_EQ(guard.skipped_calls(), 1U);
  }
  HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .skip_cache_descriptions = true});
  EXPECT_EQ(open_errno(-1, cache.c_str()), 0);
  EXPECT_EQ(guard.skipped_calls(), 0U);
}

TEST_F(HwlocGuardTest, ReadsCacheDescriptionsUnlessAskedToSkip) {
  HwlocGuard guard(*root_);
  EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map"), 0);
  EXPECT_EQ(guard.skipped_calls(), 0U);
  EXPECT_GT(guard.guarded_calls(), 0U);
}

TEST_F(HwlocGuardTest, OtherDescriptorsAreNotSkipped) {
  // A descriptor of another directory than the root: the guard leaves its calls to libc.
  const int cpu_fd =
      ::open((dir_.path() / "sys/devices/system").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(cpu_fd, 0);
  HwlocGuard guard(*root_, HwlocGuard::Mode{.contain = true, .skip_cache_descriptions = true});
  EXPECT_EQ(open_errno(cpu_fd, "cpu/cpu12/cache/index0/shared_cpu_map"), 0);
  // The root identified once, then by its number: the other descriptor still is not it.
  EXPECT_EQ(open_errno(root_fd_, "sys/devices/system/cpu/cpu12/cache/index0/shared_cpu_map"),
            ENOENT);
  EXPECT_EQ(open_errno(cpu_fd, "cpu/cpu12/topology/core_id"), 0);
  EXPECT_EQ(guard.skipped_calls(), 1U);
  ::close(cpu_fd);
}

}  // namespace
}  // namespace nodetopo::probes::detail
