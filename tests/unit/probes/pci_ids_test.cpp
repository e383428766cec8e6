// The single-pass pci.ids lookup: parsing rules on small inline databases, the system's
// pci.ids read both ways — by the lookup and by libpci's pci_lookup_name() as the oracle — and
// the scan (both of its line finders) against a plain line-by-line reading written here, on the
// system's pci.ids and on generated hostile texts.
#include <gtest/gtest.h>

extern "C" {
#include <pci/pci.h>
}

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <nodetopo/probes/pci_ids.hpp>

#include "pci/pci_ids_scan.hpp"

namespace nodetopo::probes {
namespace {

constexpr std::string_view kIds = R"(# comment line
#	1234  commented-out device
10de  NVIDIA Corporation
	2330  GH100 [H100 SXM5 80GB]
		10de 16c1  H100 SXM5 80GB
	22a3  GH100 [H100 NVSwitch]
15b3  Mellanox Technologies
	1021  MT2910 Family [ConnectX-7]
C 02  Network controller
	00  Ethernet controller
	07  Infiniband controller
C 03  Display controller
	00  VGA compatible controller
		00  VGA controller
	02  3D controller
)";

TEST(PciIds, FindsVendorsDevicesAndClasses) {
  const std::vector<PciNameQuery> q = {{0x10de, 0x2330, 0x0302}, {0x15b3, 0x1021, 0x0207}};
  const PciNames names = lookup_pci_names(kIds, q);
  EXPECT_EQ(names.vendor(0x10de), "NVIDIA Corporation");
  EXPECT_EQ(names.device(0x10de, 0x2330), "GH100 [H100 SXM5 80GB]");
  EXPECT_EQ(names.device(0x15b3, 0x1021), "MT2910 Family [ConnectX-7]");
  EXPECT_EQ(names.class_name(0x0302), "3D controller");
  EXPECT_EQ(names.class_name(0x0207), "Infiniband controller");
  // Only what was asked for is collected.
  EXPECT_EQ(names.device(0x10de, 0x22a3), "");
  EXPECT_EQ(names.devices.size(), 2U);
}

TEST(PciIds, SubsystemAndProgIfLinesAreNotDevicesOrSubclasses) {
  // "10de 16c1" is a subsystem line; "00  VGA controller" a prog-if line under 0300.
  const std::vector<PciNameQuery> q = {{0x10de, 0x16c1, 0x0300}};
  const PciNames names = lookup_pci_names(kIds, q);
  EXPECT_EQ(names.device(0x10de, 0x16c1), "");
  EXPECT_EQ(names.class_name(0x0300), "VGA compatible controller");
}

TEST(PciIds, UnknownSubclassFallsBackToTheBaseClassWithItsNumber) {
  const std::vector<PciNameQuery> q = {{0x1234, 0x5678, 0x0380}, {0x1234, 0x5678, 0x1200}};
  const PciNames names = lookup_pci_names(kIds, q);
  EXPECT_EQ(names.class_name(0x0380), "Display controller [0380]");
  EXPECT_EQ(names.class_name(0x1200), "");  // base class 12 not in this database
  EXPECT_EQ(names.vendor(0x1234), "");
}

TEST(PciIds, ToleratesCrLfAndGarbageLines) {
  const std::string text =
      "10de  NVIDIA Corporation\r\n\tzzzz  not an id\r\n\t2330  H100\r\nC xx  bad class\n";
  const std::vector<PciNameQuery> q = {{0x10de, 0x2330, 0x0302}};
  const PciNames names = lookup_pci_names(text, q);
  EXPECT_EQ(names.vendor(0x10de), "NVIDIA Corporation");
  EXPECT_EQ(names.device(0x10de, 0x2330), "H100");
  EXPECT_EQ(names.class_name(0x0302), "");
}

// The system database read by both: every vendor, device and class of a broad set of IDs must
// come out exactly as libpci prints it (names in goldens and JSON depend on it).
TEST(PciIds, AgreesWithLibpciOnTheSystemDatabase) {
  const auto file = PciIdsFile::open_system();
  ASSERT_TRUE(file.has_value()) << "no pci.ids: install the pci.ids package (pciutils)";
  const std::string_view text = file->text();
  std::vector<PciNameQuery> queries;
  const std::array<std::uint16_t, 8> vendors{0x8086, 0x10de, 0x1002, 0x15b3,
                                             0x14e4, 0x1af4, 0x10b5, 0x1000};
  for (std::uint16_t vendor : vendors) {
    for (unsigned d = 0; d < 0x3000; d += 7) {
      const auto device = static_cast<std::uint16_t>(d);
      queries.push_back(
          {vendor, device, static_cast<std::uint16_t>((device % 0x13) << 8 | (device % 9))});
    }
  }
  const PciNames names = lookup_pci_names(text, queries);

  pci_access* pacc = pci_alloc();
  pci_init(pacc);
  std::array<char, 512> buf{};
  auto libpci = [&](int flags, auto... ids) {
    const char* name = pci_lookup_name(pacc, buf.data(), static_cast<int>(buf.size()),
                                       flags | PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB, ids...);
    return name != nullptr ? std::string(name) : std::string();
  };
  std::size_t compared = 0;
  std::size_t found = 0;
  for (const PciNameQuery& q : queries) {
    EXPECT_EQ(names.vendor(q.vendor_id), libpci(PCI_LOOKUP_VENDOR, int{q.vendor_id}));
    const std::string expected = libpci(PCI_LOOKUP_DEVICE, int{q.vendor_id}, int{q.device_id});
    EXPECT_EQ(names.device(q.vendor_id, q.device_id), expected)
        << std::hex << q.vendor_id << ":" << q.device_id;
    EXPECT_EQ(names.class_name(q.class_id), libpci(PCI_LOOKUP_CLASS, int{q.class_id}))
        << std::hex << q.class_id;
    ++compared;
    found += expected.empty() ? 0 : 1;
  }
  pci_cleanup(pacc);
  EXPECT_GT(found, 100U) << "the comparison must cover real entries, not only misses";
  EXPECT_EQ(compared, queries.size());
}

// --- The scan against a line-by-line reading -------------------------------------------------

// What the scan must give, read the plainest way: one line at a time, the state (section,
// current vendor or base class, wanted or not) changed by every line that is not blank, a
// comment or a TAB line; a TAB line read only when it has one TAB and its vendor or class is
// wanted; later lines overwrite earlier names.
std::optional<unsigned> ref_hex(std::string_view s, std::size_t n) {
  if (s.size() < n) return std::nullopt;
  unsigned v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[i];
    unsigned digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    v = v * 16 + digit;
  }
  return v;
}

