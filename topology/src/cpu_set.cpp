#include <algorithm>
#include <array>
#include <bit>
#include <charconv>

#include <nodetopo/topology/cpu_set.hpp>

namespace nodetopo {

namespace {
constexpr std::uint32_t kWordBits = 64;
}

void CpuSet::insert(std::uint32_t cpu) {
  const std::size_t word = cpu / kWordBits;
  if (words_.size() <= word) words_.resize(word + 1, 0);
  words_[word] |= std::uint64_t{1} << (cpu % kWordBits);
}

void CpuSet::insert_range(std::uint32_t first, std::uint32_t last) {
  if (last < first) return;
  // A word at a time: "0-255" is four stores, not 256 (every PCI function has such a list).
  const std::size_t last_word = last / kWordBits;
  if (words_.size() <= last_word) words_.resize(last_word + 1, 0);
  for (std::size_t word = first / kWordBits; word <= last_word; ++word) {
    const std::uint32_t lo = word == first / kWordBits ? first % kWordBits : 0;
    const std::uint32_t hi = word == last_word ? last % kWordBits : kWordBits - 1;
    const std::uint64_t high_mask =
        hi == kWordBits - 1 ? ~std::uint64_t{0} : (std::uint64_t{1} << (hi + 1)) - 1;
    words_[word] |= high_mask & ~((std::uint64_t{1} << lo) - 1);
  }
}

bool CpuSet::contains(std::uint32_t cpu) const {
  const std::size_t word = cpu / kWordBits;
  return word < words_.size() && ((words_[word] >> (cpu % kWordBits)) & 1U) != 0;
}

std::size_t CpuSet::count() const {
  std::size_t n = 0;
  for (std::uint64_t w : words_)
    n += static_cast<std::size_t>(std::popcount(w));
  return n;
}

bool CpuSet::is_subset_of(const CpuSet& other) const {
  for (std::size_t i = 0; i < words_.size(); ++i) {
    const std::uint64_t theirs = i < other.words_.size() ? other.words_[i] : 0;
    if ((words_[i] & ~theirs) != 0) return false;
  }
  return true;
}

bool CpuSet::intersects(const CpuSet& other) const {
  const std::size_t n = std::min(words_.size(), other.words_.size());
  for (std::size_t i = 0; i < n; ++i) {
    if ((words_[i] & other.words_[i]) != 0) return true;
  }
  return false;
}

CpuSet& CpuSet::operator|=(const CpuSet& other) {
  if (words_.size() < other.words_.size()) words_.resize(other.words_.size(), 0);
  for (std::size_t i = 0; i < other.words_.size(); ++i)
    words_[i] |= other.words_[i];
  return *this;
}

CpuSet& CpuSet::operator&=(const CpuSet& other) {
  for (std::size_t i = 0; i < words_.size(); ++i) {
    words_[i] &= i < other.words_.size() ? other.words_[i] : 0;
  }
  trim();
  return *this;
}

std::vector<std::uint32_t> CpuSet::members() const {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < words_.size(); ++i) {
    std::uint64_t w = words_[i];
    while (w != 0) {
      const int bit = std::countr_zero(w);
      out.push_back(static_cast<std::uint32_t>(i * kWordBits + static_cast<std::size_t>(bit)));
      w &= w - 1;
    }
  }
  return out;
}

namespace {

// Appends "first" or "first-last" (with a ',' before it unless it starts the list).
void append_range(std::string& out, std::uint32_t first, std::uint32_t last) {
  std::array<char, 2 + 2 * 10> buf{};  // ",4294967295-4294967295"
  char* p = buf.data();
  if (!out.empty()) *p++ = ',';
  p = std::to_chars(p, buf.data() + buf.size(), first).ptr;
  if (last != first) {
    *p++ = '-';
    p = std::to_chars(p, buf.data() + buf.size(), last).ptr;
  }
  out.append(buf.data(), p);
}

}  // namespace

std::string CpuSet::to_list() const {
  // Straight from the words, one step per run of CPUs rather than per CPU (a NUMA node of 56
  // CPUs is one run): no members() vector. Complementing the word finds where a run ends.
  std::string out;
  const std::size_t bits = words_.size() * kWordBits;
  std::size_t cpu = 0;
  // The first CPU from `from` on whose bit is `set`; `bits` when there is none.
  auto next = [&](std::size_t from, bool set) {
    for (std::size_t i = from / kWordBits; i < words_.size(); ++i) {
      std::uint64_t w = set ? words_[i] : ~words_[i];
      if (i == from / kWordBits) w &= ~std::uint64_t{0} << (from % kWordBits);
      if (w != 0) return i * kWordBits + static_cast<std::size_t>(std::countr_zero(w));
    }
    return bits;
  };
  while ((cpu = next(cpu, true)) < bits) {
    const std::size_t end = next(cpu, false);
    append_range(out, static_cast<std::uint32_t>(cpu), static_cast<std::uint32_t>(end - 1));
    cpu = end;
  }
  return out;
}

std::string format_ranges(const std::vector<std::uint32_t>& ascending) {
  std::string out;
  for (std::size_t i = 0; i < ascending.size();) {
    std::size_t j = i;
    while (j + 1 < ascending.size() && ascending[j + 1] == ascending[j] + 1)
      ++j;
    append_range(out, ascending[i], ascending[j]);
    i = j + 1;
  }
  return out;
}

void CpuSet::trim() {
  while (!words_.empty() && words_.back() == 0)
    words_.pop_back();
}

bool operator==(const CpuSet& a, const CpuSet& b) {
  const std::size_t n = std::max(a.words_.size(), b.words_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = i < a.words_.size() ? a.words_[i] : 0;
    const std::uint64_t y = i < b.words_.size() ? b.words_[i] : 0;
    if (x != y) return false;
  }
  return true;
}

}  // namespace nodetopo
