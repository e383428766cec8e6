// The pure sysfs/procfs parsers: well-formed input as the kernel writes it, and malformed, empty,
// overflowing and hostile input, which must give a kMalformed error quoting the text.
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <nodetopo/probes/parsers.hpp>

namespace nodetopo::probes {
namespace {

// Asserts that `result` is a kMalformed error whose message quotes `needle`.
template <class T>
void expect_malformed(const Result<T>& result, const std::string& needle = {}) {
  ASSERT_FALSE(result.ok()) << "accepted input that should be rejected";
  EXPECT_EQ(result.error().code, ErrorCode::kMalformed);
  if (!needle.empty()) {
    EXPECT_NE(result.error().message.find(needle), std::string::npos) << result.error().message;
  }
}

// ---------------------------------------------------------------------------------------------
// trim

TEST(Trim, StripsWhitespaceAndNulsFromBothEnds) {
  EXPECT_EQ(trim("  0-3\n"), "0-3");
  EXPECT_EQ(trim(std::string_view("ab\0\0", 4)), "ab");
  EXPECT_EQ(trim("\t\r\n"), "");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim("a b"), "a b");  // inner whitespace is content
}

// ---------------------------------------------------------------------------------------------
// cpulist

TEST(ParseCpulist, RangesAndSinglesAsTheKernelWritesThem) {
  auto set = parse_cpulist("0-3,8,10-11\n");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->to_list(), "0-3,8,10-11");
  EXPECT_EQ(set->count(), 7U);
}

TEST(ParseCpulist, EmptyMeansNoCpu) {
  for (const char* text : {"", "\n", "  "}) {
    auto set = parse_cpulist(text);
    ASSERT_TRUE(set.ok()) << "'" << text << "'";
    EXPECT_TRUE(set->empty());
  }
}

TEST(ParseCpulist, SingleCpuAndDegenerateRange) {
  EXPECT_EQ(parse_cpulist("5").value().to_list(), "5");
  EXPECT_EQ(parse_cpulist("7-7").value().to_list(), "7");
}

TEST(ParseCpulist, OverlappingAndUnsortedItemsAreMerged) {
  auto set = parse_cpulist("8-9,0-3,2-5");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->to_list(), "0-5,8-9");
}

TEST(ParseCpulist, CpusAboveOneWord) {
  auto set = parse_cpulist("88-103");
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->count(), 16U);
  EXPECT_TRUE(set->contains(88));
  EXPECT_TRUE(set->contains(103));
  EXPECT_FALSE(set->contains(87));
}

TEST(ParseCpulist, LargestAcceptedCpu) {
  auto set = parse_cpulist("1048575");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->contains(1048575));
}

TEST(ParseCpulist, RejectsMalformedLists) {
  for (const char* text : {"a", "0-", "-3", "3-1", "0,,1", "0,", ",0", "0-3:2", "0 - 3", "0x3",
                           "+1", "1.5", "0-3 x", "0-3,8garbage", "--1", "1-2-3"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_cpulist(text));
  }
}

TEST(ParseCpulist, RejectsOverflowAndHugeRangesWithoutAllocating) {
  expect_malformed(parse_cpulist("4294967296"));          // does not fit 32 bits
  expect_malformed(parse_cpulist("0-4294967295"));        // would allocate 512 MiB of bits
  expect_malformed(parse_cpulist("1048576"), "1048576");  // first CPU past the bound
  expect_malformed(parse_cpulist("0-99999999999999999999"));
}

TEST(ParseCpulist, ErrorQuotesTheText) {
  auto set = parse_cpulist("0-3,zz");
  expect_malformed(set, "'0-3,zz'");
}

// ---------------------------------------------------------------------------------------------
// cpumask

TEST(ParseCpumask, WordsMostSignificantFirst) {
  auto set = parse_cpumask("ff,ffffffff\n");
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->to_list(), "0-39");

  auto sparse = parse_cpumask("00000001,00000000,80000001");
  ASSERT_TRUE(sparse.ok());
  EXPECT_EQ(sparse->to_list(), "0,31,64");
}

TEST(ParseCpumask, ZeroMaskIsEmptySet) {
  auto set = parse_cpumask("00000000,00000000");
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set->empty());
}

TEST(ParseCpumask, ShortWordsAndUppercase) {
  EXPECT_EQ(parse_cpumask("3").value().to_list(), "0-1");
  EXPECT_EQ(parse_cpumask("F0").value().to_list(), "4-7");
}