std::string ref_name(std::string_view rest) {
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
    rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' '))
    rest.remove_suffix(1);
  return std::string(rest);
}

PciNames reference_lookup(std::string_view text, const std::vector<PciNameQuery>& queries) {
  std::set<unsigned> vendors;
  std::set<std::pair<unsigned, unsigned>> devices;
  std::set<unsigned> classes;
  std::set<unsigned> bases;
  for (const PciNameQuery& q : queries) {
    vendors.insert(q.vendor_id);
    devices.insert({q.vendor_id, q.device_id});
    classes.insert(q.class_id);
    bases.insert(q.class_id >> 8U);
  }
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  PciNames names;
  std::map<unsigned, std::string> base_names;
  char section = '-';  // 'v' vendor, 'c' class, '-' neither
  unsigned current = 0;
  bool wanted = false;
  for (std::string_view line : lines) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] != '\t') {
      if (line.size() >= 2 && line[0] == 'C' && line[1] == ' ') {
        const auto base = ref_hex(line.substr(2), 2);
        section = base ? 'c' : '-';
        current = base.value_or(0);
        wanted = base && bases.contains(*base);
        if (wanted) base_names[current] = ref_name(line.substr(4));
      } else {
        const auto vendor = ref_hex(line, 4);
        const bool is_vendor = vendor && line.size() > 4 && line[4] == ' ';
        section = is_vendor ? 'v' : '-';
        current = vendor.value_or(0);
        wanted = is_vendor && vendors.contains(current);
        if (wanted) names.vendors[static_cast<std::uint16_t>(current)] = ref_name(line.substr(4));
      }
      continue;
    }
    if (!wanted || line.size() < 2 || line[1] == '\t') continue;
    if (section == 'v') {
      const auto device = ref_hex(line.substr(1), 4);
      if (device && devices.contains({current, *device})) {
        names.devices[{static_cast<std::uint16_t>(current), static_cast<std::uint16_t>(*device)}] =
            ref_name(line.substr(5));
      }
    } else if (section == 'c') {
      const auto sub = ref_hex(line.substr(1), 2);
      if (sub && classes.contains(current << 8U | *sub)) {
        names.classes[static_cast<std::uint16_t>(current << 8U | *sub)] = ref_name(line.substr(3));
      }
    }
  }
  for (unsigned id : classes) {
    const auto key = static_cast<std::uint16_t>(id);
    if (names.classes.contains(key) || !base_names.contains(id >> 8U)) continue;
    std::array<char, 8> num{};
    std::snprintf(num.data(), num.size(), "%04x", id);
    names.classes[key] = base_names[id >> 8U] + " [" + num.data() + "]";
  }
  return names;
}

// Only the names of `queries` out of `all` (the answer for a superset): a query's names do not
// depend on the other queries (checked below on a few sets against the reference itself).
PciNames restrict_to(const PciNames& all, const std::vector<PciNameQuery>& queries) {
  PciNames out;
  for (const PciNameQuery& q : queries) {
    if (auto it = all.vendors.find(q.vendor_id); it != all.vendors.end()) out.vendors.insert(*it);
    if (auto it = all.devices.find({q.vendor_id, q.device_id}); it != all.devices.end()) {
      out.devices.insert(*it);
    }
    if (auto it = all.classes.find(q.class_id); it != all.classes.end()) out.classes.insert(*it);
  }
  return out;
}

