#include "pci/pci_dir_chain.hpp"

namespace nodetopo::probes {

namespace {

// Whether `dir` is `path` or one of its ancestors.
bool is_ancestor_or_self(std::string_view dir, std::string_view path) {
  return path.starts_with(dir) && (path.size() == dir.size() || path[dir.size()] == '/');
}

}  // namespace

const SysDir* PciDirChain::open(std::string_view rel) {
  while (!chain_.empty() && !is_ancestor_or_self(chain_.back().path, rel))
    chain_.pop_back();
  if (chain_.empty()) {
    // The parent from the root (for a hierarchy's first function, its root bus directory).
    const std::size_t slash = rel.rfind('/');
    if (slash == std::string_view::npos || slash == 0) return nullptr;
    const std::string_view parent = rel.substr(0, slash);
    auto dir = root_.open_canonical_dir(parent);
    if (!dir) return nullptr;
    chain_.push_back({std::string(parent), std::move(*dir)});
  }
  while (chain_.back().path.size() < rel.size()) {
    const std::size_t start = chain_.back().path.size() + 1;
    const std::size_t end = std::min(rel.find('/', start), rel.size());
    auto sub = chain_.back().dir.open_subdir(rel.substr(start, end - start));
    if (!sub) return nullptr;
    chain_.push_back({std::string(rel.substr(0, end)), std::move(*sub)});
  }
  return &chain_.back().dir;
}

}  // namespace nodetopo::probes
