// CpuSet: a set of logical CPU numbers (Linux OS indexes), as in sysfs cpulists and hwloc cpusets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nodetopo {

/// A growable bitset of CPU numbers. Value type; equality compares members, not capacity.
class CpuSet {
 public:
  CpuSet() = default;

  /// Adds `cpu` to the set.
  void insert(std::uint32_t cpu);
  /// Adds every CPU in [first, last].
  void insert_range(std::uint32_t first, std::uint32_t last);
  [[nodiscard]] bool contains(std::uint32_t cpu) const;
  [[nodiscard]] std::size_t count() const;
  [[nodiscard]] bool empty() const { return count() == 0; }

  /// True when every member of *this is in `other`.
  [[nodiscard]] bool is_subset_of(const CpuSet& other) const;
  [[nodiscard]] bool intersects(const CpuSet& other) const;
  CpuSet& operator|=(const CpuSet& other);
  CpuSet& operator&=(const CpuSet& other);

  /// Members in ascending order.
  [[nodiscard]] std::vector<std::uint32_t> members() const;
  /// Canonical Linux cpulist form, e.g. "0-3,8,10-11"; "" for the empty set.
  [[nodiscard]] std::string to_list() const;

  friend bool operator==(const CpuSet& a, const CpuSet& b);

 private:
  void trim();
  std::vector<std::uint64_t> words_;
};

/// Ascending numbers in the kernel's list form: {0,1,2,3,8,10,11} -> "0-3,8,10-11".
std::string format_ranges(const std::vector<std::uint32_t>& ascending);

}  // namespace nodetopo