void expect_same(const PciNames& got, const PciNames& want, const std::string& what) {
  EXPECT_EQ(got.vendors, want.vendors) << what;
  EXPECT_EQ(got.devices, want.devices) << what;
  EXPECT_EQ(got.classes, want.classes) << what;
}

using detail::PciIdsScan;
// Where the CPU lacks AVX2 (or the build SSE2) a finder falls back to the next, which is then
// compared twice.
constexpr std::array<PciIdsScan, 3> kScans{PciIdsScan::kAvx2, PciIdsScan::kSse2,
                                           PciIdsScan::kPortable};

std::string scan_label(PciIdsScan scan) {
  switch (scan) {
    case PciIdsScan::kAvx2:
      return "AVX2 finder";
    case PciIdsScan::kSse2:
      return "SSE2 finder";
    case PciIdsScan::kPortable:
      return "portable finder";
  }
  return "?";
}

// Every vendor, device and class the system's pci.ids lists, asked for in one set, then in
// many small random sets (with IDs it does not list), by both finders and through the mapped
// file (which releases pages as it goes).
TEST(PciIds, ScanEqualsTheLineByLineReadingOnTheSystemDatabase) {
  const auto file = PciIdsFile::open_system();
  ASSERT_TRUE(file.has_value()) << "no pci.ids: install the pci.ids package (pciutils)";
  const std::string_view text = file->text();

  std::vector<PciNameQuery> all;
  std::vector<std::uint16_t> listed_classes;
  unsigned vendor = 0;
  unsigned base = 0;
  char section = '-';
  for (std::size_t start = 0; start < text.size();) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(start, nl - start);
    start = nl + 1;
    if (line.starts_with("C ")) {
      section = 'c';
      base = ref_hex(line.substr(2), 2).value_or(0);
      listed_classes.push_back(static_cast<std::uint16_t>(base << 8U | 0x7fU));  // unlisted
    } else if (auto v = ref_hex(line, 4); v && line.size() > 4 && line[4] == ' ') {
      section = 'v';
      vendor = *v;
      all.push_back({static_cast<std::uint16_t>(vendor), 0xfffe, 0});
    } else if (line.size() > 1 && line[0] == '\t' && line[1] != '\t') {
      if (auto d = ref_hex(line.substr(1), 4); section == 'v' && d) {
        all.push_back({static_cast<std::uint16_t>(vendor), static_cast<std::uint16_t>(*d), 0});
      } else if (auto sub = ref_hex(line.substr(1), 2); section == 'c' && sub) {
        listed_classes.push_back(static_cast<std::uint16_t>(base << 8U | *sub));
      }
    }
  }
  ASSERT_GT(all.size(), 10000U) << "the system pci.ids looks truncated";
  for (std::size_t i = 0; i < all.size(); ++i) {
    all[i].class_id = listed_classes[i % listed_classes.size()];
  }

  std::mt19937 rng(18);
  std::vector<std::vector<PciNameQuery>> sets;
  for (int k = 0; k < 12; ++k) {
    std::vector<PciNameQuery> set;
    const auto size = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    for (std::size_t i = 0; i < size; ++i) {
      PciNameQuery q = all[std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(rng)];
      if (rng() % 4 == 0) q.device_id = static_cast<std::uint16_t>(rng());  // mostly unlisted
      if (rng() % 8 == 0) q.vendor_id = static_cast<std::uint16_t>(rng());
      if (rng() % 4 == 0) q.class_id = static_cast<std::uint16_t>(rng() % 0x1400);
      set.push_back(q);
    }
    sets.push_back(std::move(set));
  }
  std::vector<PciNameQuery> everything = all;
  for (const auto& set : sets)
    everything.insert(everything.end(), set.begin(), set.end());

  const PciNames want_all = reference_lookup(text, everything);
  EXPECT_GT(want_all.devices.size(), 10000U);
  expect_same(lookup_pci_names(*file, everything), want_all, "all, through the mapped file");
  // The system's file is one the sorted search takes (it does not give up and scan).
  ASSERT_GE(text.size(), detail::kSortedSearchFrom);
  const std::optional<PciNames> sorted_all = detail::lookup_sorted_pci_names(text, everything);
  ASSERT_TRUE(sorted_all.has_value()) << "the sorted search gave up on the system's pci.ids";
  expect_same(*sorted_all, want_all, "all, sorted search");
  for (PciIdsScan scan : kScans) {
    expect_same(detail::lookup_pci_names(text, everything, scan), want_all,
                "all, " + scan_label(scan));
  }
  for (std::size_t k = 0; k < sets.size(); ++k) {
    const PciNames want = restrict_to(want_all, sets[k]);
    if (k < 3)
      expect_same(reference_lookup(text, sets[k]), want, "restriction of set " + std::to_string(k));
    for (PciIdsScan scan : kScans) {
      expect_same(detail::lookup_pci_names(text, sets[k], scan), want,
                  "set " + std::to_string(k) + ", " + scan_label(scan));
    }
    expect_same(lookup_pci_names(*file, sets[k]), want, "set " + std::to_string(k) + ", file");
    const std::optional<PciNames> sorted = detail::lookup_sorted_pci_names(text, sets[k]);
    ASSERT_TRUE(sorted.has_value()) << "set " << k;
    expect_same(*sorted, want, "set " + std::to_string(k) + ", sorted search");
  }
}

