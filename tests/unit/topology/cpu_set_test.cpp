#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/topology/cpu_set.hpp>

namespace nodetopo {
namespace {

TEST(CpuSet, FormatsRangesLikeTheKernel) {
  CpuSet set;
  set.insert_range(0, 3);
  set.insert(8);
  set.insert_range(10, 11);
  set.insert(64);
  set.insert(127);
  EXPECT_EQ(set.to_list(), "0-3,8,10-11,64,127");
  EXPECT_EQ(set.count(), 9U);
  EXPECT_TRUE(set.contains(64));
  EXPECT_FALSE(set.contains(65));
  EXPECT_FALSE(set.contains(100000));
}

// The list form written the plain way, one member at a time.
std::string reference_list(const std::vector<std::uint32_t>& members) {
  std::string out;
  for (std::size_t i = 0; i < members.size();) {
    std::size_t j = i;
    while (j + 1 < members.size() && members[j + 1] == members[j] + 1)
      ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(members[i]);
    if (j > i) out += "-" + std::to_string(members[j]);
    i = j + 1;
  }
  return out;
}

TEST(CpuSet, ListMatchesMemberByMemberFormattingAcrossWordBoundaries) {
  std::mt19937 rng(7);
  auto below = [&rng](std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); };
  for (int round = 0; round < 2000; ++round) {
    CpuSet set;
    const std::uint32_t runs = below(6);
    for (std::uint32_t r = 0; r < runs; ++r) {
      // Runs that start and end on, just before and just after 64-bit word boundaries.
      const std::uint32_t first = below(4) * 64 + (below(3) == 0 ? 63 : below(64));
      const std::uint32_t length = below(3) == 0 ? 64 : below(70);
      set.insert_range(first, first + length);
    }
    const std::vector<std::uint32_t> members = set.members();
    ASSERT_EQ(set.to_list(), reference_list(members)) << "round " << round;
    ASSERT_EQ(format_ranges(members), reference_list(members)) << "round " << round;
  }
  CpuSet full;
  full.insert_range(0, 255);
  EXPECT_EQ(full.to_list(), "0-255");
  EXPECT_EQ(format_ranges({63, 64, 4294967294U, 4294967295U}), "63-64,4294967294-4294967295");
  EXPECT_EQ(format_ranges({}), "");
}

TEST(CpuSet, EmptySetFormatsAsEmptyString) {
  const CpuSet set;
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.to_list(), "");
}

TEST(CpuSet, SubsetAndIntersectionAcrossWordBoundaries) {
  CpuSet a;
  a.insert_range(60, 70);
  CpuSet b;
  b.insert_range(0, 200);
  CpuSet c;
  c.insert(5);
  EXPECT_TRUE(a.is_subset_of(b));
  EXPECT_FALSE(b.is_subset_of(a));
  EXPECT_TRUE(a.intersects(b));
  EXPECT_FALSE(a.intersects(c));
  EXPECT_TRUE(CpuSet().is_subset_of(c));
}

// insert_range fills whole words at once: every boundary case must equal CPU-by-CPU insertion.
TEST(CpuSet, RangeInsertionEqualsSingleInsertions) {
  const std::pair<std::uint32_t, std::uint32_t> ranges[] = {
      {0, 0},    {0, 63},    {0, 64},    {63, 64}, {1, 62},    {5, 200},
      {64, 127}, {127, 128}, {200, 200}, {0, 255}, {100, 1000}};
  for (const auto& [first, last] : ranges) {
    CpuSet by_range;
    by_range.insert_range(first, last);
    CpuSet by_cpu;
    for (std::uint32_t cpu = first; cpu <= last; ++cpu)
      by_cpu.insert(cpu);
    EXPECT_EQ(by_range, by_cpu) << first << "-" << last;
    EXPECT_EQ(by_range.count(), last - first + 1) << first << "-" << last;
    EXPECT_FALSE(by_range.contains(last + 1)) << first << "-" << last;
    if (first > 0) {
      EXPECT_FALSE(by_range.contains(first - 1)) << first << "-" << last;
    }
  }
  CpuSet reversed;
  reversed.insert_range(5, 4);
  EXPECT_TRUE(reversed.empty());
}

TEST(CpuSet, EqualityIgnoresCapacity) {
  CpuSet a;
  a.insert(3);
  CpuSet b;
  b.insert(3);
  b.insert(500);
  CpuSet only500;
  only500.insert(500);
  b &= a;  // drops 500, leaving trailing zero words
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a == only500);
}

}  // namespace
}  // namespace nodetopo
