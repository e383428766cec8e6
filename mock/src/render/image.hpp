// Building a HostImage: files, relative symlinks and the sysfs text formats shared by writers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/topology/cpu_set.hpp>

namespace nodetopo::mock::detail {

class ImageWriter {
 public:
  explicit ImageWriter(HostImage& image) : image_(image) {}

  /// A file with `content` at root-relative `path` (parents are implied).
  void file(const std::string& path, std::string content);
  /// A sysfs attribute: `value` plus the newline the kernel appends.
  void attr(const std::string& path, std::string_view value);
  /// A symlink at `path` to root-relative `target`, stored relative to the link's directory the
  /// way sysfs stores its links ("../../../devices/pci0000:15/0000:15:01.0").
  void link(const std::string& path, const std::string& target);
  /// An (empty) directory.
  void dir(const std::string& path);

  /// Paths written twice (a writer bug); render_host() refuses an image with any.
  [[nodiscard]] const std::vector<std::string>& conflicts() const { return conflicts_; }

 private:
  void parents(const std::string& path);
  void claim(const std::string& path);

  HostImage& image_;
  std::vector<std::string> conflicts_;
};

/// `target` relative to the directory holding `link` (both root-relative).
std::string relative_target(const std::string& link, const std::string& target);

/// Linux cpumask text for a system of `nbits` possible CPUs: 32-bit hex words, most significant
/// first, the top word only as wide as needed ("0000,00000000,00ff00ff").
std::string cpumask(const CpuSet& set, std::uint32_t nbits);

/// sysfs link speed text: "32.0 GT/s PCIe", "2.5 GT/s PCIe", "Unknown" for 0.
std::string link_speed_text(std::uint32_t mts);

/// "0x10de" (4 digits), "0x030200" (6 digits) as sysfs prints IDs and classes.
std::string hex_id(std::uint32_t value, int digits);

/// A size in kB as /proc/meminfo prints it, right-aligned in `width`.
std::string kb_field(std::uint64_t bytes, int width);

}  // namespace nodetopo::mock::detail
