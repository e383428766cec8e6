// SparseConfig: config space read register by register decodes exactly as the whole 256 bytes do,
// in a fraction of the configuration cycles, and gives way to the whole read whenever it cannot
// prove that (the decoder looked at a byte it did not read, a register past the standard space).
#include "pci/pci_config_sparse.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "pci/libpci_config.hpp"

namespace nodetopo::probes {
namespace {

// The configuration cycles the kernel makes for a read of `size` bytes at `off`
// (drivers/pci/pci-sysfs.c pci_read_config(): a byte to reach an even offset, a word to reach a
// dword boundary, dwords, then a word and a byte).
std::size_t kernel_cycles(std::size_t off, std::size_t size) {
  std::size_t cycles = 0;
  if ((off & 1) != 0 && size > 0) {
    ++cycles;
    ++off;
    --size;
  }
  if ((off & 3) != 0 && size > 2) {
    ++cycles;
    off += 2;
    size -= 2;
  }
  cycles += size / 4;
  size %= 4;
  if (size >= 2) {
    ++cycles;
    size -= 2;
  }
  return cycles + size;
}

// A `config` file as sysfs serves it: `readable` bytes (64 without CAP_SYS_ADMIN), reads past
// them return nothing; cycles counted as the kernel makes them.
struct FakeConfigFile {
  explicit FakeConfigFile(std::vector<std::uint8_t> content = {}, std::size_t readable_bytes = 256)
      : bytes(std::move(content)), readable(readable_bytes) {}

  std::vector<std::uint8_t> bytes;
  std::size_t readable = 256;
  std::size_t cycles = 0;
  std::size_t calls = 0;
  std::optional<std::size_t> fail_call;  // this call (0-based) fails, as an EIO would

  ConfigReadAt reader() {
    return [this](std::size_t off, std::span<std::uint8_t> out) -> std::optional<std::size_t> {
      if (fail_call && *fail_call == calls++) return std::nullopt;
      if (off >= readable) return 0;
      const std::size_t n = std::min(out.size(), readable - off);
      std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(off), n, out.begin());
      cycles += kernel_cycles(off, n);
      return n;
    };
  }
};

class SparseConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = LibpciConfig::open();
    ASSERT_TRUE(opened.ok()) << opened.error().describe();
    libpci_.emplace(std::move(opened.value()));
  }

  // What PciFunctionReader decodes from a whole read of the file: the first 256 bytes or fewer.
  DecodedConfig whole(const FakeConfigFile& file) {
    const std::size_t n = std::min<std::size_t>(file.readable, 256);
    return libpci_->decode({}, std::span(file.bytes.data(), n));
  }

  // The sparse path as PciFunctionReader takes it: nullopt where it gives way to the whole read.
  std::optional<DecodedConfig> sparse(FakeConfigFile& file) {
    const auto read = SparseConfig::read(file.reader());
    if (!read) return std::nullopt;
    DecodedConfig low = libpci_->decode({}, read->bytes(0x00));
    if (low.past_buffer || low != libpci_->decode({}, read->bytes(0xff))) return std::nullopt;
    return low;
  }

  std::optional<LibpciConfig> libpci_;
};

// A PCI Express endpoint as the mock GPUs have it: power management at 0x40, MSI at 0x50, PCI
// Express at 0x60 (x16 Gen5 capable, trained x8 Gen4), MSI-X at 0xa0.
std::vector<std::uint8_t> gpu_endpoint() {
  std::vector<std::uint8_t> c(4096, 0);
  c[0x00] = 0xde;
  c[0x01] = 0x10;
  c[0x06] = 0x10;  // status: capability list
  c[0x08] = 0xa1;  // revision
  c[0x0e] = 0x00;  // header type 0
  c[0x2c] = 0xde;
  c[0x2d] = 0x10;
  c[0x2e] = 0x63;
  c[0x2f] = 0x16;
  c[0x34] = 0x40;
  c[0x40] = 0x01;  // power management -> MSI
  c[0x41] = 0x50;
  c[0x50] = 0x05;  // MSI -> PCI Express
  c[0x51] = 0x60;
  c[0x60] = 0x10;  // PCI Express -> MSI-X
  c[0x61] = 0xa0;
  c[0x62] = 0x02;  // version 2, endpoint
  c[0x6c] = 0x05;  // Link Capabilities: 32 GT/s, x16 (width in bits 4-9)
  c[0x6d] = 0x01;
  c[0x72] = 0x84;  // Link Status: 16 GT/s, x8
  c[0xa0] = 0x11;  // MSI-X, last
  c[0xff] = 0x00;
  return c;
}