TEST(ParseCpumask, RejectsMalformedMasks) {
  for (const char* text : {"", "\n", "g", "ff,", ",ff", "ff,,ff", "123456789", "0xff", "ff ff",
                           "ff,ffffffff garbage", "-1"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_cpumask(text));
  }
}

// ---------------------------------------------------------------------------------------------
// PCI address

TEST(ParsePciAddress, SixteenBitDomain) {
  auto addr = parse_pci_address("0000:65:00.0");
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(addr->domain, 0U);
  EXPECT_EQ(addr->bus, 0x65);
  EXPECT_EQ(addr->device, 0);
  EXPECT_EQ(addr->function, 0);
  EXPECT_EQ(addr->to_string(), "0000:65:00.0");
}

TEST(ParsePciAddress, ThirtyTwoBitDomains) {
  auto vmd = parse_pci_address("10000:00:04.0");
  ASSERT_TRUE(vmd.ok());
  EXPECT_EQ(vmd->domain, 0x10000U);
  EXPECT_EQ(vmd->device, 4);
  EXPECT_EQ(vmd->to_string(), "10000:00:04.0");

  auto widest = parse_pci_address("ffffffff:ff:1f.7");
  ASSERT_TRUE(widest.ok());
  EXPECT_EQ(widest->domain, 0xffffffffU);
  EXPECT_EQ(widest->bus, 0xff);
  EXPECT_EQ(widest->device, 31);
  EXPECT_EQ(widest->function, 7);
  EXPECT_EQ(widest->to_string(), "ffffffff:ff:1f.7");
}

TEST(ParsePciAddress, SurroundingWhitespaceIsTrimmed) {
  auto addr = parse_pci_address(" 0035:04:00.1\n");
  ASSERT_TRUE(addr.ok());
  EXPECT_EQ(addr->to_string(), "0035:04:00.1");
}

TEST(ParsePciAddress, RejectsMalformedAddresses) {
  for (const char* text : {"",
                           "0000",
                           "0000:65",
                           "0000:65:00",
                           "65:00.0",
                           "000:65:00.0",
                           "100000000:00:00.0",
                           "0000:6:00.0",
                           "0000:065:00.0",
                           "0000:65:0.0",
                           "0000:65:20.0",
                           "0000:65:00.8",
                           "0000:65:00.0x",
                           "0000:65:00.0.1",
                           "0000:g5:00.0",
                           "0000.65.00.0",
                           "0000:65:00:0",
                           "-000:65:00.0",
                           "0000:65:00.",
                           "pci0000:00",
                           "0000:65:00.0 trailing"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_pci_address(text));
  }
}

TEST(ParsePciAddress, OrderingFollowsLspci) {
  const PciAddress a = parse_pci_address("0000:17:00.0").value();
  const PciAddress b = parse_pci_address("0000:17:00.1").value();
  const PciAddress c = parse_pci_address("0000:3a:00.0").value();
  const PciAddress d = parse_pci_address("10000:00:00.0").value();
  EXPECT_LT(a.sort_key(), b.sort_key());
  EXPECT_LT(b.sort_key(), c.sort_key());
  EXPECT_LT(c.sort_key(), d.sort_key());
  EXPECT_LT(a, b);
  EXPECT_LT(c, d);
}

// ---------------------------------------------------------------------------------------------
// link speed and width

TEST(ParseLinkSpeed, KernelSpellings) {
  EXPECT_EQ(parse_link_speed("2.5 GT/s PCIe\n").value(), 2500U);
  EXPECT_EQ(parse_link_speed("5.0 GT/s PCIe").value(), 5000U);
  EXPECT_EQ(parse_link_speed("8.0 GT/s PCIe").value(), 8000U);
  EXPECT_EQ(parse_link_speed("16.0 GT/s PCIe").value(), 16000U);
  EXPECT_EQ(parse_link_speed("32.0 GT/s PCIe").value(), 32000U);
  EXPECT_EQ(parse_link_speed("64.0 GT/s PCIe").value(), 64000U);
  // Kernels before 4.17 wrote the speed without the "PCIe" suffix, some without a decimal.
  EXPECT_EQ(parse_link_speed("2.5 GT/s").value(), 2500U);
  EXPECT_EQ(parse_link_speed("5 GT/s").value(), 5000U);
  EXPECT_EQ(parse_link_speed("8 GT/s").value(), 8000U);
  EXPECT_EQ(parse_link_speed("16 GT/s").value(), 16000U);
}

