#include <algorithm>
#include <array>
#include <bit>
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
// AVX2 is taken where the CPU has it (function attributes, no -mavx2: Debian's amd64 baseline
// is SSE2), asked of glibc through base's cpu_has_avx2(), not of __builtin_cpu_supports():
// libgcc's constructor behind the builtin runs CPUID a dozen more times, and in a virtual machine
// every CPUID is a trap to the hypervisor (0.18 ms more per exec on the benchmark VM).
#if defined(__x86_64__) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define NODETOPO_PCI_IDS_AVX2 1
#include <immintrin.h>
#endif

#include <nodetopo/base/cpu_features.hpp>
#include <nodetopo/base/hex.hpp>
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
// one TAB (two are subsystems and prog-ifs) whose first digit is the first digit of an ID asked
// for. So the scan asks a line finder for the next line that can matter — a newline followed by
// no TAB outside wanted blocks; inside them one followed by no TAB, or by one TAB and such a
// digit — and looks at that line exactly as a line-by-line reading would, skipping the rest
// unseen. Nearly all of pci.ids is the blocks of vendors nobody asked for, which the vector
// finders cross 128 (AVX2) or 64 (SSE2) bytes a step; a line-by-line reading costs a memchr() call
// per line. Inside a wanted vendor (Intel's block is 370 KB, 4,200 devices) the digit check
// (kDigits, when the IDs asked for there start with at most four different digits) spares
// stopping at most of its devices.

enum class Find {
  kOutside,  // outside wanted blocks: a line without a TAB
  kInside,   // inside: also any line with one TAB
  kDigits,   // inside: also a line with one TAB and one of FirstDigits
};

// The first digits, lower-cased (bit 5 set: digits have it already), of the IDs the lines with
// one TAB of the current block must start with to matter; at most four, unused places repeat a
// used one. A byte that is not a hex digit may equal one once bit 5 is set: such a line is
// looked at and refused there, as every line the finder stops at is.
using FirstDigits = std::array<char, 4>;

// Whether the line after the newline at `i` can matter (see above). A byte past the end reads
// as neither TAB nor newline nor digit.
template <Find kFind>
bool stops_at(const char* d, std::size_t i, std::size_t n, const FirstDigits& f) {
  if (i + 1 >= n || d[i + 1] != '\t') return true;
  if (kFind == Find::kOutside || i + 2 >= n) return false;
  const auto c = static_cast<char>(d[i + 2] | 0x20);
  return kFind == Find::kInside ? d[i + 2] != '\t'
                                : c == f[0] || c == f[1] || c == f[2] || c == f[3];
}

// The first newline at or after `i` whose next line can matter, or `n` if none: the portable
// finder, one memchr() per line (libc's is vectorised on every architecture; plain C++ eight
// bytes at a time measured twice as slow as that on x86-64).
template <Find kFind>
std::size_t next_mark_lines(const char* d, std::size_t i, std::size_t n, const FirstDigits& f) {
  while (i < n) {
    const void* nl = std::memchr(d + i, '\n', n - i);
    if (nl == nullptr) return n;
    i = static_cast<std::size_t>(static_cast<const char*>(nl) - d);
    if (stops_at<kFind>(d, i, n, f)) return i;
    ++i;
  }
  return n;
}

// The vector finders' last bytes, where a vector would read past the end.
template <Find kFind>
std::size_t next_mark_bytes(const char* d, std::size_t i, std::size_t n, const FirstDigits& f) {
  for (; i < n; ++i) {
    if (d[i] == '\n' && stops_at<kFind>(d, i, n, f)) return i;
  }
  return n;
}

