#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <nodetopo/probes/pci_ids.hpp>

#include "pci/pci_ids_scan.hpp"

namespace nodetopo::probes {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses exactly `n` lowercase or uppercase hex digits at `p`, of which `avail` bytes may be
// read. A hex digit is never a newline, so digits found are always inside the line at `p`.
std::optional<std::uint16_t> hex_at(const char* p, std::size_t avail, std::size_t n) {
  if (avail < n) return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int digit = hex_digit(p[i]);
    if (digit < 0) return std::nullopt;
    value = value << 4 | static_cast<unsigned>(digit);
  }
  return static_cast<std::uint16_t>(value);
}

// The name after an ID: pci.ids separates them with two spaces.
std::string name_after(std::string_view line, std::size_t id_end) {
  std::string_view rest = line.substr(id_end);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
    rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' '))
    rest.remove_suffix(1);
  return std::string(rest);
}

}  // namespace

std::string PciNames::vendor(std::uint16_t vendor_id) const {
  auto it = vendors.find(vendor_id);
  return it != vendors.end() ? it->second : std::string();
}

std::string PciNames::device(std::uint16_t vendor_id, std::uint16_t device_id) const {
  auto it = devices.find({vendor_id, device_id});
  return it != devices.end() ? it->second : std::string();
}

std::string PciNames::class_name(std::uint16_t class_id) const {
  auto it = classes.find(class_id);
  return it != classes.end() ? it->second : std::string();
}

namespace {

// How the scan works. The state of the line-by-line reading (which vendor or class a line
// belongs to, whether it is wanted) changes only at a line that starts with neither TAB, '#'
// nor a newline; TAB lines matter only under a wanted vendor or class, and there only those with
// one TAB (two are subsystems and prog-ifs). So the scan asks a line finder for the next line
// that can matter — a newline followed by no TAB outside wanted blocks, or by not two TABs
// inside them — and looks at that line exactly as a line-by-line reading would, skipping the
// rest unseen. Nearly all of pci.ids is the blocks of vendors nobody asked for, which the vector
// finder crosses 64 bytes a step; a line-by-line reading costs a memchr() call per line.

// The first newline at or after `i` whose next line can matter (see above), or `n` if none. A
// byte past the end reads as neither TAB nor newline.
template <bool kInWanted>
std::size_t next_mark_bytes(const char* d, std::size_t i, std::size_t n) {
  for (; i < n; ++i) {
    if (d[i] != '\n') continue;
    const bool tab1 = i + 1 < n && d[i + 1] == '\t';
    const bool tab2 = i + 2 < n && d[i + 2] == '\t';
    if (kInWanted ? !(tab1 && tab2) : !tab1) return i;
  }
  return n;
}

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;

std::uint64_t load64(const char* p) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}

// 0x80 in each byte of `w` that equals `c`, 0 in the others. Exact: no carry crosses a byte
// (the usual "has zero byte" trick can flag the byte above a match).
std::uint64_t bytes_equal(std::uint64_t w, char c) {
  const std::uint64_t t = w ^ (kOnes * static_cast<unsigned char>(c));
  return ~(((t & kLow7) + kLow7) | t | kLow7);
}

// The index of the first byte in memory order flagged in `m` (non-zero).
std::size_t first_flagged(std::uint64_t m) {
  if constexpr (std::endian::native == std::endian::little) {
    return static_cast<std::size_t>(std::countr_zero(m)) / 8;
  } else {
    return static_cast<std::size_t>(std::countl_zero(m)) / 8;
  }
}

// The portable finder: eight bytes a step, the same answer as next_mark_bytes().
template <bool kInWanted>
std::size_t next_mark_words(const char* d, std::size_t i, std::size_t n) {
  while (i + 8 + 2 <= n) {
    const std::uint64_t newline = bytes_equal(load64(d + i), '\n');
    std::uint64_t tabbed = bytes_equal(load64(d + i + 1), '\t');
    if constexpr (kInWanted) tabbed &= bytes_equal(load64(d + i + 2), '\t');
    const std::uint64_t marks = newline & ~tabbed;
    if (marks != 0) return i + first_flagged(marks);
    i += 8;
  }
  return next_mark_bytes<kInWanted>(d, i, n);
}

