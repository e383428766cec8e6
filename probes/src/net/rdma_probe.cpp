#include <algorithm>
#include <optional>
#include <utility>

#include <nodetopo/probes/discovery_cache.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/rdma_probe.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/topology/ids.hpp>

#include "net/class_cache.hpp"
#include "net/net_class_device.hpp"

namespace nodetopo::probes {

namespace {

constexpr std::string_view kRdmaDir = "sys/class/infiniband";

// "4: ACTIVE" -> "ACTIVE"; text without the numeric prefix is kept as it is.
std::string port_state(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return text;
  return std::string(trim(std::string_view(text).substr(colon + 1)));
}

// The `ports` directory of RDMA device `dir`, listed. Through `opened` (the device's directory
// descriptor) when there is one and `ports` is a plain directory in it, else by path as before,
// which words the warnings; `ports_opened` then stays empty.
Result<std::vector<std::string>> list_ports(const SysRoot& root, const std::string& ports_dir,
                                            const SysDir* opened,
                                            std::optional<SysDir>& ports_opened) {
  if (opened != nullptr) ports_opened = opened->open_subdir("ports");
  if (!ports_opened) return root.list_dir(ports_dir);
  std::vector<std::string> names;
  for (const SysDir::Entry& entry : ports_opened->entries())
    names.emplace_back(entry.name);
  return names;
}

std::vector<RdmaPort> read_ports(ProbeContext& ctx, const std::string& dir, const SysDir* opened) {
  std::vector<RdmaPort> ports;
  const std::string ports_dir = dir + "/ports";
  std::optional<SysDir> ports_opened;
  auto names = list_ports(ctx.root(), ports_dir, opened, ports_opened);
  if (!names) {
    if (names.error().code != ErrorCode::kNotFound) ctx.warn(names.error());
    return ports;
  }
  for (const std::string& name : names.value()) {
    auto number = parse_uint(name);
    if (!number || *number == 0 || *number > UINT32_MAX) {
      ctx.warn("skipped: not a port number", ctx.root().host_path(ports_dir + "/" + name));
      continue;
    }
    const std::string port_dir = ports_dir + "/" + name;
    // A port that is not a plain directory of `ports` is read by path, as before.
    std::optional<SysDir> port_opened;
    if (ports_opened) port_opened = ports_opened->open_subdir(name);
    const ClassAttrs attrs(ctx, port_dir, port_opened ? &*port_opened : nullptr);
    RdmaPort port;
    port.number = static_cast<std::uint32_t>(*number);
    if (auto state = attrs.read("state")) port.state = port_state(*state);
    if (auto rate = attrs.read("rate")) port.rate = std::move(*rate);
    if (auto layer = attrs.read("link_layer")) port.link_layer = std::move(*layer);
    // The netdev of GID 0 of a RoCE port. Unused GID entries fail with EINVAL: absent. Three
    // components below the port: one kernel-checked open by path costs less than opening two
    // directories on the way.
    if (auto ndev = read_optional_attr(ctx, port_dir + "/gid_attrs/ndevs/0", /*quiet=*/true)) {
      port.netdev = std::move(*ndev);
    }
    ports.push_back(std::move(port));
  }
  std::sort(ports.begin(), ports.end(),
            [](const RdmaPort& a, const RdmaPort& b) { return a.number < b.number; });
  return ports;
}

// An interface of the RDMA device's PCI function, with what tells its port.
struct Candidate {
  std::string name;
  std::optional<std::uint64_t> port;  // 1-based
  bool child = false;                 // a VLAN / P_Key child of another interface
};

// sys/class/net, opened once per discovery for describe_interface() and only when an interface
// needs describing; empty when the kernel cannot check paths or it is not canonical.
class NetClassDir {
 public:
  explicit NetClassDir(const SysRoot& root) : root_(root) {}
  [[nodiscard]] const SysDir* get() {
    if (!tried_) {
      tried_ = true;
      if (root_.checks_paths_in_kernel()) dir_ = root_.open_canonical_dir("sys/class/net");
    }
    return dir_ ? &*dir_ : nullptr;
  }

