// PciFunctionReader reads the same function from config space read sparsely (each register as
// the decoder needs it, the live-root path) as from one whole read (the capture path): on every
// shipped mock profile, through the real files and SysDir::open_file(), and on the machine the
// tests run on.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/probes/sys_root.hpp>

#include "mock_fixture.hpp"
#include "pci/pci_device_path.hpp"
#include "pci/pci_function_reader.hpp"

namespace nodetopo::probes {
namespace {

// Everything a reader derives from one function, config space's part included, as text.
std::string describe(const PciFunctionRead& read) {
  std::ostringstream out;
  out << "bridge=" << read.bridge << " not_canonical=" << read.not_canonical;
  if (const auto& f = read.info) {
    out << " " << f->address.to_string() << " ids=" << f->vendor_id << ":" << f->device_id
        << " sub=" << f->subsystem_vendor_id << ":" << f->subsystem_device_id
        << " class=" << f->class_code << " rev=" << (f->revision ? int{*f->revision} : -1)
        << " link=" << f->link_current.to_string() << "/" << f->link_max.to_string()
        << " port=" << (f->port_type ? static_cast<int>(*f->port_type) : -1)
        << " buses=" << (f->secondary_bus ? int{*f->secondary_bus} : -1) << "-"
        << (f->subordinate_bus ? int{*f->subordinate_bus} : -1)
        << " sriov=" << f->sriov_total_vfs.value_or(0) << "/" << f->sriov_num_vfs.value_or(0);
  }
  for (const Error& e : read.warnings)
    out << "\n  warning: " << e.describe();
  return out.str();
}

// Every PCI function of the root, read both ways; the number compared.
std::size_t compare_reads(const SysRoot& root) {
  auto names = root.list_dir("sys/bus/pci/devices");
  if (!names) return 0;
  auto whole_libpci = LibpciConfig::open();
  auto sparse_libpci = LibpciConfig::open();
  EXPECT_TRUE(whole_libpci.ok() && sparse_libpci.ok());
  if (!whole_libpci.ok() || !sparse_libpci.ok()) return 0;
  PciFunctionReader whole(root, std::move(whole_libpci.value()), ConfigReads::kWhole);
  PciFunctionReader sparse(root, std::move(sparse_libpci.value()), ConfigReads::kSparse);
  std::size_t compared = 0;
  for (const std::string& name : *names) {
    auto resolved = root.resolve("sys/bus/pci/devices/" + name);
    if (!resolved) continue;
    auto entry = parse_device_path(*resolved);
    if (!entry) continue;
    entry->name = name;
    const std::string expected = describe(whole.read(*entry));
    EXPECT_EQ(describe(sparse.read(*entry)), expected) << root.host_path(*resolved);
    ++compared;
  }
  return compared;
}

TEST(PciConfigReads, SparseReadsEqualTheWholeReadOnEveryShippedProfile) {
  for (const std::string& profile : test::shipped_profile_names()) {
    SCOPED_TRACE(profile);
    const test::BuiltHost* host = test::built_host(profile);
    ASSERT_NE(host, nullptr);
    auto root = SysRoot::open(host->root, SysRoot::Liveness::kCapture);
    ASSERT_TRUE(root.ok()) << root.error().describe();
    EXPECT_GT(compare_reads(*root), 0U) << "no PCI function compared";
  }
}

// A function whose PCI Express capability sits at 0xf8, its link registers past the standard
// space (a damaged capture's, or a buggy device's): the sparse path gives way and reads the file
// whole through the descriptor it opened — the file is opened once, not again as the whole path
// does for the extended space — and the result is the whole path's.
TEST(PciConfigReads, ACapabilityPastTheStandardSpaceIsReadThroughTheSameDescriptor) {
  auto host = mock::TempHost::create("hgx-a100");
  ASSERT_TRUE(host.ok()) << host.error().describe();
  auto root = SysRoot::open(host->root(), SysRoot::Liveness::kCapture);
  ASSERT_TRUE(root.ok()) << root.error().describe();
  auto names = root->list_dir("sys/bus/pci/devices");
  ASSERT_TRUE(names.ok() && !names->empty());
  const std::string name = names->front();
  auto resolved = root->resolve("sys/bus/pci/devices/" + name);
  ASSERT_TRUE(resolved.ok()) << resolved.error().describe();
  const std::filesystem::path config = host->root() / *resolved / "config";
  std::string bytes;
  {
    std::ifstream in(config, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(bytes.size(), 4096U);
  bytes[0x34] = static_cast<char>(0xf8);
  bytes[0xf8] = 0x10;  // PCI Express, the last capability
  bytes[0xf9] = 0x00;
  bytes[0x104] = static_cast<char>(0x83);  // Link Capabilities: 8 GT/s (3), x8 (bits 4-9)
  bytes[0x105] = 0x00;
  bytes[0x10a] = 0x43;  // Link Status: 8 GT/s x4
  bytes[0x10b] = 0x00;
  {
    std::ofstream out(config, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  auto entry = parse_device_path(*resolved);
  ASSERT_TRUE(entry.has_value());
  entry->name = name;
  auto whole_libpci = LibpciConfig::open();
  auto sparse_libpci = LibpciConfig::open();
  ASSERT_TRUE(whole_libpci.ok() && sparse_libpci.ok());
  PciFunctionReader whole(*root, std::move(whole_libpci.value()), ConfigReads::kWhole);
  PciFunctionReader sparse(*root, std::move(sparse_libpci.value()), ConfigReads::kSparse);
  const std::size_t before = root->stats().opens;
  const PciFunctionRead by_whole = whole.read(*entry);
  const std::size_t whole_opens = root->stats().opens - before;
  const PciFunctionRead by_sparse = sparse.read(*entry);
  const std::size_t sparse_opens = root->stats().opens - before - whole_opens;
  ASSERT_TRUE(by_whole.info.has_value());
  EXPECT_EQ(by_whole.info->link_current.to_string(), "8 GT/s x4") << "decoded past byte 256";
  EXPECT_EQ(describe(by_sparse), describe(by_whole));
  EXPECT_EQ(sparse_opens + 1, whole_opens) << "config opened once by the sparse path";
}

// The machine's own sysfs, where `config` is the kernel's config accessor and the reader takes
// the sparse path by default; whatever this process may read of it (the header alone without
// CAP_SYS_ADMIN), both ways must agree.
TEST(PciConfigReads, SparseReadsEqualTheWholeReadOnThisMachine) {
  auto root = SysRoot::open("/");
  ASSERT_TRUE(root.ok()) << root.error().describe();
  ASSERT_TRUE(root->is_live());
  const std::size_t compared = compare_reads(*root);
  if (compared == 0) GTEST_SKIP() << "this machine shows no PCI function in /sys/bus/pci/devices";
  RecordProperty("functions", std::to_string(compared));
}

}  // namespace
}  // namespace nodetopo::probes