TEST(ParseLinkSpeed, UnknownIsZero) {
  EXPECT_EQ(parse_link_speed("Unknown").value(), 0U);
  EXPECT_EQ(parse_link_speed("Unknown\n").value(), 0U);
  EXPECT_EQ(parse_link_speed("Unknown speed").value(), 0U);  // older kernels
}

TEST(ParseLinkSpeed, FractionDigitsAreExact) {
  EXPECT_EQ(parse_link_speed("2.50 GT/s").value(), 2500U);
  EXPECT_EQ(parse_link_speed("2.125 GT/s").value(), 2125U);
  EXPECT_EQ(parse_link_speed("1000.999 GT/s").value(), 1000999U);
}

TEST(ParseLinkSpeed, RejectsMalformedSpeeds) {
  for (const char* text : {"",
                           "\n",
                           "fast",
                           "8.0",
                           "8.0GT/s",
                           "8.0 MT/s",
                           "8.0 Gb/s",
                           "8. GT/s",
                           ".5 GT/s",
                           "8.0000 GT/s",
                           "-8.0 GT/s",
                           "8,0 GT/s",
                           "8.0 GT/s PCIe garbage",
                           "8.0 GT/s PCI",
                           "8.0 GT/sec",
                           "8.0 GT/s PCIe PCIe",
                           "Unknownish",
                           "unknown",
                           "1001 GT/s",
                           "4294967296 GT/s",
                           "8.x GT/s"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_link_speed(text));
  }
}

TEST(ParseLinkWidth, DecimalLanesAndXPrefix) {
  EXPECT_EQ(parse_link_width("16\n").value(), 16U);
  EXPECT_EQ(parse_link_width("1").value(), 1U);
  EXPECT_EQ(parse_link_width("x8").value(), 8U);
  EXPECT_EQ(parse_link_width("X4").value(), 4U);
  EXPECT_EQ(parse_link_width("32").value(), 32U);
}

TEST(ParseLinkWidth, ZeroAndUntrainedMeanUnknown) {
  EXPECT_EQ(parse_link_width("0").value(), 0U);
  EXPECT_EQ(parse_link_width("255").value(), 0U);
}

TEST(ParseLinkWidth, RejectsMalformedWidths) {
  for (const char* text :
       {"", "x", "xx16", "16x", "-1", "33", "254", "256", "4294967296", "1 6", "0x10", "sixteen"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_link_width(text));
  }
}

// ---------------------------------------------------------------------------------------------
// numbers

