// The sysfs text formats the mock's writers share; the image and its writer are public
// (nodetopo/mock/sysfs_image.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/mock/sysfs_image.hpp>
#include <nodetopo/topology/cpu_set.hpp>

namespace nodetopo::mock::detail {

/// Linux cpumask text for a system of `nbits` possible CPUs: 32-bit hex words, most significant
/// first, the top word only as wide as needed ("0000,00000000,00ff00ff").
std::string cpumask(const CpuSet& set, std::uint32_t nbits);

/// sysfs link speed text: "32.0 GT/s PCIe", "2.5 GT/s PCIe", "Unknown" for 0.
std::string link_speed_text(std::uint32_t mts);

/// A size in kB as /proc/meminfo prints it, right-aligned in `width`.
std::string kb_field(std::uint64_t bytes, int width);

}  // namespace nodetopo::mock::detail
