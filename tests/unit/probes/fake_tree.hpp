// The hand-made hosts of the probe tests write their entries with the mock's tree writer
// (nodetopo/mock/sysfs_image.hpp), the one writer of fake trees; this is its throwing form.
#pragma once

#include <filesystem>
#include <stdexcept>

#include <nodetopo/mock/sysfs_image.hpp>

namespace nodetopo::test {

/// Adds `image` to the tree at `root` (existing directories are kept). A test's host is broken,
/// not degraded, when it cannot be written, so this throws with the writer's message.
inline void write_tree(const std::filesystem::path& root, const mock::HostImage& image) {
  if (auto written = mock::write_image(image, root); !written) {
    throw std::runtime_error(written.error().describe());
  }
}

}  // namespace nodetopo::test