// A pci.ids laid out as its maintainers keep it and longer than kSortedSearchFrom: vendors in
// increasing order with random gaps (0000 and ffff among them), most with a few devices, some
// with blocks of hundreds of kilobytes (where the search's probe points land and must walk to
// the vendor lines either side), subsystems, comment and blank lines among a block's lines and
// between vendors, uppercase IDs, then the class section. `listed` gets what it lists.
std::string sorted_text(std::mt19937& rng, std::vector<PciNameQuery>& listed) {
  std::set<unsigned> vendor_set{0x0000, 0xffff};
  const std::size_t vendors = 200 + rng() % 200;
  while (vendor_set.size() < vendors)
    vendor_set.insert(static_cast<unsigned>(rng() % 0x10000));
  auto hex4 = [&](unsigned id) {
    std::array<char, 8> buf{};
    std::snprintf(buf.data(), buf.size(), rng() % 16 == 0 ? "%04X" : "%04x", id);
    return std::string(buf.data());
  };
  auto name = [&](const char* what, unsigned id) {
    return std::string("  ") + what + " " + std::to_string(id) + (rng() % 8 == 0 ? " [x]" : "");
  };
  std::string text = "#\n#\tList of PCI ID's\n#\n\n# Vendors, devices and subsystems.\n";
  std::size_t large = 0;
  for (unsigned vendor : vendor_set) {
    text += hex4(vendor) + name("Vendor", vendor) + "\n";
    const bool big = large < 4 && rng() % 40 == 0;
    large += big ? 1 : 0;
    const std::size_t count = big ? 1500 + rng() % 2500 : rng() % 12;
    std::set<unsigned> device_set;
    while (device_set.size() < count)
      device_set.insert(static_cast<unsigned>(rng() % 0x10000));
    for (unsigned device : device_set) {
      if (rng() % 50 == 0) text += "# a comment among the devices\n";
      if (rng() % 200 == 0) text += "\n";
      text += "\t" + hex4(device) + name("Device", device) + "\n";
      listed.push_back({static_cast<std::uint16_t>(vendor), static_cast<std::uint16_t>(device), 0});
      for (auto sub = static_cast<unsigned>(rng() % 3 == 0 ? rng() % 6 : 0); sub > 0; --sub) {
        text += "\t\t" + hex4(static_cast<unsigned>(rng() % 0x10000)) + " " + hex4(sub) +
                name("Subsystem", sub) + "\n";
      }
    }
    if (count == 0) listed.push_back({static_cast<std::uint16_t>(vendor), 0xfffe, 0});
    if (rng() % 30 == 0) text += "# between two vendors\n";
  }
  text += "\n\n# List of known device classes, subclasses and programming interfaces\n\n";
  for (unsigned base : {0x00U, 0x01U, 0x02U, 0x03U, 0x0cU, 0x12U, 0xffU}) {
    text += "C " + hex4(base).substr(2) + name("Class", base) + "\n";
    for (unsigned sub : {0x00U, 0x02U, 0x07U, 0x80U}) {
      if (rng() % 3 == 0) continue;
      text += "\t" + hex4(sub).substr(2) + name("Subclass", sub) + "\n";
      if (rng() % 2 == 0) text += "\t\t00  Prog-if\n";
    }
  }
  if (rng() % 2 == 0) text.pop_back();  // no final newline
  return text;
}

std::vector<PciNameQuery> sorted_queries(std::mt19937& rng,
                                         const std::vector<PciNameQuery>& listed) {
  std::vector<PciNameQuery> queries;
  const std::size_t n = rng() % 5 == 0 ? 60 : 1 + rng() % 12;
  for (std::size_t i = 0; i < n; ++i) {
    PciNameQuery q = listed[rng() % listed.size()];
    switch (rng() % 6) {
      case 0:  // a vendor next to a listed one: often not listed
        q.vendor_id = static_cast<std::uint16_t>(q.vendor_id + (rng() % 2 == 0 ? 1 : -1));
        break;
      case 1:
        q.device_id = static_cast<std::uint16_t>(rng());
        break;
      case 2:
        q.vendor_id = static_cast<std::uint16_t>(rng());
        break;
      default:
        break;
    }
    q.class_id = static_cast<std::uint16_t>((rng() % 0x14) << 8 | (rng() % 3 == 0 ? 0x80 : 0x02));
    queries.push_back(q);
  }
  return queries;
}

