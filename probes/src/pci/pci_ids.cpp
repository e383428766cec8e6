#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

// The line of `text` starting at `s`, without its newline.
std::string_view line_starting_at(std::string_view text, std::size_t s) {
  const void* nl = std::memchr(text.data() + s, '\n', text.size() - s);
  const std::size_t end = nl != nullptr
                              ? static_cast<std::size_t>(static_cast<const char*>(nl) - text.data())
                              : text.size();
  return text.substr(s, end - s);
}

// Sorts `values` and drops repeats.
template <class T>
void sort_unique(std::vector<T>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

// The vendors asked for, sorted and unique.
std::vector<std::uint16_t> vendor_ids_of(std::span<const PciNameQuery> queries) {
  std::vector<std::uint16_t> ids;
  ids.reserve(queries.size());
  for (const PciNameQuery& q : queries)
    ids.push_back(q.vendor_id);
  sort_unique(ids);
  return ids;
}

// The devices asked for, as `vendor << 16 | device` keys, sorted and unique: a vendor's devices
// lie together, in the order its block lists them.
std::vector<std::uint32_t> device_keys_of(std::span<const PciNameQuery> queries) {
  std::vector<std::uint32_t> keys;
  keys.reserve(queries.size());
  for (const PciNameQuery& q : queries)
    keys.push_back(std::uint32_t{q.vendor_id} << 16 | q.device_id);
  sort_unique(keys);
  return keys;
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

// The last newline in [lo, i) whose next line has no TAB (kOutside's stop, looked for
// backwards), or `n` if none: the sorted search's way back from a point inside a block to the
// vendor line above it. 16 bytes a step with SSE2, since a block may be hundreds of kilobytes.
std::size_t prev_mark_outside(const char* d, std::size_t lo, std::size_t i, std::size_t n) {
  const FirstDigits unused{};
  auto stops = [&](std::size_t k) {
    return d[k] == '\n' && stops_at<Find::kOutside>(d, k, n, unused);
  };
  std::size_t k = i;  // candidates left: [lo, k)
  if (k > lo && k >= n) {
    --k;
    if (stops(k)) return k;
  }
#if defined(__SSE2__)
  // [k - 16, k) with the byte after each: reads d[k - 16 .. k], inside the text while k < n.
  while (k >= lo + 16) {
    // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the intrinsic's pointer type
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + k - 16));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + k - 15));
    // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
    const auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_andnot_si128(
        _mm_cmpeq_epi8(b, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(a, _mm_set1_epi8('\n')))));
    if (m != 0) return k - 16 + static_cast<std::size_t>(31 - std::countl_zero(m));
    k -= 16;
  }
#endif
  while (k > lo) {
    --k;
    if (stops(k)) return k;
  }
  return n;
}

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
    sort_unique(ids);
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
// bytes, that the text before `pos` will not be read again. With `block_end`, the scan reads one
// block only — the line at the text's start and the lines under it — and stops at the next line
// that would change the state (a top-level line that is not a comment or blank), whose offset
// (or the text's size) it stores there: the sorted search's read of one vendor.
constexpr std::size_t kReleaseEvery = std::size_t{256} << 10;