#if defined(__SSE2__)
// The vector finder: 0xff in each byte of the 16 at `d + i` that is a newline the scan wants.
template <bool kInWanted>
__m128i marks16(const char* d, std::size_t i) {
  auto load = [d](std::size_t at) {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): the intrinsic's pointer type
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + at));
  };
  const __m128i newline = _mm_cmpeq_epi8(load(i), _mm_set1_epi8('\n'));
  __m128i tabbed = _mm_cmpeq_epi8(load(i + 1), _mm_set1_epi8('\t'));
  if constexpr (kInWanted) {
    tabbed = _mm_and_si128(tabbed, _mm_cmpeq_epi8(load(i + 2), _mm_set1_epi8('\t')));
  }
  return _mm_andnot_si128(tabbed, newline);
}

std::uint64_t mask16(__m128i v) {
  return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(v)));
}

template <bool kInWanted>
std::size_t next_mark_sse2(const char* d, std::size_t i, std::size_t n) {
  // Reads 16 bytes at i, i + 1 and i + 2: all before n.
  while (i + 64 + 2 <= n) {
    const __m128i m0 = marks16<kInWanted>(d, i);
    const __m128i m1 = marks16<kInWanted>(d, i + 16);
    const __m128i m2 = marks16<kInWanted>(d, i + 32);
    const __m128i m3 = marks16<kInWanted>(d, i + 48);
    const __m128i any = _mm_or_si128(_mm_or_si128(m0, m1), _mm_or_si128(m2, m3));
    if (_mm_movemask_epi8(any) != 0) {
      const std::uint64_t m = mask16(m0) | mask16(m1) << 16 | mask16(m2) << 32 | mask16(m3) << 48;
      return i + static_cast<std::size_t>(std::countr_zero(m));
    }
    i += 64;
  }
  while (i + 16 + 2 <= n) {
    const std::uint64_t m = mask16(marks16<kInWanted>(d, i));
    if (m != 0) return i + static_cast<std::size_t>(std::countr_zero(m));
    i += 16;
  }
  return next_mark_bytes<kInWanted>(d, i, n);
}
#endif

std::size_t next_mark(const char* d, std::size_t i, std::size_t n, bool in_wanted,
                      detail::PciIdsScan scan) {
#if defined(__SSE2__)
  if (scan == detail::PciIdsScan::kVector) {
    return in_wanted ? next_mark_sse2<true>(d, i, n) : next_mark_sse2<false>(d, i, n);
  }
#else
  (void)scan;
#endif
  return in_wanted ? next_mark_words<true>(d, i, n) : next_mark_words<false>(d, i, n);
}

// The four ID digits at `p` as they lie in memory, lower-cased by setting bit 5 of each byte
// (digits already have it). Equal words for valid hex digits mean equal IDs; a byte that is
// not a hex digit may still collide, so a match is checked with hex_at().
std::uint32_t lowered_word(const char* p) {
  std::uint32_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w | 0x20202020U;
}

std::uint32_t id_word(std::uint16_t id) {
  std::array<char, 5> digits{};
  std::snprintf(digits.data(), digits.size(), "%04x", static_cast<unsigned>(id));
  return lowered_word(digits.data());
}

// Sorted unique IDs with their lowered_word()s, for telling whether the four hex digits at a
// line's start are one of them: a few word compares for the usual handful, a binary search
// for many.
class IdSet {
 public:
  void assign(std::vector<std::uint16_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    ids_ = std::move(ids);
    words_.clear();
    for (std::uint16_t id : ids_)
      words_.push_back(id_word(id));
  }