TEST_F(SparseConfigTest, EndpointDecodesAsTheWholeReadInAQuarterOfTheCycles) {
  FakeConfigFile file{gpu_endpoint()};
  const auto got = sparse(file);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, whole(file));
  EXPECT_EQ(got->revision, 0xa1);
  EXPECT_EQ(got->subsystem_device_id, 0x1663);
  EXPECT_EQ(got->port_type, PciePortType::kEndpoint);
  EXPECT_EQ(got->link_max, (PcieLink{32000, 16}));
  EXPECT_EQ(got->link_current, (PcieLink{16000, 8}));
  // Reading all 256 bytes takes 64 cycles; this one 13: 7 in the header (its last byte, status,
  // revision, header type, subsystem, the pointer, the last byte of the standard space), one per
  // capability, two for the link registers.
  EXPECT_LE(file.cycles, 64U / 4) << file.cycles << " cycles";
}

TEST_F(SparseConfigTest, HeaderOnlyForAnUnprivilegedReader) {
  FakeConfigFile file{gpu_endpoint(), 64};
  const auto read = SparseConfig::read(file.reader());
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->size(), 64U);
  const auto got = sparse(file);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, whole(file));
  EXPECT_FALSE(got->port_type.has_value());  // the capability area was not readable
}

TEST_F(SparseConfigTest, ShortHeaderGivesWayToTheWholeRead) {
  FakeConfigFile file{gpu_endpoint(), 40};
  EXPECT_FALSE(SparseConfig::read(file.reader()).has_value());
}

TEST_F(SparseConfigTest, FailedReadGivesWayToTheWholeRead) {
  for (std::size_t call = 0; call < 12; ++call) {
    FakeConfigFile file{gpu_endpoint()};
    file.fail_call = call;
    EXPECT_FALSE(SparseConfig::read(file.reader()).has_value()) << "failing call " << call;
  }
}

TEST_F(SparseConfigTest, RegisterPastTheStandardSpaceGivesWayToTheWholeRead) {
  FakeConfigFile file{gpu_endpoint()};
  file.bytes[0xa1] = 0xf8;  // MSI-X -> a PCI Express capability whose Link Status is at 0x10a
  file.bytes[0xf8] = 0x10;
  file.bytes[0x61] = 0xa0;
  file.bytes[0x60] = 0x05;  // the first PCI Express capability becomes MSI
  EXPECT_TRUE(whole(file).past_buffer);
  EXPECT_FALSE(sparse(file).has_value());
}

TEST_F(SparseConfigTest, LoopingCapabilityListEnds) {
  FakeConfigFile file{gpu_endpoint()};
  file.bytes[0xa1] = 0x40;  // MSI-X -> power management again
  const auto got = sparse(file);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, whole(file));
}

// Random config spaces — every byte random, or a random capability chain on zeros — read by
// processes with and without the capability area: whenever the sparse path answers, its answer
// is the whole read's; and it answers for every one whose registers lie in the standard space.
TEST_F(SparseConfigTest, RandomConfigSpacesDecodeAsTheWholeRead) {
  std::mt19937 rng(20261202);
  std::uniform_int_distribution<int> byte(0, 255);
  const std::size_t readable[] = {256, 256, 256, 4096, 128, 64};
  std::size_t answered = 0;
  std::size_t cycles = 0;
  constexpr int kCases = 20000;
  for (int i = 0; i < kCases; ++i) {
    FakeConfigFile file;
    file.bytes.assign(4096, 0);
    if (i % 2 == 0) {
      for (auto& b : file.bytes)
        b = static_cast<std::uint8_t>(byte(rng));
    } else {
      file.bytes[0x06] = 0x10;
      file.bytes[0x0e] = static_cast<std::uint8_t>(std::array{0, 1, 2, 0x80, 0x81, 7}[i % 6]);
      unsigned where = 0x34;
      const int caps = 1 + byte(rng) % 6;
      for (int c = 0; c < caps; ++c) {
        const unsigned next = 0x40 + 4 * static_cast<unsigned>(byte(rng) % 48);
        file.bytes[where == 0x34 ? 0x34 : where + 1] = static_cast<std::uint8_t>(next);
        where = next;
        file.bytes[where] = static_cast<std::uint8_t>(
            std::array{0x10, 0x0d, 0x01, 0x05, 0x11, 0xff}[byte(rng) % 6]);
        for (unsigned r = 2; r < 0x14 && where + r < 256; ++r)
          file.bytes[where + r] = static_cast<std::uint8_t>(byte(rng));
      }
    }
    file.readable = readable[static_cast<std::size_t>(i) % std::size(readable)];
    const DecodedConfig expected = whole(file);
    const std::size_t before = file.cycles;
    const auto got = sparse(file);
    if (got) {
      ++answered;
      cycles += file.cycles - before;
      ASSERT_EQ(*got, expected) << "case " << i;
    } else {
      ASSERT_TRUE(expected.past_buffer) << "case " << i << ": the sparse path gave way";
    }
  }
  EXPECT_GT(answered, kCases * 8 / 10);
  const double mean = static_cast<double>(cycles) / static_cast<double>(answered);
  RecordProperty("mean_cycles", std::to_string(mean));
  EXPECT_LT(mean, 20.0);
}

}  // namespace
}  // namespace nodetopo::probes