// The sorted search on such texts: it never gives up, and finds what the line-by-line reading
// finds — vendors, devices (in the large blocks too), misses, classes and their fallback.
TEST(PciIds, SortedSearchEqualsTheLineByLineReadingOnSortedTexts) {
  std::mt19937 rng(1819);
  std::size_t found = 0;
  std::size_t missed = 0;
  for (int round = 0; round < 24; ++round) {
    std::vector<PciNameQuery> listed;
    const std::string text = sorted_text(rng, listed);
    ASSERT_GE(text.size(), detail::kSortedSearchFrom) << "text #" << round;
    // In a buffer of exactly its size, as in the hostile texts' test.
    const auto exact = std::make_unique<char[]>(text.size());
    std::copy(text.begin(), text.end(), exact.get());
    const std::string_view view(exact.get(), text.size());
    for (int k = 0; k < 8; ++k) {
      const std::vector<PciNameQuery> queries = sorted_queries(rng, listed);
      const PciNames want = reference_lookup(text, queries);
      found += want.vendors.size() + want.devices.size();
      missed += queries.size() - want.devices.size();
      const std::optional<PciNames> got = detail::lookup_sorted_pci_names(view, queries);
      ASSERT_TRUE(got.has_value()) << "gave up on text #" << round << ", set " << k;
      expect_same(*got, want, "text #" + std::to_string(round) + ", set " + std::to_string(k));
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(found, 500U);
  EXPECT_GT(missed, 100U);
}

// A vendor listed again right after its block, laid out so that the search's first probe point
// (the text's middle) lies 100 bytes into the first listing's block: the search finds the first
// listing (backwards, before it reads as far as the second), reads its block, sees the same ID
// next and gives up — it cannot tell which listing's names the scan would take.
TEST(PciIds, SortedSearchGivesUpAtAVendorListedAgainAfterItsBlock) {
  const std::string head = "0001  A\n\t0001  " + std::string(1000, 'a') + "\n";
  const std::string first = "0002  B\n\t0001  " + std::string(600, 'b') + "\n";
  const std::string again = "0002  B listed again\n\t0002  y\n";
  const std::size_t middle = head.size() + 100;
  const std::size_t used = head.size() + first.size() + again.size() + 16;  // + the tail's frame
  ASSERT_LT(used, 2 * middle);
  const std::string tail = "0003  C\n\t0001  " + std::string(2 * middle - used, 'c') + "\n";
  const std::string text = head + first + again + tail;
  ASSERT_EQ(text.size() / 2, middle);
  const std::vector<PciNameQuery> queries = {{0x0002, 0x0002, 0x0000}};
  EXPECT_EQ(detail::lookup_sorted_pci_names(text, queries), std::nullopt);
  // Without the second listing the same search answers.
  const std::optional<PciNames> names =
      detail::lookup_sorted_pci_names(head + first + tail, queries);
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(names->vendor(0x0002), "B");
}

std::string hex_id(unsigned id) {
  std::array<char, 8> buf{};
  std::snprintf(buf.data(), buf.size(), "%04x", id);
  return std::string(buf.data());
}

// One vendor with a block of `count` devices (IDs 0x0010 apart, subsystems under some), padded
// with small vendors before and after to more than kSortedSearchFrom; `edit` may change the
// block's device lines before they are joined. The binary search among a vendor's devices
// reads a few lines around some twenty points of such a block.
std::string text_with_large_block(std::size_t count,
                                  const std::function<void(std::vector<std::string>&)>& edit) {
  std::string text = "# pci.ids\n";
  for (unsigned v = 0x1000; v < 0x1800; ++v)
    text += hex_id(v) + "  Small vendor\n\t0001  Its device\n";
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < count; ++i) {
    const auto id = static_cast<unsigned>(0x10 * (i + 1));
    lines.push_back("\t" + hex_id(id) + "  Device " + std::to_string(id) + "\n");
    if (i % 3 == 0) lines.back() += "\t\t1028 " + hex_id(id) + "  Subsystem\n";
  }
  edit(lines);
  text += "8086  Large vendor\n";
  for (const std::string& line : lines)
    text += line;
  for (unsigned v = 0x8087; v < 0x8800; ++v)
    text += hex_id(v) + "  Small vendor\n\t0001  Its device\n";
  text += "C 02  Network controller\n\t00  Ethernet controller\n";
  return text;
}

// Devices at the block's start, middle and end, next to listed ones, below and above them all.
std::vector<PciNameQuery> large_block_queries() {
  std::vector<PciNameQuery> queries;
  for (unsigned id : {0x0000U, 0x0010U, 0x0011U, 0x0020U, 0x2000U, 0x2008U, 0x4ff0U, 0x5000U,
                      0x5010U, 0xfff0U, 0xffffU})
    queries.push_back({0x8086, static_cast<std::uint16_t>(id), 0x0200});
  queries.push_back({0x1003, 0x0001, 0x0200});
  return queries;
}

// The sorted search's binary search among a vendor's devices finds what the line-by-line
// reading finds: the first and last device, misses between, below and above, and of a device
// listed twice in a row (which the maintainers' file never does) the second listing, as the
// scan takes the last.
TEST(PciIds, SortedSearchFindsDevicesInALargeBlockAsTheScanDoes) {
  const auto queries = large_block_queries();
  for (std::size_t count : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{1280}}) {
    const std::string text = text_with_large_block(count, [](std::vector<std::string>&) {});
    ASSERT_GE(text.size(), detail::kSortedSearchFrom);
    const std::optional<PciNames> got = detail::lookup_sorted_pci_names(text, queries);
    ASSERT_TRUE(got.has_value()) << count << " devices";
    expect_same(*got, reference_lookup(text, queries), std::to_string(count) + " devices");
  }
  const std::string twice = text_with_large_block(1280, [](std::vector<std::string>& lines) {
    lines.insert(lines.begin() + 0x200, "\t2000  Listed again\n");  // after 0x2000's lines
    lines.insert(lines.begin() + 1, "\t0010  Listed again\n\t\t0010 0001  Sub\n");
  });
  const std::optional<PciNames> got = detail::lookup_sorted_pci_names(twice, queries);
  ASSERT_TRUE(got.has_value());
  expect_same(*got, reference_lookup(twice, queries), "devices listed twice in a row");
  EXPECT_EQ(got->device(0x8086, 0x2000), "Listed again");
  EXPECT_EQ(got->device(0x8086, 0x0010), "Listed again");
}