TEST(ParseHex, IdsWithAndWithoutPrefix) {
  EXPECT_EQ(parse_hex("0x10de\n", 0xffff).value(), 0x10deU);
  EXPECT_EQ(parse_hex("10DE", 0xffff).value(), 0x10deU);
  EXPECT_EQ(parse_hex("0X030200", 0xffffff).value(), 0x030200U);
  EXPECT_EQ(parse_hex("0x0", 0xffff).value(), 0U);
  EXPECT_EQ(parse_hex("0xffffffffffffffff", std::numeric_limits<std::uint64_t>::max()).value(),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(ParseHex, ClassCodes) {
  // sysfs `class`: 24 bits, base class, subclass, programming interface.
  EXPECT_EQ(parse_hex("0x060400\n", 0xffffff).value(), 0x060400U);
  EXPECT_EQ(parse_hex("0x030200", 0xffffff).value() >> 8, 0x0302U);
  EXPECT_EQ(parse_hex("0xffffff", 0xffffff).value(), 0xffffffU);
  expect_malformed(parse_hex("0x1000000", 0xffffff));
  expect_malformed(parse_hex("0x0604 00", 0xffffff));
}

TEST(ParseHex, BoundIsInclusive) {
  EXPECT_TRUE(parse_hex("0xffff", 0xffff).ok());
  expect_malformed(parse_hex("0x10000", 0xffff), "'0x10000'");
}

TEST(ParseHex, RejectsMalformedNumbers) {
  for (const char* text : {"", "0x", "x10", "0x10dg", "0x-1", "-0x1", "0x 10", "10 de",
                           "0x10000000000000000", "0xfffffffffffffffff", "0x10de0x"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_hex(text, std::numeric_limits<std::uint64_t>::max()));
  }
}

TEST(ParseInt, SignedDecimal) {
  EXPECT_EQ(parse_int("-1\n").value(), -1);
  EXPECT_EQ(parse_int("42").value(), 42);
  EXPECT_EQ(parse_int("-9223372036854775808").value(), std::numeric_limits<std::int64_t>::min());
  for (const char* text : {"", "-", "+1", "4x", "0x10", "1 2", "9223372036854775808"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_int(text));
  }
}

TEST(ParseUint, UnsignedDecimal) {
  EXPECT_EQ(parse_uint("0").value(), 0U);
  EXPECT_EQ(parse_uint(" 18446744073709551615\n").value(),
            std::numeric_limits<std::uint64_t>::max());
  for (const char* text : {"", "-1", "18446744073709551616", "1e3", "12abc"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_uint(text));
  }
}

// ---------------------------------------------------------------------------------------------
// numa_node

TEST(ParseNumaNode, MinusOneIsNoLocality) {
  auto none = parse_numa_node("-1\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ParseNumaNode, NodeNumbers) {
  EXPECT_EQ(parse_numa_node("0").value(), std::optional<std::uint32_t>(0));
  EXPECT_EQ(parse_numa_node("8\n").value(), std::optional<std::uint32_t>(8));
  EXPECT_EQ(parse_numa_node("255").value(), std::optional<std::uint32_t>(255));
  EXPECT_EQ(parse_numa_node("65535").value(), std::optional<std::uint32_t>(65535));
}

TEST(ParseNumaNode, RejectsGarbageAndOutOfRange) {
  for (const char* text :
       {"", "garbage", "-2", "65536", "4294967295", "1.0", "0x1", "1 2", "-1x"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_numa_node(text));
  }
}

// ---------------------------------------------------------------------------------------------
// distance rows

TEST(ParseDistanceRow, SpaceSeparated) {
  auto row = parse_distance_row("10 21 21 10\n");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row.value(), (std::vector<std::int64_t>{10, 21, 21, 10}));
}

TEST(ParseDistanceRow, TabsAndRepeatedSpaces) {
  auto row = parse_distance_row("  10\t40   80 ");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row.value(), (std::vector<std::int64_t>{10, 40, 80}));
}

TEST(ParseDistanceRow, SingleNode) {
  EXPECT_EQ(parse_distance_row("10").value(), (std::vector<std::int64_t>{10}));
}

TEST(ParseDistanceRow, RejectsMalformedRows) {
  for (const char* text :
       {"", "\n", "10 0", "10 -1", "10 256", "10 21x", "10,21", "ten", "10 99999999999999999999"}) {
    SCOPED_TRACE(text);
    expect_malformed(parse_distance_row(text));
  }
}

// ---------------------------------------------------------------------------------------------
// key-value lines

TEST(ParseKeyValueLines, KfdPropertiesInFileOrder) {
  auto kv = parse_key_value_lines("cpu_cores_count 0\nsimd_count 304\ngfx_target_version 90402\n");
  ASSERT_TRUE(kv.ok());
  ASSERT_EQ(kv->size(), 3U);
  EXPECT_EQ((*kv)[0], (std::pair<std::string_view, std::string_view>{"cpu_cores_count", "0"}));
  EXPECT_EQ((*kv)[1], (std::pair<std::string_view, std::string_view>{"simd_count", "304"}));
  EXPECT_EQ((*kv)[2],
            (std::pair<std::string_view, std::string_view>{"gfx_target_version", "90402"}));
}

TEST(ParseKeyValueLines, BlankLinesCrlfAndInnerSpaces) {
  auto kv = parse_key_value_lines("\n a  1 2 \r\n\n\tb\tx\n");
  ASSERT_TRUE(kv.ok());
  ASSERT_EQ(kv->size(), 2U);
  EXPECT_EQ((*kv)[0], (std::pair<std::string_view, std::string_view>{"a", "1 2"}));
  EXPECT_EQ((*kv)[1], (std::pair<std::string_view, std::string_view>{"b", "x"}));
}

TEST(ParseKeyValueLines, EmptyInputIsNoPairs) {
  auto kv = parse_key_value_lines("");
  ASSERT_TRUE(kv.ok());
  EXPECT_TRUE(kv->empty());
  EXPECT_TRUE(parse_key_value_lines("\n\n").value().empty());
}

TEST(ParseKeyValueLines, NoLastNewline) {
  auto kv = parse_key_value_lines("a 1\nb 2");
  ASSERT_TRUE(kv.ok());
  ASSERT_EQ(kv->size(), 2U);
  EXPECT_EQ((*kv)[1].second, "2");
}

TEST(ParseKeyValueLines, KeyWithoutValueIsMalformed) {
  expect_malformed(parse_key_value_lines("a 1\nlonely\n"), "'lonely'");
}

// ---------------------------------------------------------------------------------------------
// error messages

TEST(ParsePciUevent, KernelContent) {
  auto u = parse_pci_uevent(
      "DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\nPCI_SUBSYS_ID=10DE:16C1\n"
      "PCI_SLOT_NAME=0000:05:00.0\nMODALIAS=pci:"
      "v000010DEd00002330sv000010DEsd000016C1bc03sc02i00\n");
  ASSERT_TRUE(u.ok()) << u.error().describe();
  EXPECT_EQ(u->class_code, 0x030200U);
  EXPECT_EQ(u->vendor_id, 0x10de);
  EXPECT_EQ(u->device_id, 0x2330);
  EXPECT_EQ(u->subsystem_vendor_id, std::optional<std::uint16_t>(0x10de));
  EXPECT_EQ(u->subsystem_device_id, std::optional<std::uint16_t>(0x16c1));
  EXPECT_EQ(u->driver, "nvidia");
  EXPECT_EQ(u->slot_name, "0000:05:00.0");
}

TEST(ParsePciUevent, BlankAndPaddedLinesAndNoFinalNewline) {
  auto u = parse_pci_uevent("\n\n  DRIVER=mlx5_core \r\n\t\n PCI_CLASS=20700\n\nPCI_ID=15B3:101E");
  ASSERT_TRUE(u.ok()) << u.error().describe();
  EXPECT_EQ(u->driver, "mlx5_core");
  EXPECT_EQ(u->class_code, 0x020700U);
  EXPECT_EQ(u->vendor_id, 0x15b3);
  EXPECT_EQ(u->device_id, 0x101e) << "the last line, without a newline, is read";
  EXPECT_FALSE(parse_pci_uevent("\n \n\t\n").ok()) << "only blank lines: no PCI_CLASS";
}

TEST(ParsePciUevent, UnboundFunctionHasNoDriverAndUnknownKeysAreIgnored) {
  auto u = parse_pci_uevent("PCI_CLASS=60400\nPCI_ID=8086:352A\nOF_NAME=pci\n");
  ASSERT_TRUE(u.ok()) << u.error().describe();
  EXPECT_EQ(u->class_code, 0x060400U);
  EXPECT_TRUE(u->driver.empty());
  EXPECT_FALSE(u->subsystem_vendor_id.has_value());
}

TEST(ParsePciUevent, MissingOrMalformedRequiredKeys) {
  for (std::string_view text :
       {"", "PCI_ID=8086:352A\n", "PCI_CLASS=60400\n", "PCI_CLASS=zz\nPCI_ID=8086:352A\n",
        "PCI_CLASS=1000000\nPCI_ID=8086:352A\n", "PCI_CLASS=60400\nPCI_ID=8086\n",
        "PCI_CLASS=60400\nPCI_ID=18086:352A\n", "PCI_CLASS=60400\nPCI_ID=:352A\n",
        "PCI_CLASS=60400\nPCI_ID=8086:352A\nPCI_SUBSYS_ID=x\n", "garbage\n"}) {
    auto u = parse_pci_uevent(text);
    EXPECT_FALSE(u.ok()) << text;
    if (!u.ok()) {
      EXPECT_EQ(u.error().code, ErrorCode::kMalformed) << text;
    }
  }
}

TEST(ParserErrors, LongAndBinaryInputIsQuotedSafely) {
  const std::string long_text(200, '7');
  auto r = parse_pci_address(long_text);
  expect_malformed(r);
  EXPECT_NE(r.error().message.find("..."), std::string::npos);
  EXPECT_LT(r.error().message.size(), 150U);

  auto bin = parse_int(std::string("1\x01\xff", 3));
  expect_malformed(bin,
                   "'1?"
                   "?'");  // split: "??'" would be a trigraph
  EXPECT_TRUE(bin.error().path.empty()) << "parsers do no I/O: the caller adds the path";
}

}  // namespace
}  // namespace nodetopo::probes
