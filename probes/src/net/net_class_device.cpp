#include "net/net_class_device.hpp"

#include <algorithm>

#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/topology/ids.hpp>

#include "pci/pci_device_path.hpp"

namespace nodetopo::probes {

namespace {

// "pci0000:17", "pci10000:00": a PCI root bus directory under sys/devices.
bool is_root_bus(std::string_view part) {
  if (!part.starts_with("pci")) return false;
  const std::size_t colon = part.find(':');
  if (colon == std::string_view::npos || colon < 7 || part.size() != colon + 3) return false;
  return std::all_of(part.begin() + 3, part.end(), [](char c) {
    return c == ':' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

// Normalises `target` (a symlink's text) against the directory holding the link, without
// touching the file system: how the kernel would read it if it existed.
std::string lexical_target(std::string_view link_rel, std::string_view target) {
  std::vector<std::string> parts;
  auto push = [&parts](std::string_view path) {
    std::size_t start = 0;
    while (start <= path.size()) {
      const std::size_t end = std::min(path.find('/', start), path.size());
      const std::string_view part = path.substr(start, end - start);
      start = end + 1;
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (!parts.empty()) parts.pop_back();
        continue;
      }
      parts.emplace_back(part);
    }
  };
  const std::size_t slash = link_rel.rfind('/');
  if (!target.starts_with('/') && slash != std::string_view::npos) {
    push(link_rel.substr(0, slash));
  }
  push(target);
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

}  // namespace

std::optional<PciAddress> nearest_pci_function(std::string_view resolved_path) {
  if (!resolved_path.starts_with("sys/devices/")) return std::nullopt;
  std::optional<PciAddress> found;
  bool in_pci = false;
  std::size_t start = 0;
  while (start < resolved_path.size()) {
    const std::size_t end = std::min(resolved_path.find('/', start), resolved_path.size());
    const std::string_view part = resolved_path.substr(start, end - start);
    start = end + 1;
    if (!in_pci) {
      in_pci = is_root_bus(part);
      continue;
    }
    auto addr = parse_pci_address(part);
    if (!addr) break;  // the first non-PCI component ends the PCI hierarchy
    found = *addr;
  }
  return found;
}

std::optional<ClassDevice> resolve_class_device(ProbeContext& ctx, std::string_view class_dir,
                                                const std::string& name,
                                                std::optional<PciAddress>& address) {
  const SysRoot& root = ctx.root();
  address.reset();
  const std::string rel = std::string(class_dir) + "/" + name;
  auto resolved = root.resolve(rel);
  if (!resolved) {
    if (resolved.error().code == ErrorCode::kNotFound) {
      // Captures keep the class links but often drop devices/virtual: a software device known
      // by name only. A missing hardware device is a damaged capture and is reported.
      if (auto target = root.read_link(rel)) {
        const std::string lexical = lexical_target(rel, target.value());
        if (lexical.starts_with("sys/devices/virtual/")) return ClassDevice{};
        ctx.warn("skipped: link target '" + lexical + "' does not exist", root.host_path(rel));
        return std::nullopt;
      }
    }
    ctx.warn("skipped: " + resolved.error().message, resolved.error().path);
    return std::nullopt;
  }

  ClassDevice out;
  out.dir = resolved.value();
  const std::string device_rel = out.dir + "/device";
  if (auto device = root.resolve(device_rel)) {
    address = nearest_pci_function(device.value());
    out.device_dir = std::move(device.value());
  } else {
    if (device.error().code != ErrorCode::kNotFound) {
      ctx.warn("device link unusable (" + device.error().message +
                   "); PCI parent taken from the directory's own path",
               root.host_path(device_rel));
    }
    address = nearest_pci_function(out.dir);
  }
  return out;
}

std::optional<std::string> class_entry_path(const SysDir& class_dir, std::string_view name) {
  auto target = class_dir.read_link(name);
  if (!target) return std::nullopt;
  return join_plain_link(class_dir.rel(), target.value());
}

std::optional<ClassDevice> locate_lexically(const SysRoot& root, const SysDir& class_dir,
                                            std::string_view target,
                                            std::optional<PciAddress>& address,
                                            std::optional<SysDir>& opened) {
  address.reset();
  opened.reset();
  auto path = join_plain_link(class_dir.rel(), target);
  if (!path) return std::nullopt;
  auto dir = root.open_canonical_dir(*path);
  if (!dir) return std::nullopt;
  ClassDevice out;
  out.dir = std::move(*path);
  auto device = dir->read_link("device");
  if (!device) {
    // No `device` entry: a software device, placed by its own path as resolve_class_device()
    // places it. Anything else there (a directory, a file) is left to that function.
    if (device.error().code != ErrorCode::kNotFound) return std::nullopt;
    address = nearest_pci_function(out.dir);
    opened = std::move(dir);
    return out;
  }
  auto device_dir = join_plain_link(out.dir, device.value());
  if (!device_dir) return std::nullopt;
  // An ancestor of the entry's directory lies on the path the kernel has just walked without
  // meeting a symlink: canonical and a directory, with no further open. Only another target
  // (not how the kernel links a class device to its parent) costs one more kernel-checked open.
  const bool ancestor = out.dir.size() > device_dir->size() && out.dir.starts_with(*device_dir) &&
                        out.dir[device_dir->size()] == '/';
  if (!ancestor && !root.open_canonical_dir(*device_dir)) return std::nullopt;
  address = nearest_pci_function(*device_dir);
  out.device_dir = std::move(*device_dir);
  opened = std::move(dir);
  return out;
}

void attach_class_device(ProbeContext& ctx, const TopologyBuilder& builder,
                         std::string_view class_dir, const std::string& name,
                         const std::optional<PciAddress>& address, ClassDevice& device) {
  device.pci_function = kNoNode;
  if (!address) return;
  if (auto node = builder.find(node_id::pci(*address))) {
    device.pci_function = *node;
  } else {
    ctx.warn("belongs to PCI function " + address->to_string() +
                 ", which is not in the topology; listed without a PCI parent",
             ctx.root().host_path(std::string(class_dir) + "/" + name));
  }
}

std::optional<ClassDevice> locate_class_device(ProbeContext& ctx, const TopologyBuilder& builder,
                                               std::string_view class_dir,
                                               const std::string& name) {
  std::optional<PciAddress> address;
  auto located = resolve_class_device(ctx, class_dir, name, address);
  if (located) attach_class_device(ctx, builder, class_dir, name, address, *located);
  return located;
}

std::optional<std::string> read_optional_attr(ProbeContext& ctx, const std::string& rel,
                                              bool quiet) {
  auto value = ctx.root().read_attr(rel);
  if (value) return std::move(value.value());
  if (!quiet && value.error().code != ErrorCode::kNotFound) ctx.warn(value.error());
  return std::nullopt;
}

std::optional<std::string> ClassAttrs::read(std::string_view name, bool quiet) const {
  if (opened_ != nullptr) {
    auto value = opened_->read_attr(name);
    if (value) return std::move(value.value());
    if (value.error().code == ErrorCode::kNotFound || quiet) return std::nullopt;
  }
  return read_optional_attr(ctx_, path(name), quiet);
}

std::string ClassAttrs::path(std::string_view name) const {
  std::string out;
  out.reserve(dir_.size() + 1 + name.size());
  out.append(dir_).append("/").append(name);
  return out;
}

}  // namespace nodetopo::probes