// A block whose device lines are out of order, or hold a line without an ID, where the binary
// search compares them: the block is read line by line instead, and the names are the scan's
// (the other vendors' still come from the search, which does not give up).
TEST(PciIds, SortedSearchReadsABlockOutOfOrderLineByLine) {
  const auto queries = large_block_queries();
  const std::vector<std::pair<std::string, std::function<void(std::vector<std::string>&)>>> edits =
      {
          {"devices in decreasing order",
           [](std::vector<std::string>& lines) { std::reverse(lines.begin(), lines.end()); }},
          {"lines without IDs",
           [](std::vector<std::string>& lines) {
             for (std::size_t i = 0; i < lines.size(); i += 2)
               lines[i] = "\tzz  No ID\n";
           }},
          {"the middle out of order",
           [](std::vector<std::string>& lines) {
             std::reverse(lines.begin() + 300, lines.begin() + 900);
           }},
          // Found where it is in order first; the search for a device past the last one then
          // meets the last line, and the block's names become the scan's, this one's included.
          {"a device listed again at the block's end",
           [](std::vector<std::string>& lines) {
             lines.push_back("\t0010  Listed again, out of order\n");
           }},
          // Met on the way from a listing to the next line: the search reads that line too.
          {"a line without an ID between two listings",
           [](std::vector<std::string>& lines) {
             lines.insert(lines.begin() + 0x200, "\t\r\n\t2000  Listed again\n");
           }},
          {"a lower ID between two listings",
           [](std::vector<std::string>& lines) {
             lines.insert(lines.begin() + 0x200, "\t1ff0  Out of order\n\t2000  Listed again\n");
           }},
      };
  for (const auto& [what, edit] : edits) {
    SCOPED_TRACE(what);
    const std::string text = text_with_large_block(1280, edit);
    const std::optional<PciNames> got = detail::lookup_sorted_pci_names(text, queries);
    ASSERT_TRUE(got.has_value());
    expect_same(*got, reference_lookup(text, queries), what);
    EXPECT_EQ(got->vendor(0x1003), "Small vendor");
  }
}

