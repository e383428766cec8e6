// PciDirChain: device directories opened in path order through their parents' descriptors, one
// component each, with the same refusals as a kernel-checked open from the root.
#include "pci/pci_dir_chain.hpp"

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include <nodetopo/probes/sys_root.hpp>

#include "test_support.hpp"

namespace nodetopo::probes {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRootBus = "sys/devices/pci0000:00";
const std::string kPort = std::string(kRootBus) + "/0000:00:01.0";
const std::string kSwitch = kPort + "/0000:01:00.0";
const std::string kGpu = kSwitch + "/0000:02:00.0";
const std::string kNic = kSwitch + "/0000:02:01.0";
const std::string kOther = std::string(kRootBus) + "/0000:00:02.0";

class PciDirChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& dev : {kGpu, kNic, kOther})
      test::write_file(dir_.path() / dev / "vendor", "0x10de\n");
    fs::create_directories(dir_.path() / "proc");
  }

  [[nodiscard]] SysRoot open() const {
    auto root =
        SysRoot::open(dir_.path(), SysRoot::Liveness::kAuto, SysRoot::PathWalk::kKernelChecked);
    EXPECT_TRUE(root.ok()) << (root.ok() ? "" : root.error().describe());
    return std::move(root).value();
  }

  test::TempDir dir_;
};

TEST_F(PciDirChainTest, EachDirectoryInPathOrderCostsOneOpen) {
  const SysRoot root = open();
  if (!root.checks_paths_in_kernel()) GTEST_SKIP() << "kernel without openat2";
  PciDirChain chain(root);
  const SysDir* port = chain.open(kPort);
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(port->rel(), kPort);
  // The root bus from the root, then the port through it.
  EXPECT_EQ(root.stats().opens, 2U);
  const SysDir* gpu = chain.open(kGpu);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->rel(), kGpu);
  EXPECT_EQ(gpu->read_attr("vendor").value(), "0x10de");
  EXPECT_EQ(root.stats().opens, 5U) << "the switch, then the GPU (and its vendor file)";
  // A sibling: only its own directory; then one under the root bus again.
  ASSERT_NE(chain.open(kNic), nullptr);
  EXPECT_EQ(root.stats().opens, 6U);
  const SysDir* other = chain.open(kOther);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->rel(), kOther);
  EXPECT_EQ(root.stats().opens, 7U);
}

TEST_F(PciDirChainTest, AnyOrderOpensTheSameDirectories) {
  const SysRoot root = open();
  PciDirChain chain(root);
  for (const std::string& dev : {kOther, kGpu, kPort, kNic, kGpu}) {
    const SysDir* dir = chain.open(dev);
    if (!root.checks_paths_in_kernel()) {
      EXPECT_EQ(dir, nullptr) << "no kernel check, no chain: the caller takes the root's path";
      continue;
    }
    ASSERT_NE(dir, nullptr) << dev;
    EXPECT_EQ(dir->rel(), dev);
  }
}

TEST_F(PciDirChainTest, SymlinksMissingDirectoriesAndFilesAreRefused) {
  // The switch replaced by a link to a copy of itself: canonical neither from the root nor
  // through the port.
  fs::rename(dir_.path() / kSwitch, dir_.path() / kRootBus / "elsewhere");
  test::make_symlink("../elsewhere", dir_.path() / kSwitch);
  const SysRoot root = open();
  PciDirChain chain(root);
  ASSERT_EQ(chain.open(kPort) != nullptr, root.checks_paths_in_kernel());
  EXPECT_EQ(chain.open(kGpu), nullptr);
  EXPECT_EQ(chain.open(kPort + "/0000:01:07.0"), nullptr) << "absent";
  EXPECT_EQ(chain.open(std::string(kRootBus) + "/elsewhere/0000:02:00.0/vendor"), nullptr)
      << "a file";
  EXPECT_EQ(chain.open("sys"), nullptr) << "no parent to open from";
  // The chain is still usable after a refusal.
  EXPECT_EQ(chain.open(kOther) != nullptr, root.checks_paths_in_kernel());
}

}  // namespace
}  // namespace nodetopo::probes