  /// The ID written at `p` (4 hex digits, `avail` bytes readable) if it is in the set.
  [[nodiscard]] std::optional<std::uint16_t> find(const char* p, std::size_t avail) const {
    if (avail < 4 || ids_.empty()) return std::nullopt;
    if (ids_.size() <= kLinear) {
      const std::uint32_t w = lowered_word(p);
      for (std::size_t k = 0; k < words_.size(); ++k) {
        if (words_[k] == w) return hex_at(p, avail, 4);
      }
      return std::nullopt;
    }
    const auto id = hex_at(p, avail, 4);
    if (!id || !std::binary_search(ids_.begin(), ids_.end(), *id)) return std::nullopt;
    return id;
  }

 private:
  static constexpr std::size_t kLinear = 8;
  std::vector<std::uint16_t> ids_;
  std::vector<std::uint32_t> words_;
};

// The scan behind both lookup_pci_names(): `consumed(pos)` is told, about every kReleaseEvery
// bytes, that the text before `pos` will not be read again.
constexpr std::size_t kReleaseEvery = std::size_t{256} << 10;

template <class Consumed>
PciNames scan_names(std::string_view text, std::span<const PciNameQuery> queries,
                    detail::PciIdsScan scan, Consumed&& consumed) {
  std::vector<std::uint16_t> vendor_ids;
  std::vector<std::uint32_t> device_keys;  // vendor << 16 | device
  std::vector<std::uint16_t> want_class;
  vendor_ids.reserve(queries.size());
  device_keys.reserve(queries.size());
  want_class.reserve(queries.size());
  for (const PciNameQuery& q : queries) {
    vendor_ids.push_back(q.vendor_id);
    device_keys.push_back(std::uint32_t{q.vendor_id} << 16 | q.device_id);
    want_class.push_back(q.class_id);
  }
  IdSet want_vendor;
  want_vendor.assign(vendor_ids);
  std::sort(device_keys.begin(), device_keys.end());
  device_keys.erase(std::unique(device_keys.begin(), device_keys.end()), device_keys.end());
  std::sort(want_class.begin(), want_class.end());
  want_class.erase(std::unique(want_class.begin(), want_class.end()), want_class.end());
  std::vector<std::uint8_t> want_base;
  for (std::uint16_t c : want_class)
    want_base.push_back(static_cast<std::uint8_t>(c >> 8));
  want_base.erase(std::unique(want_base.begin(), want_base.end()), want_base.end());

  PciNames names;
  std::map<std::uint8_t, std::string> base_names;
  enum class Section { kNone, kVendor, kClass };
  Section section = Section::kNone;
  std::uint16_t current = 0;  // vendor id, or base class
  bool current_wanted = false;
  IdSet current_devices;  // the wanted devices of the current vendor

  const char* const d = text.data();
  const std::size_t n = text.size();
  auto line_at = [&](std::size_t s) {
    const void* nl = std::memchr(d + s, '\n', n - s);
    const std::size_t end =
        nl != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nl) - d) : n;
    return text.substr(s, end - s);
  };

  std::size_t s = 0;  // the start of a line that can matter
  std::size_t next_release = kReleaseEvery;
  while (s < n) {
    if (s >= next_release) {
      consumed(s);
      next_release = s + kReleaseEvery;
    }
    const char first = d[s];
    if (first == '\t') {
      // A line with one TAB: a device of the current vendor, or a subclass.
      if (current_wanted && s + 1 < n && d[s + 1] != '\t' && d[s + 1] != '\n') {
        if (section == Section::kVendor) {
          if (auto device = current_devices.find(d + s + 1, n - s - 1)) {
            names.devices[{current, *device}] = name_after(line_at(s).substr(1), 4);
          }
        } else if (auto sub = hex_at(d + s + 1, n - s - 1, 2)) {
          const auto id = static_cast<std::uint16_t>((current << 8) | *sub);
          if (std::binary_search(want_class.begin(), want_class.end(), id)) {
            names.classes[id] = name_after(line_at(s).substr(1), 2);
          }
        }
      }
    } else if (first != '\n' && first != '#') {  // not a blank line or a comment
      if (first == 'C' && s + 1 < n && d[s + 1] == ' ') {
        const auto base = hex_at(d + s + 2, n - s - 2, 2);
        section = base ? Section::kClass : Section::kNone;
        current = base.value_or(0);
        current_wanted = base && std::binary_search(want_base.begin(), want_base.end(),
                                                    static_cast<std::uint8_t>(*base));
        if (current_wanted)
          base_names[static_cast<std::uint8_t>(current)] = name_after(line_at(s), 4);
      } else {
        // A vendor ("1234 " and its name) or any other top-level line, which ends the vendor
        // list as far as the lines under it go ("X" sections, garbage). Which of the two an
        // unwanted line is does not matter: nothing under it is read.
        const auto vendor =
            s + 4 < n && d[s + 4] == ' ' ? want_vendor.find(d + s, n - s) : std::nullopt;
        section = vendor ? Section::kVendor : Section::kNone;
        current = vendor.value_or(0);
        current_wanted = vendor.has_value();
        if (current_wanted) {
          names.vendors[current] = name_after(line_at(s), 4);
          const std::uint32_t key = std::uint32_t{current} << 16;
          const auto lo = std::lower_bound(device_keys.begin(), device_keys.end(), key);
          const auto hi = std::lower_bound(lo, device_keys.end(), key + 0x10000U);
          std::vector<std::uint16_t> ids;
          for (auto it = lo; it != hi; ++it)
            ids.push_back(static_cast<std::uint16_t>(*it));
          current_devices.assign(std::move(ids));
        }
      }
    }
    const std::size_t mark = next_mark(d, s, n, current_wanted, scan);
    if (mark >= n) break;
    s = mark + 1;
  }
  // libpci's fallback for an unlisted subclass: the base class name and the number.
  for (std::uint16_t id : want_class) {
    if (names.classes.contains(id)) continue;
    auto base = base_names.find(static_cast<std::uint8_t>(id >> 8));
    if (base == base_names.end()) continue;
    std::array<char, 8> num{};
    std::snprintf(num.data(), num.size(), "%04x", id);
    names.classes[id] = base->second + " [" + num.data() + "]";
  }
  return names;
}