#if defined(__SSE2__)
// The vector finders: 0xff in each byte of the 16 (32) at `d + i` that is a newline to stop at.
template <Find kFind>
[[gnu::always_inline]] inline __m128i marks16(const char* d, std::size_t i, const FirstDigits& f) {
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the intrinsic's pointer type
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i + 1));
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i + 2));
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  const __m128i newline = _mm_cmpeq_epi8(a, _mm_set1_epi8('\n'));
  __m128i skipped = _mm_cmpeq_epi8(b, _mm_set1_epi8('\t'));
  if constexpr (kFind == Find::kInside) {
    skipped = _mm_and_si128(skipped, _mm_cmpeq_epi8(c, _mm_set1_epi8('\t')));
  } else if constexpr (kFind == Find::kDigits) {
    const __m128i lc = _mm_or_si128(c, _mm_set1_epi8(0x20));
    const __m128i digit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(lc, _mm_set1_epi8(f[0])),
                                                    _mm_cmpeq_epi8(lc, _mm_set1_epi8(f[1]))),
                                       _mm_or_si128(_mm_cmpeq_epi8(lc, _mm_set1_epi8(f[2])),
                                                    _mm_cmpeq_epi8(lc, _mm_set1_epi8(f[3]))));
    skipped = _mm_andnot_si128(digit, skipped);
  }
  return _mm_andnot_si128(skipped, newline);
}

[[gnu::always_inline]] inline std::uint64_t mask16(__m128i v) {
  return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(v)));
}

template <Find kFind>
std::size_t next_mark_sse2(const char* d, std::size_t i, std::size_t n, const FirstDigits& f) {
  // Reads 16 bytes at i, i + 1 and i + 2: all before n.
  while (i + 64 + 2 <= n) {
    const __m128i m0 = marks16<kFind>(d, i, f);
    const __m128i m1 = marks16<kFind>(d, i + 16, f);
    const __m128i m2 = marks16<kFind>(d, i + 32, f);
    const __m128i m3 = marks16<kFind>(d, i + 48, f);
    const __m128i any = _mm_or_si128(_mm_or_si128(m0, m1), _mm_or_si128(m2, m3));
    if (_mm_movemask_epi8(any) != 0) {
      const std::uint64_t m = mask16(m0) | mask16(m1) << 16 | mask16(m2) << 32 | mask16(m3) << 48;
      return i + static_cast<std::size_t>(std::countr_zero(m));
    }
    i += 64;
  }
  while (i + 16 + 2 <= n) {
    const std::uint64_t m = mask16(marks16<kFind>(d, i, f));
    if (m != 0) return i + static_cast<std::size_t>(std::countr_zero(m));
    i += 16;
  }
  return next_mark_bytes<kFind>(d, i, n, f);
}
#endif

#if NODETOPO_PCI_IDS_AVX2
#define NODETOPO_AVX2 __attribute__((target("avx2")))

template <Find kFind>
[[gnu::always_inline]] inline NODETOPO_AVX2 __m256i marks32(const char* d, std::size_t i,
                                                            const FirstDigits& f) {
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the intrinsic's pointer type
  const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + i));
  const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + i + 1));
  const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + i + 2));
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
  const __m256i newline = _mm256_cmpeq_epi8(a, _mm256_set1_epi8('\n'));
  __m256i skipped = _mm256_cmpeq_epi8(b, _mm256_set1_epi8('\t'));
  if constexpr (kFind == Find::kInside) {
    skipped = _mm256_and_si256(skipped, _mm256_cmpeq_epi8(c, _mm256_set1_epi8('\t')));
  } else if constexpr (kFind == Find::kDigits) {
    const __m256i lc = _mm256_or_si256(c, _mm256_set1_epi8(0x20));
    const __m256i digit =
        _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(lc, _mm256_set1_epi8(f[0])),
                                        _mm256_cmpeq_epi8(lc, _mm256_set1_epi8(f[1]))),
                        _mm256_or_si256(_mm256_cmpeq_epi8(lc, _mm256_set1_epi8(f[2])),
                                        _mm256_cmpeq_epi8(lc, _mm256_set1_epi8(f[3]))));
    skipped = _mm256_andnot_si256(digit, skipped);
  }
  return _mm256_andnot_si256(skipped, newline);
}

