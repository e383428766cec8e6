// Shared fixtures of the mock suite: hosts built once per test process (ctest runs each test in
// its own process, so a host is built at most once per test that needs it), and parsers for the
// oracles' output (lstopo XML, lspci -vvv / -PP).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <nodetopo/mock/builder.hpp>

namespace nodetopo::test {

/// A mock host built for the tests of this process.
struct BuiltHost {
  std::filesystem::path root;
  nlohmann::json manifest;  ///< nodetopo-mock/manifest.json
  mock::BuildSummary summary;
  double seconds = 0;  ///< build time
};

/// Builds `spec` (see mock::load_profile) on first use into a directory removed at exit.
/// Fails the calling test (ADD_FAILURE) and returns nullptr when the build fails.
const BuiltHost* built_host(const std::string& spec);

/// A mock host rendered in memory only (no disk): for checks of file contents.
struct RenderedHost {
  mock::HostImage image;
  nlohmann::json manifest;
  mock::BuildSummary summary;
  double seconds = 0;  ///< parse + render time

  /// A file's content without the trailing newline; ADD_FAILURE and "" when absent.
  [[nodiscard]] std::string attr(const std::string& rel) const;
  /// The target a symlink stores; ADD_FAILURE and "" when absent.
  [[nodiscard]] std::string link(const std::string& rel) const;
  /// `rel` with every symlink followed inside the image (like realpath, root-relative);
  /// "" when a component does not exist.
  [[nodiscard]] std::string resolve(const std::string& rel) const;
};

/// Renders `spec` once per process (cached). Fails the test and returns nullptr on error.
const RenderedHost* rendered_host(const std::string& spec);

/// Every shipped profile name.
std::vector<std::string> shipped_profile_names();

/// Every entry of a tree, sorted: path, mode bits, and the content (files) or the target
/// (symlinks). Two trees are byte-identical when their entries are equal.
std::vector<std::string> tree_entries(const std::filesystem::path& root);
/// "" when equal, else a description of the first difference (entries are truncated).
std::string first_difference(const std::vector<std::string>& a, const std::vector<std::string>& b);

/// An object of hwloc's XML export.
struct XmlObject {
  std::string type;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<XmlObject>> children;
  XmlObject* parent = nullptr;

  [[nodiscard]] std::string attr(const std::string& key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? std::string() : it->second;
  }
};

/// Parses `lstopo --of xml` output; the result is the Machine object (nullptr on bad input).
std::unique_ptr<XmlObject> parse_hwloc_xml(const std::string& text);

/// Every object below (and including) `root`, depth first.
std::vector<const XmlObject*> all_objects(const XmlObject& root);

/// Runs lstopo-no-graphics on a root (HWLOC_FSROOT, linux component only) with `args`.
std::string run_lstopo(const std::filesystem::path& root, const std::vector<std::string>& args);

/// One function of `lspci -vvv -D` output.
struct LspciFunction {
  std::string address;       ///< "0000:1b:00.0"
  std::string description;   ///< "3D controller: NVIDIA Corporation ..."
  std::string express;       ///< "Root Port", "Upstream Port", "Downstream Port", "Endpoint"
  std::string lnkcap_speed;  ///< "32" (GT/s), from LnkCap
  std::string lnkcap_width;  ///< "16"
  std::string lnksta_speed;
  std::string lnksta_width;
  std::string numa_node;  ///< "NUMA node: N"
  std::string driver;     ///< "Kernel driver in use: X"
  std::string physical_slot;
  bool sriov = false;  ///< has the SR-IOV extended capability
  std::string sriov_total_vfs;
  std::string sriov_number_of_vfs;
};

/// Runs lspci on a root's sys/bus/pci with `args` (the sysfs access method), stdout only.
std::string run_lspci(const std::filesystem::path& root, const std::vector<std::string>& args);
std::vector<LspciFunction> parse_lspci_verbose(const std::string& text);

/// "0000:15:01.0/16:00.0/17:01.0/1b:00.0" lines of `lspci -D -PP`, by function address.
std::map<std::string, std::string> parse_lspci_paths(const std::string& text);

}  // namespace nodetopo::test