constexpr detail::PciIdsScan kFastest = detail::PciIdsScan::kVector;

}  // namespace

PciNames detail::lookup_pci_names(std::string_view text, std::span<const PciNameQuery> queries,
                                  PciIdsScan scan) {
  return scan_names(text, queries, scan, [](std::size_t) {});
}

PciNames lookup_pci_names(std::string_view text, std::span<const PciNameQuery> queries) {
  return scan_names(text, queries, kFastest, [](std::size_t) {});
}

PciNames lookup_pci_names(const PciIdsFile& file, std::span<const PciNameQuery> queries) {
  const std::string_view text = file.text();
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t released = 0;
  // The pages scanned are given back as the scan goes (the kernel keeps them in its page cache):
  // mapped all at once, the 1.3 MB file would count whole in the process's peak RSS.
  return scan_names(text, queries, kFastest, [&](std::size_t pos) {
    const std::size_t end = pos / page * page;
    if (end <= released) return;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): the mapping is ours; madvise wants
    // void*
    char* start = const_cast<char*>(text.data()) + released;
    ::madvise(start, end - released, MADV_DONTNEED);
    released = end;
  });
}

std::optional<PciIdsFile> PciIdsFile::open_system() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NODETOPO_PCI_IDS");
      env != nullptr && *env != '\0') {  // NOLINT
    candidates.emplace_back(env);
  }
  for (const char* path :
       {"/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids", "/usr/share/pci.ids"}) {
    candidates.emplace_back(path);
  }
  for (const std::string& path : candidates) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
      ::close(fd);
      continue;
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data == MAP_FAILED) continue;
    return PciIdsFile(data, size);
  }
  return std::nullopt;
}

PciIdsFile::~PciIdsFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

PciIdsFile::PciIdsFile(PciIdsFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

PciIdsFile& PciIdsFile::operator=(PciIdsFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace nodetopo::probes