[[gnu::always_inline]] inline NODETOPO_AVX2 std::uint64_t mask32(__m256i v) {
  return static_cast<std::uint64_t>(static_cast<unsigned>(_mm256_movemask_epi8(v)));
}

template <Find kFind>
NODETOPO_AVX2 std::size_t next_mark_avx2(const char* d, std::size_t i, std::size_t n,
                                         const FirstDigits& f) {
  // Reads 32 bytes at i, i + 1 and i + 2: all before n. 128 bytes a step: the finder crosses
  // about 500 bytes between two vendors.
  while (i + 128 + 2 <= n) {
    const __m256i m0 = marks32<kFind>(d, i, f);
    const __m256i m1 = marks32<kFind>(d, i + 32, f);
    const __m256i m2 = marks32<kFind>(d, i + 64, f);
    const __m256i m3 = marks32<kFind>(d, i + 96, f);
    const __m256i any = _mm256_or_si256(_mm256_or_si256(m0, m1), _mm256_or_si256(m2, m3));
    if (_mm256_testz_si256(any, any) == 0) {
      const std::uint64_t low = mask32(m0) | mask32(m1) << 32;
      if (low != 0) return i + static_cast<std::size_t>(std::countr_zero(low));
      const std::uint64_t high = mask32(m2) | mask32(m3) << 32;
      return i + 64 + static_cast<std::size_t>(std::countr_zero(high));
    }
    i += 128;
  }
  while (i + 32 + 2 <= n) {
    const std::uint64_t m = mask32(marks32<kFind>(d, i, f));
    if (m != 0) return i + static_cast<std::size_t>(std::countr_zero(m));
    i += 32;
  }
  return next_mark_sse2<kFind>(d, i, n, f);
}
#undef NODETOPO_AVX2
#endif

// The finders of one scan, by Find.
using Finder = std::size_t (*)(const char*, std::size_t, std::size_t, const FirstDigits&);
using Finders = std::array<Finder, 3>;

Finders finders_for(detail::PciIdsScan scan) {
#if NODETOPO_PCI_IDS_AVX2
  if (scan == detail::PciIdsScan::kAvx2 && cpu_has_avx2()) {
    return {next_mark_avx2<Find::kOutside>, next_mark_avx2<Find::kInside>,
            next_mark_avx2<Find::kDigits>};
  }
#endif
#if defined(__SSE2__)
  if (scan != detail::PciIdsScan::kPortable) {
    return {next_mark_sse2<Find::kOutside>, next_mark_sse2<Find::kInside>,
            next_mark_sse2<Find::kDigits>};
  }
#else
  (void)scan;
#endif
  return {next_mark_lines<Find::kOutside>, next_mark_lines<Find::kInside>,
          next_mark_lines<Find::kDigits>};
}

// The four ID digits at `p` as they lie in memory, lower-cased by setting bit 5 of each byte
// (digits already have it). Equal words for valid hex digits mean equal IDs; a byte that is
// not a hex digit may still collide, so a match is checked with hex_at().
std::uint32_t lowered_word(const char* p) {
  std::uint32_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w | 0x20202020U;
}

// The digits of `id` as lowered_word() reads them. base's write_hex(), not snprintf(): the first
// call of libc's printf machinery faults in about 200 KiB of libc's text and data (measured),
// which the peak RSS of topo dump would show.
std::uint32_t id_word(std::uint16_t id) {
  std::array<char, 4> digits{};
  write_hex(digits.data(), id, 4);
  return lowered_word(digits.data());
}

// Sorted unique IDs, for telling whether the four hex digits at a line's start are one of
// them: for the usual handful, eight compares of lowered_word()s without a branch (a word that
// no lowered_word() can be fills the unused places); for more, a binary search.
class IdSet {
 public:
  void assign(std::vector<std::uint16_t> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    ids_ = std::move(ids);
    words_.fill(0);  // lowered_word() has bit 5 set in each byte
    if (ids_.size() <= words_.size()) {
      for (std::size_t k = 0; k < ids_.size(); ++k)
        words_[k] = id_word(ids_[k]);
    }
  }