// A database not laid out as the search needs: where it meets that, the search gives up, and
// the lookup through the file scans it all — the names are the line-by-line reading's.
TEST(PciIds, SortedSearchGivesUpOnAFileOutOfOrderAndTheFileIsScanned) {
  std::mt19937 rng(1820);
  std::vector<PciNameQuery> listed;
  const std::string sorted = sorted_text(rng, listed);
  // The text's top-level lines, each with the lines under it.
  std::vector<std::string> blocks;
  std::size_t classes = sorted.find("\n\n# List of known device classes");
  ASSERT_NE(classes, std::string::npos);
  for (std::size_t start = sorted.find("\n0000") + 1; start < classes;) {
    std::size_t next = start;
    do {
      next = sorted.find('\n', next) + 1;
    } while (next < classes &&
             (sorted[next] == '\t' || sorted[next] == '#' || sorted[next] == '\n'));
    blocks.push_back(sorted.substr(start, std::min(next, classes + 1) - start));
    start = next;
  }
  ASSERT_GT(blocks.size(), 100U);
  const std::string head = sorted.substr(0, sorted.find("\n0000") + 1);
  const std::string tail = sorted.substr(classes + 1);
  const std::size_t middle = blocks.size() / 2;
  const auto vendor_of = [](const std::string& block) {
    return static_cast<std::uint16_t>(std::stoul(block.substr(0, 4), nullptr, 16));
  };
  const std::vector<PciNameQuery> queries = {{vendor_of(blocks[middle]), 0x0000, 0x0200},
                                             {vendor_of(blocks[3]), 0x0000, 0x0300}};

  auto join = [&](const std::vector<std::string>& parts, const std::string& end) {
    std::string text = head;
    for (const std::string& part : parts)
      text += part;
    return text + end;
  };
  std::vector<std::string> reversed(blocks.rbegin(), blocks.rend());
  std::vector<std::string> twice = blocks;  // the vendor listed again right after its block
  twice.insert(twice.begin() + static_cast<std::ptrdiff_t>(middle) + 1,
               blocks[middle].substr(0, 4) + "  Listed again\n\t0000  Device of the second\n");
  std::vector<std::string> stray = blocks;  // a class line among the vendors
  stray.insert(stray.begin() + static_cast<std::ptrdiff_t>(middle) + 1, "C 02  Network\n");
  std::vector<std::string> crlf = blocks;  // a blank line of a CRLF file after the vendor
  crlf.insert(crlf.begin() + static_cast<std::ptrdiff_t>(middle) + 1, "\r\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"vendors in decreasing order", join(reversed, tail)},
      {"a vendor listed twice", join(twice, tail)},
      {"a class line among the vendors", join(stray, tail)},
      {"a CRLF blank line among the vendors", join(crlf, tail)},
  };
  ASSERT_FALSE(detail::lookup_sorted_pci_names(join(blocks, tail), queries) == std::nullopt)
      << "the text in its order must be searched";
  for (const auto& [what, text] : cases) {
    SCOPED_TRACE(what);
    const PciNames want = reference_lookup(text, queries);
    EXPECT_FALSE(want.vendors.empty());
    const std::optional<PciNames> searched = detail::lookup_sorted_pci_names(text, queries);
    if (what == "a vendor listed twice" && searched) {
      // Found at its second listing, where the block after it is in order: the names of the
      // last listing, as the scan takes them.
      expect_same(*searched, want, what);
    } else {
      EXPECT_EQ(searched, std::nullopt);
    }
    // Through the file, as topo dump reads it ($NODETOPO_PCI_IDS).
    char path[] = "/tmp/nodetopo-pci-ids-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    ::close(fd);
    ::setenv("NODETOPO_PCI_IDS", path, 1);
    const auto file = PciIdsFile::open_system();
    ::unsetenv("NODETOPO_PCI_IDS");
    ::unlink(path);
    ASSERT_TRUE(file.has_value());
    expect_same(lookup_pci_names(*file, queries), want, what);
  }
}

// Texts made of every kind of line, in random order and case, with LF or CRLF ends, comments
// and blank lines anywhere, duplicated vendors and class sections, garbage, and cut off at a
// random byte.
std::string hostile_text(std::mt19937& rng) {
  static constexpr std::array<const char*, 7> kVendors{"10de", "8086", "15B3", "1af4",
                                                       "abCD", "0000", "ffff"};
  static constexpr std::array<const char*, 5> kDevices{"2330", "22a3", "0B5c", "1021", "ffff"};
  static constexpr std::array<const char*, 4> kBases{"02", "03", "0C", "ff"};
  static constexpr std::array<const char*, 4> kSubs{"00", "07", "0a", "80"};
  static constexpr std::string_view kAlphabet = "\t \r#C0aF9x:\\";
  auto pick = [&](const auto& list) { return std::string(list[rng() % list.size()]); };
  auto name = [&] {
    std::string s = rng() % 3 == 0 ? " " : "  ";
    const std::size_t len = rng() % 12;
    for (std::size_t i = 0; i < len; ++i)
      s += static_cast<char>('a' + rng() % 26);
    if (rng() % 4 == 0) s += rng() % 2 == 0 ? " " : " \r";
    return s;
  };
  std::string text;
  const std::size_t lines = rng() % 160;
  const bool crlf_file = rng() % 3 == 0;
  for (std::size_t i = 0; i < lines; ++i) {
    std::string line;
    switch (rng() % 16) {
      case 0:
      case 1:
        line = pick(kVendors) + name();
        break;
      case 2:
      case 3:
      case 4:
        line = "\t" + pick(kDevices) + name();
        break;
      case 5:
      case 6:
      case 7:  // subsystems, long runs of them: what the finder skips
        line =
            "\t\t" + pick(kVendors) + " " + pick(kDevices) + name() + std::string(rng() % 70, 'z');
        break;
      case 8:
        line = "C " + pick(kBases) + name();
        break;
      case 9:
        line = "\t" + pick(kSubs) + name();
        break;
      case 10:
        line = rng() % 2 == 0 ? "# " + name() : "#\t" + pick(kDevices) + name();
        break;
      case 11:
        line = rng() % 2 == 0 ? "" : "\r";
        break;
      case 12: {  // near misses: a vendor without its space, a short class, a lone TAB, and
                  // bytes that equal hex digits once bit 5 is set (octal 030 | 0x20 is '8')
        static constexpr std::array<const char*, 10> kOdd{
            "10de\tx",       "10de",   "C 0",      "C",          "\t",
            "\t\t\t2330  x", "\tC 02", " 10de  x", "\030086  x", "\t\022330  x"};
        line = pick(kOdd);
        break;
      }
      default: {
        const std::size_t len = rng() % 10;
        for (std::size_t k = 0; k < len; ++k)
          line += kAlphabet[rng() % kAlphabet.size()];
        break;
      }
    }
    text += line;
    text += crlf_file || rng() % 10 == 0 ? "\r\n" : "\n";
  }
  if (!text.empty() && rng() % 2 == 0) text.resize(rng() % text.size());  // cut anywhere
  return text;
}