template <class Consumed>
PciNames scan_names(std::string_view text, std::span<const PciNameQuery> queries,
                    detail::PciIdsScan scan, Consumed&& consumed,
                    std::size_t* block_end = nullptr) {
  std::vector<std::uint16_t> want_class;
  want_class.reserve(queries.size());
  for (const PciNameQuery& q : queries)
    want_class.push_back(q.class_id);
  IdSet want_vendor;
  want_vendor.assign(vendor_ids_of(queries));
  const std::vector<std::uint32_t> device_keys = device_keys_of(queries);
  sort_unique(want_class);
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
  auto line_at = [text](std::size_t s) { return line_starting_at(text, s); };

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
      if (block_end != nullptr && s != 0) {
        *block_end = s;
        return names;  // one block read: nothing of a class section to finish
      }
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
          // upper_bound to key | 0xffff: key + 0x10000 wraps to 0 for vendor ffff.
          const auto hi = std::upper_bound(lo, device_keys.end(), key | 0xffffU);
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
  if (block_end != nullptr) *block_end = n;
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

// The sorted search (lookup_pci_names(const PciIdsFile&) says when and why). pci.ids as its
// maintainers write it: a header of comments, the vendors in increasing order of ID, each with
// the lines under it (comment lines at the start of a line may sit among them), then the class
// section, "C " lines and the lines under them, to the end. A vendor is found by a binary
// search over byte offsets: from the middle of the range it reads both ways in turn to the
// nearest vendor line (forwards with the kOutside finder, backwards with prev_mark_outside(): the
// TAB lines between are crossed 128 or 16 bytes a step), whose ID halves the range; what was read
// around it is left out of the next range, and the vendor lines found by one vendor's search
// narrow the next one's. A point in a small block costs a few hundred bytes; one in a large
// block (Intel's is 370 KB) about twice the way to its nearer end. Then the line finder
// crosses the vendor's block to its end without stopping at its devices, and each device asked
// for is found by a binary search of the same kind among the block's device lines, which
// pci.ids also keeps in increasing order of ID (bench/micro, with the file mapped afresh each
// time as topo dump maps it: 233 against 202 µs for a small Intel node's names, 331 against
// 259 µs for an Intel server's, docs/performance.md round 23). Where two device lines it compares
// are out of order, or one has no ID, that block alone is read as the scan reads it. The class
// section is found from the end, backwards. A line the layout does not allow — a top-level line
// other than a vendor, comment or blank one before the class section, vendor IDs out of order
// where the search compares them, a vendor listed again after its block — makes it give up
// (nullopt): the caller then scans the whole text.

// The first stretch the search reads either side of a probe point (half of pci.ids's blocks are
// shorter).
constexpr std::size_t kFirstStretch = 256;

class SortedSearch {
 public:
  explicit SortedSearch(std::string_view text)
      : text_(text),
        d_(text.data()),
        n_(text.size()),
        next_top_(finders_for(kFastest)[static_cast<std::size_t>(Find::kOutside)]) {}

  std::optional<PciNames> lookup(std::span<const PciNameQuery> queries) {
    const std::size_t classes = class_section();
    vendors_end_ = classes;
    const std::vector<std::uint16_t> vendors = vendor_ids_of(queries);
    const std::vector<std::uint32_t> device_keys = device_keys_of(queries);

    PciNames names;
    for (std::uint16_t vendor : vendors) {
      const auto at = find_vendor(vendor);
      if (!at) return std::nullopt;
      if (*at == vendors_end_) continue;  // not listed
      const std::size_t next = block_end(*at);
      // The line that ended the block must be a later vendor (or the class section).
      if (next < vendors_end_) {
        const Line line = classify(next);
        if (line != Line::kVendor || id_at(next) <= vendor) return std::nullopt;
        landmarks_.emplace(id_at(next), next);
      }
      const std::string_view vendor_line = line_at(*at);
      names.vendors[vendor] = name_after(vendor_line, 4);
      const std::size_t first = std::min(*at + vendor_line.size() + 1, next);
      const auto lo =
          std::lower_bound(device_keys.begin(), device_keys.end(), std::uint32_t{vendor} << 16);
      const auto hi =
          std::upper_bound(lo, device_keys.end(), std::uint32_t{vendor} << 16 | 0xffffU);
      for (auto key = lo; key != hi; ++key) {
        const auto device = static_cast<std::uint16_t>(*key);
        const std::optional<std::optional<std::size_t>> line = find_device(first, next, device);
        if (!line) {
          // Out of order where the search compared: the block is read line by line, and its
          // names replace those the search found in it (the scan takes a name's last listing).
          std::erase_if(names.devices,
                        [vendor](const auto& entry) { return entry.first.first == vendor; });
          PciNames block =
              scan_names(text_.substr(*at, next - *at), queries, kFastest, [](std::size_t) {});
          names.devices.merge(block.devices);
          break;
        }
        if (*line) names.devices[{vendor, device}] = name_after(line_at(**line).substr(1), 4);
      }
    }
    if (classes < n_) {
      PciNames block = scan_names(text_.substr(classes), queries, kFastest, [](std::size_t) {});
      names.classes = std::move(block.classes);
    }
    return names;
  }

 private:
  enum class Line { kVendor, kSkipped, kOther };

  // A top-level line: a vendor ("1234 " and its name), a comment or blank line, or another.
  [[nodiscard]] Line classify(std::size_t s) const {
    const char c = d_[s];
    if (c == '#' || c == '\n' || c == '\t') return Line::kSkipped;  // '\t': the text's first line
    if (s + 4 < n_ && d_[s + 4] == ' ' && hex_at(d_ + s, n_ - s, 4)) return Line::kVendor;
    return Line::kOther;
  }

  [[nodiscard]] std::uint16_t id_at(std::size_t s) const { return *hex_at(d_ + s, n_ - s, 4); }

  [[nodiscard]] std::string_view line_at(std::size_t s) const { return line_starting_at(text_, s); }

  // Where the block of the vendor line at `at` ends, as the scan ends it: at the next line that
  // is neither under it (a TAB line), a comment nor blank; the text's size if none. The line
  // finder crosses the block 128 bytes a step without stopping at its devices.
  [[nodiscard]] std::size_t block_end(std::size_t at) const {
    const FirstDigits unused{};
    for (std::size_t s = at;;) {
      const std::size_t mark = next_top_(d_, s, n_, unused);
      if (mark + 1 >= n_) return n_;
      s = mark + 1;
      if (d_[s] != '\n' && d_[s] != '#') return s;
    }
  }

  // A device line of a block: one TAB, then (for a valid one) four hex digits, read as the scan
  // reads them.
  struct DeviceLine {
    std::size_t at = 0;    // its start
    std::size_t next = 0;  // the start of the line after it
    int id = -1;           // -1: the line does not start with four hex digits
  };

  // The first device line starting in [p, to), nullopt if none. `p` and `to` may lie inside a
  // line; only the line's start counts.
  [[nodiscard]] std::optional<DeviceLine> device_from(std::size_t p, std::size_t to) const {
    std::size_t s = p;
    if (s != 0 && s < to && d_[s - 1] != '\n') {
      const void* nl = std::memchr(d_ + s, '\n', to - s);
      if (nl == nullptr) return std::nullopt;
      s = static_cast<std::size_t>(static_cast<const char*>(nl) - d_) + 1;
    }
    while (s < to) {
      const std::size_t end = std::min(n_, s + line_at(s).size() + 1);
      if (d_[s] == '\t' && s + 1 < n_ && d_[s + 1] != '\t' && d_[s + 1] != '\n') {
        const auto id = hex_at(d_ + s + 1, n_ - s - 1, 4);
        return DeviceLine{s, end, id ? int{*id} : -1};
      }
      s = end;
    }
    return std::nullopt;
  }

  // The line the scan takes `device`'s name from in the block whose device lines lie in
  // [first, end) (the last of its listings), nullopt inside when it is not listed. A binary
  // search over byte offsets, through the device line at or after each probe point, since
  // pci.ids lists a vendor's devices in increasing order of ID: about twenty reads of a line
  // or three instead of the whole block (Intel's is 370 KB). nullopt when the lines it compares
  // are not in that order, or one of them has no ID: the caller then scans the block.
  [[nodiscard]] std::optional<std::optional<std::size_t>> find_device(std::size_t first,
                                                                      std::size_t end,
                                                                      std::uint16_t device) const {
    std::size_t lo = first;               // the device lines before lo have lower IDs ...
    std::size_t hi = end;                 // ... those from hi on have IDs not lower
    int below = -1;                       // the ID of a device line before lo
    int above = 0x10000;                  // ... and of one from hi on
    std::optional<DeviceLine> candidate;  // the first device line found with an ID not lower
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      const std::optional<DeviceLine> line = device_from(mid, hi);
      if (!line) {
        hi = mid;
        continue;
      }
      if (line->id < 0 || line->id < below || line->id > above) return std::nullopt;
      if (line->id < device) {
        below = line->id;
        lo = line->next;
      } else {
        above = line->id;
        candidate = line;
        hi = mid;  // no device line starts in [mid, line->at)
      }
    }
    if (!candidate || candidate->id != device) return std::optional<std::size_t>();
    // A device listed twice lies twice in a row; the scan takes the last listing. The lines
    // read on the way are compared too: one without an ID, or a lower one, and the block is
    // not in the order this relies on.
    for (;;) {
      const std::optional<DeviceLine> after = device_from(candidate->next, end);
      if (!after || after->id > device) break;
      if (after->id < device) return std::nullopt;  // also -1: no ID
      candidate = after;
    }
    return std::optional<std::size_t>(candidate->at);
  }

  // The offset of the first "C " line of the class section at the text's end (the text's size
  // when it has none): the top-level lines read backwards (prev_mark_outside() crosses the lines
  // under them) down to one that is neither a class, a comment nor blank — the last vendor's.
  [[nodiscard]] std::size_t class_section() const {
    std::size_t start = n_;
    for (std::size_t to = n_;;) {
      const std::optional<std::size_t> line = last_top_line(0, to);
      if (!line) break;
      const char c = d_[*line];
      if (c == 'C' && *line + 1 < n_ && d_[*line + 1] == ' ') {
        start = *line;
      } else if (c != '#' && c != '\n') {
        break;
      }
      to = *line;
    }
    return start;
  }

  // The start of the last line starting in [from, to) that has no TAB, nullopt if none.
  [[nodiscard]] std::optional<std::size_t> last_top_line(std::size_t from, std::size_t to) const {
    if (to <= from) return std::nullopt;
    // Such a line starts after a newline in [from - 1, to - 1), or is the text's first line.
    const std::size_t mark = prev_mark_outside(d_, from == 0 ? 0 : from - 1, to - 1, n_);
    if (mark != n_) return mark + 1;
    if (from == 0 && d_[0] != '\t') return 0;
    return std::nullopt;
  }

  // The first vendor line starting in [from, limit), `limit` if none; nullopt at a line the
  // layout does not allow.
  [[nodiscard]] std::optional<std::size_t> first_vendor(std::size_t from, std::size_t limit) const {
    // The finder may look two bytes past a newline it judges: up to `limit + 2`, so a line
    // starting before `limit` is judged on its own bytes.
    const std::size_t bound = std::min(n_, limit + 2);
    const FirstDigits unused{};
    std::size_t s = from;
    if (from != 0) {
      const std::size_t mark = next_top_(d_, from - 1, bound, unused);
      if (mark + 1 >= limit) return limit;
      s = mark + 1;
    }
    while (s < limit) {
      switch (classify(s)) {
        case Line::kVendor:
          return s;
        case Line::kOther:
          return std::nullopt;
        case Line::kSkipped:
          break;
      }
      const std::size_t mark = next_top_(d_, s, bound, unused);
      if (mark + 1 >= limit) return limit;
      s = mark + 1;
    }
    return limit;
  }

  // The vendor line nearest a probe point, and the stretch read around it, which holds no
  // vendor line but this one.
  struct Hit {
    std::size_t at = 0;
    std::size_t read_from = 0;
    std::size_t read_to = 0;
  };

  // The vendor line in [lo, hi) nearest `p`, looked for on both sides in turn (forwards with the
  // line finder, backwards with prev_mark_outside()), over a stretch that grows by half each
  // turn (so a point inside a large block costs at most about 2.5 times its distance to the
  // block's nearer end); nullopt when [lo, hi) has none, and `bad` set at a line the layout
  // does not allow.
  [[nodiscard]] std::optional<Hit> nearest(std::size_t p, std::size_t lo, std::size_t hi,
                                           bool& bad) const {
    std::size_t ahead = p;       // [p, ahead) read: no vendor line starts there
    std::size_t behind = p + 1;  // [behind, p] read
    for (std::size_t stretch = kFirstStretch; ahead < hi || behind > lo; stretch += stretch / 2) {
      if (ahead < hi) {
        const std::size_t limit = std::min(hi, ahead + stretch);
        const std::optional<std::size_t> at = first_vendor(ahead, limit);
        if (!at) break;
        // [p, *at) read ahead, [behind, p] behind (empty while behind is p + 1)
        if (*at < limit) return Hit{*at, std::min(behind, p), *at + 1};
        ahead = limit;
      }
      if (behind > lo) {
        const std::size_t from = behind - std::min(behind - lo, stretch);
        for (std::size_t to = behind;;) {  // the top-level lines starting in [from, to), last first
          const std::optional<std::size_t> line = last_top_line(from, to);
          if (!line) break;
          const Line kind = classify(*line);
          if (kind == Line::kVendor) return Hit{*line, *line, std::max(ahead, p + 1)};
          if (kind == Line::kOther) {
            bad = true;
            return std::nullopt;
          }
          to = *line;
        }
        behind = from;
      }
    }
    bad = ahead < hi;  // the loop broke at a bad line ahead
    return std::nullopt;
  }

  // The offset of `vendor`'s line, vendors_end_ when it is not listed; nullopt when the text is
  // not laid out as the search needs. lower_bound over byte offsets: every vendor line before
  // `lo` has a lower ID, every one from `hi` on a higher; each step splits the range at the
  // vendor line nearest its middle.
  // The vendor lines found by the searches before (landmarks_) narrow the range at the start.
  [[nodiscard]] std::optional<std::size_t> find_vendor(std::uint16_t vendor) {
    std::size_t lo = 0;
    std::size_t hi = vendors_end_;
    int below = -1;       // the ID of a vendor line found before lo
    int above = 0x10000;  // ... and from hi on: the IDs found between must lie between
    if (const auto known = landmarks_.find(vendor); known != landmarks_.end()) return known->second;
    if (const auto next = landmarks_.upper_bound(vendor); next != landmarks_.end()) {
      above = next->first;
      hi = next->second;
    }
    if (const auto next = landmarks_.lower_bound(vendor); next != landmarks_.begin()) {
      below = std::prev(next)->first;
      lo = std::prev(next)->second + 1;
    }
    if (lo > hi) return std::nullopt;  // landmarks out of order
    while (lo < hi) {
      bool bad = false;
      const std::optional<Hit> hit = nearest(lo + (hi - lo) / 2, lo, hi, bad);
      if (bad) return std::nullopt;
      if (!hit) break;  // no vendor line in [lo, hi)
      const int id = id_at(hit->at);
      if (id <= below || id >= above) return std::nullopt;  // out of order
      landmarks_.emplace(id, hit->at);
      if (id == vendor) return hit->at;
      // Nothing read around the hit need be read again.
      if (id < vendor) {
        below = id;
        lo = hit->read_to;
      } else {
        above = id;
        hi = hit->read_from;
      }
    }
    return vendors_end_;
  }

  std::string_view text_;
  const char* d_;
  std::size_t n_;
  Finder next_top_;
  std::size_t vendors_end_ = 0;
  std::map<int, std::size_t> landmarks_;  // vendor lines found: ID -> offset
};

}  // namespace

std::optional<PciNames> detail::lookup_sorted_pci_names(std::string_view text,
                                                        std::span<const PciNameQuery> queries) {
  return SortedSearch(text).lookup(queries);
}

PciNames detail::lookup_pci_names(std::string_view text, std::span<const PciNameQuery> queries,
                                  PciIdsScan scan) {
  return scan_names(text, queries, scan, [](std::size_t) {});
}

PciNames lookup_pci_names(std::string_view text, std::span<const PciNameQuery> queries) {
  return scan_names(text, queries, kFastest, [](std::size_t) {});
}

PciNames lookup_pci_names(const PciIdsFile& file, std::span<const PciNameQuery> queries) {
  const std::string_view text = file.text();
  if (text.size() >= detail::kSortedSearchFrom) {
    if (auto names = detail::lookup_sorted_pci_names(text, queries)) return std::move(*names);
  }
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