  /// The ID written at `p` (4 hex digits, `avail` bytes readable) if it is in the set.
  [[nodiscard, gnu::always_inline]] std::optional<std::uint16_t> find(const char* p,
                                                                      std::size_t avail) const {
    if (avail < 4) return std::nullopt;
    if (ids_.size() <= words_.size()) {
      const std::uint32_t w = lowered_word(p);
#if defined(__SSE2__)
      const __m128i key = _mm_set1_epi32(static_cast<int>(w));
      // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the intrinsic's pointer type
      const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(words_.data()));
      const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(words_.data() + 4));
      // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
      const bool hit =
          _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi32(lo, key), _mm_cmpeq_epi32(hi, key))) != 0;
#else
      const bool hit = (words_[0] == w) | (words_[1] == w) | (words_[2] == w) | (words_[3] == w) |
                       (words_[4] == w) | (words_[5] == w) | (words_[6] == w) | (words_[7] == w);
#endif
      return hit ? hex_at(p, avail, 4) : std::nullopt;
    }
    const auto id = hex_at(p, avail, 4);
    if (!id || !std::binary_search(ids_.begin(), ids_.end(), *id)) return std::nullopt;
    return id;
  }

 private:
  std::vector<std::uint16_t> ids_;
  alignas(16) std::array<std::uint32_t, 8> words_{};
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
  // How to find the lines that matter in the current block (when wanted), see Find.
  Find inside = Find::kInside;
  FirstDigits digits{};
  // Chooses kDigits for the IDs `ids` (of `width` digits) when they start with at most four
  // different digits.
  auto narrow_to = [&](const std::vector<std::uint16_t>& ids, unsigned width) {
    std::size_t count = 0;
    for (std::uint16_t id : ids) {
      std::array<char, 4> written{};
      write_hex(written.data(), id, static_cast<int>(width));
      const char c = written[0];
      if (std::find(digits.begin(), digits.begin() + count, c) != digits.begin() + count) continue;
      if (count == digits.size()) {
        inside = Find::kInside;
        return;
      }
      digits[count++] = c;
    }
    if (count == 0) {
      inside = Find::kOutside;  // nothing under this line can be wanted
      return;
    }
    for (std::size_t k = count; k < digits.size(); ++k)
      digits[k] = digits[0];
    inside = Find::kDigits;
  };

  const char* const d = text.data();
  const std::size_t n = text.size();
  const Finders find = finders_for(scan);
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
        if (current_wanted) {
          base_names[static_cast<std::uint8_t>(current)] = name_after(line_at(s), 4);
          const auto lo = std::lower_bound(want_class.begin(), want_class.end(), current << 8);
          const auto hi = std::lower_bound(lo, want_class.end(), (current + 1) << 8);
          std::vector<std::uint16_t> subs;
          for (auto it = lo; it != hi; ++it)
            subs.push_back(static_cast<std::uint8_t>(*it));
          narrow_to(subs, 2);
        }
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
          narrow_to(ids, 4);
          current_devices.assign(std::move(ids));
        }
      }
    }
    const Finder next = find[static_cast<std::size_t>(current_wanted ? inside : Find::kOutside)];
    const std::size_t mark = next(d, s, n, digits);
    if (mark >= n) break;
    s = mark + 1;
  }
  // libpci's fallback for an unlisted subclass: the base class name and the number.
  for (std::uint16_t id : want_class) {
    if (names.classes.contains(id)) continue;
    auto base = base_names.find(static_cast<std::uint8_t>(id >> 8));
    if (base == base_names.end()) continue;
    std::string name = base->second + " [";
    append_hex(name, id, 4);
    names.classes[id] = name + "]";
  }
  return names;
}

constexpr detail::PciIdsScan kFastest = detail::PciIdsScan::kAvx2;

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