std::vector<PciNameQuery> hostile_queries(std::mt19937& rng) {
  static constexpr std::array<std::uint16_t, 8> kVendors{0x10de, 0x8086, 0x15b3, 0x1af4,
                                                         0xabcd, 0x0000, 0xffff, 0x1234};
  static constexpr std::array<std::uint16_t, 6> kDevices{0x2330, 0x22a3, 0x0b5c,
                                                         0x1021, 0xffff, 0x5678};
  static constexpr std::array<std::uint16_t, 7> kClasses{0x0200, 0x0207, 0x0300, 0x030a,
                                                         0x0c80, 0xff00, 0x0c03};
  std::vector<PciNameQuery> queries;
  // Sometimes more than IdSet's handful, so both of its lookups are taken.
  const std::size_t n = rng() % 4 == 0 ? 30 : 1 + rng() % 4;
  for (std::size_t i = 0; i < n; ++i) {
    queries.push_back({kVendors[rng() % kVendors.size()],
                       i >= 8 ? static_cast<std::uint16_t>(i) : kDevices[rng() % kDevices.size()],
                       kClasses[rng() % kClasses.size()]});
  }
  return queries;
}

TEST(PciIds, ScanEqualsTheLineByLineReadingOnHostileTexts) {
  std::mt19937 rng(1818);
  std::size_t found = 0;
  for (int round = 0; round < 1200; ++round) {
    const std::string text = hostile_text(rng);
    const std::vector<PciNameQuery> queries = hostile_queries(rng);
    const PciNames want = reference_lookup(text, queries);
    found += want.vendors.size() + want.devices.size() + want.classes.size();
    // In a buffer of exactly its size, so that a read past the end is one the sanitizers (the
    // ci preset's replay, valgrind) see: a std::string has spare capacity behind its text.
    const auto exact = std::make_unique<char[]>(text.size());
    std::copy(text.begin(), text.end(), exact.get());
    const std::string_view view(exact.get(), text.size());
    for (PciIdsScan scan : kScans) {
      expect_same(detail::lookup_pci_names(view, queries, scan), want,
                  scan_label(scan) + " on text #" + std::to_string(round));
    }
    // The sorted search on text in no order: it may give up, or take another line of a name
    // listed twice, but reads only the text (the sanitizers' replay and valgrind check that)
    // and returns only names the text holds.
    if (const auto sorted = detail::lookup_sorted_pci_names(view, queries)) {
      for (const auto& [id, vendor] : sorted->vendors)
        EXPECT_NE(text.find(vendor), std::string::npos) << "text #" << round;
      for (const auto& [key, device] : sorted->devices)
        EXPECT_NE(text.find(device), std::string::npos) << "text #" << round;
    }
    if (HasFailure()) {
      ADD_FAILURE() << "first failing text:\n" << text;
      return;
    }
  }
  EXPECT_GT(found, 1200U) << "the texts must hold the names asked for, not only misses";
}

// The line that matters at every byte offset, so the finders' 64-, 16-, 8- and 1-byte steps
// and their ends are each crossed: a wanted vendor after a run of skipped lines, and a device
// of it after a run of subsystems.
TEST(PciIds, FindersSeeTheNextLineAtEveryOffset) {
  const std::vector<PciNameQuery> q = {{0x10de, 0x2330, 0x0302}};
  for (std::size_t pad = 0; pad < 200; ++pad) {
    const std::string skipped = "0001  Other\n\t0002  x" + std::string(pad, 'y') + "\n";
    const std::string subsystems = "\t\t10de 16c1  " + std::string(pad, 'z') + "\n";
    for (bool final_newline : {true, false}) {
      const std::string text =
          skipped + "10de  NVIDIA\n" + subsystems + "\t2330  H100" + (final_newline ? "\n" : "");
      for (PciIdsScan scan : kScans) {
        const PciNames names = detail::lookup_pci_names(text, q, scan);
        EXPECT_EQ(names.vendor(0x10de), "NVIDIA") << pad << " " << scan_label(scan);
        EXPECT_EQ(names.device(0x10de, 0x2330), "H100") << pad << " " << scan_label(scan);
        EXPECT_EQ(names.vendors.size(), 1U);
      }
    }
  }
}

}  // namespace
}  // namespace nodetopo::probes
