// The mock host builder: profile -> fake host root on disk (docs/mock.md), and the private
// temporary hosts behind `--mock`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include <nodetopo/base/error.hpp>
#include <nodetopo/mock/profile.hpp>
#include <nodetopo/mock/sysfs_image.hpp>

namespace nodetopo::mock {

/// Root-relative path of the NVML fixture inside a mock root (format: docs/mock-nvml.md).
inline constexpr std::string_view kNvmlFixtureFile = "nodetopo-mock/nvml.json";
/// Root-relative path of the manifest: the resolved profile (names, addresses, identities,
/// sharing) as JSON. Its presence marks a directory as a mock host built by nodetopo.
inline constexpr std::string_view kManifestFile = "nodetopo-mock/manifest.json";
/// Environment variable through which the mock NVML library finds its fixture.
inline constexpr std::string_view kNvmlFixtureEnv = "NODETOPO_MOCK_NVML_FIXTURE";

/// Facts about a built host, for messages and tests.
struct BuildSummary {
  std::size_t entries = 0;        ///< files, symlinks and directories written
  std::size_t pci_functions = 0;  ///< PCI functions, bridges and VFs included
  std::size_t gpus = 0;           ///< devices of type gpu
  std::size_t nics = 0;           ///< devices of type nic
  bool nvml_fixture = false;      ///< whether nodetopo-mock/nvml.json was written
};

/// Renders a profile in memory. Fails only on profiles that parse_profile() would reject.
Result<HostImage> render_host(const Profile& profile, BuildSummary* summary = nullptr);

struct BuildOptions {
  /// Replace `dir` when it holds a previous mock host (it has nodetopo-mock/manifest.json).
  /// Any other non-empty directory is always refused: the builder never deletes foreign files.
  bool replace_existing = false;
};

/// Builds the host into `dir` (created when missing; must be empty unless replace_existing).
/// The tree is written next to `dir` first and renamed into place, so a failure leaves no
/// partial host. Errors name the directory or the profile field at fault.
Result<BuildSummary> build_host(const Profile& profile, const std::filesystem::path& dir,
                                const BuildOptions& options = {});

/// A mock host in a private temporary directory ($TMPDIR/nodetopo-mock-XXXXXX, mode 0700),
/// removed with everything in it when the object dies. Move-only.
class TempHost {
 public:
  /// Loads `spec` (see load_profile) and builds it. On failure nothing is left behind.
  static Result<TempHost> create(std::string_view spec);
  /// Builds an already loaded profile.
  static Result<TempHost> create(const Profile& profile);

  TempHost(TempHost&& other) noexcept;
  TempHost& operator=(TempHost&& other) noexcept;
  TempHost(const TempHost&) = delete;
  TempHost& operator=(const TempHost&) = delete;
  ~TempHost();

  /// The host root (holds sys/, proc/, nodetopo-mock/).
  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  /// Absolute path of the NVML fixture, empty when the profile has no NVIDIA GPU.
  [[nodiscard]] std::string nvml_fixture() const;
  [[nodiscard]] const BuildSummary& summary() const { return summary_; }

 private:
  TempHost(std::filesystem::path root, BuildSummary summary);
  void remove();

  std::filesystem::path root_;
  BuildSummary summary_;
};

/// Path of the mock NVML library (`libnvidia-ml.so.1`, CMake target nodetopo_mock_nvml) for
/// the running `topo`: $NODETOPO_MOCK_NVML_LIBRARY when set, else next to the executable in a
/// build tree (<build>/mock/nvml/), else the installed copy (<prefix>/<libdir>/nodetopo/).
/// Empty when none of them exists.
std::string nvml_library_path();

}  // namespace nodetopo::mock
