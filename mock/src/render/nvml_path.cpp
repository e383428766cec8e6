// Finding the mock libnvidia-ml.so.1 that belongs to the running `topo`.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nodetopo/mock/builder.hpp>

namespace nodetopo::mock {

namespace fs = std::filesystem;

std::string nvml_library_path() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only lookup at startup
  if (const char* env = std::getenv("NODETOPO_MOCK_NVML_LIBRARY"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  // The executable's own location (a property of this process, not of the host root).
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> candidates;
  if (!ec) {
    const fs::path dir = exe.parent_path();
    candidates.push_back(dir / "mock/nvml/libnvidia-ml.so.1");  // build tree: <build>/topo
    candidates.push_back(dir / ".." / NODETOPO_MOCK_NVML_LIBDIR / "nodetopo/libnvidia-ml.so.1");
  }
  candidates.emplace_back(NODETOPO_MOCK_NVML_INSTALL_PATH);
  for (const fs::path& candidate : candidates) {
    if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
  }
  return {};
}

}  // namespace nodetopo::mock