 private:
  const SysRoot& root_;
  bool tried_ = false;
  std::optional<SysDir> dir_;
};

Candidate describe_interface(ProbeContext& ctx, NetClassDir& net_dir, const std::string& name) {
  const SysRoot& root = ctx.root();
  // Where the interface's class link leads: joined from its text where it is plain (the net
  // probe located it so without leaving a resolution behind), else resolved.
  std::string dir;
  if (const SysDir* listing = net_dir.get()) {
    if (auto joined = class_entry_path(*listing, name)) dir = std::move(*joined);
  }
  if (dir.empty()) {
    const std::string link = "sys/class/net/" + name;
    const auto resolved = root.resolve(link);
    dir = resolved ? resolved.value() : link;
  }
  // The directory opened once, its attributes then one short open each: three opens by path
  // walked all of its dozen components three times. A directory that is not canonical (a link on
  // the way) is read by path, resolved as before. Quiet: an unreadable one is only not matched.
  const std::optional<SysDir> opened = root.open_canonical_dir(dir);
  const ClassAttrs attrs(ctx, dir, opened ? &*opened : nullptr);
  Candidate c;
  c.name = name;
  if (auto dev_port = attrs.read("dev_port", /*quiet=*/true)) {
    if (auto v = parse_uint(*dev_port)) c.port = *v + 1;
  } else if (auto dev_id = attrs.read("dev_id", /*quiet=*/true)) {
    // Kernels before 3.15 numbered the ports of multi-port devices in dev_id.
    if (auto v = parse_hex(*dev_id, UINT32_MAX)) c.port = *v + 1;
  }
  auto iflink = attrs.read("iflink", /*quiet=*/true);
  auto ifindex = attrs.read("ifindex", /*quiet=*/true);
  if (iflink && ifindex) c.child = trim(*iflink) != trim(*ifindex);
  return c;
}

// Fills the ports that have no netdev from the interfaces of the same PCI function. With a cache,
// an interface the net probe took from its cache is described as the last discovery found it.
void match_netdevs(ProbeContext& ctx, NetClassDir& net_dir, const TopologyBuilder& builder,
                   NodeIndex pci_function, std::vector<RdmaPort>& ports) {
  const bool missing =
      std::any_of(ports.begin(), ports.end(), [](const RdmaPort& p) { return p.netdev.empty(); });
  if (!missing) return;
  detail::RdmaCache* cache = ctx.cache() != nullptr ? &ctx.cache()->rdma() : nullptr;
  const detail::NetCache* net = ctx.cache() != nullptr ? &ctx.cache()->net() : nullptr;
  std::vector<Candidate> candidates;
  for (NodeIndex child : builder.node(pci_function).children) {
    const auto* info = builder.node(child).get_if<NetDeviceInfo>();
    if (info == nullptr) continue;
    if (cache != nullptr) {
      auto known = cache->interfaces.find(info->name);
      if (known != cache->interfaces.end() && net->valid && !net->read_now.contains(info->name)) {
        candidates.push_back({info->name, known->second.port, known->second.child});
        continue;
      }
    }
    candidates.push_back(describe_interface(ctx, net_dir, info->name));
    if (cache != nullptr) {
      cache->interfaces[info->name] = {candidates.back().port, candidates.back().child};
    }
  }
  std::erase_if(candidates, [](const Candidate& c) { return c.child; });
  for (RdmaPort& port : ports) {
    if (!port.netdev.empty()) continue;
    std::vector<const Candidate*> matches;
    for (const Candidate& c : candidates) {
      // Without a port attribute an interface can only belong to a single-port device.
      if (c.port ? *c.port == port.number : ports.size() == 1) matches.push_back(&c);
    }
    if (matches.size() == 1) port.netdev = matches.front()->name;
  }
}

}  // namespace

struct RdmaProbe::Read : detail::ClassDirRead<RdmaDeviceInfo> {};

RdmaProbe::RdmaProbe() = default;
RdmaProbe::~RdmaProbe() = default;

void RdmaProbe::prefetch(ProbeContext& ctx) {
  const detail::RdmaCache* cache = ctx.cache() != nullptr ? &ctx.cache()->rdma() : nullptr;
  read_ = std::make_unique<Read>(Read{detail::read_class_dir<RdmaDeviceInfo>(
      ctx, kRdmaDir, "no RDMA devices in this root", cache,
      [](ProbeContext& c, const ClassDevice& located, const SysDir* opened, RdmaDeviceInfo& info) {
        if (located.dir.empty()) return;
        const ClassAttrs attrs(c, located.dir, opened);
        if (auto guid = attrs.read("node_guid")) info.node_guid = std::move(*guid);
        info.ports = read_ports(c, located.dir, opened);
      })});
}

Result<void> RdmaProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  if (!read_) prefetch(ctx);
  const std::unique_ptr<Read> read = std::move(read_);
  detail::RdmaCache* cache = ctx.cache() != nullptr ? &ctx.cache()->rdma() : nullptr;
  if (!read->result.ok()) {
    if (cache != nullptr) cache->clear();
    return read->result.error();
  }
  NetClassDir net_dir(ctx.root());
  detail::add_class_entries(
      ctx, builder, kRdmaDir, read->entries, cache,
      [&](const std::string& name, const ClassDevice& located, RdmaDeviceInfo info) {
        info.name = name;
        info.is_virtual = located.pci_function == kNoNode;
        // From the interfaces the net probe found in this discovery (match_netdevs).
        if (!info.is_virtual) {
          match_netdevs(ctx, net_dir, builder, located.pci_function, info.ports);
        }
        const NodeIndex parent = info.is_virtual ? builder.root() : located.pci_function;
        auto added =
            builder.add(NodeKind::kRdmaDevice, node_id::rdma(name), parent, std::move(info));
        if (!added) ctx.warn(added.error());
      });
  if (ctx.cache() != nullptr) {
    ctx.cache()->mutable_stats().rdma_read = read->read;
    ctx.cache()->mutable_stats().rdma_reused = read->reused;
  }
  return {};
}

}  // namespace nodetopo::probes
