#include <algorithm>
#include <array>
#include <utility>

#include <nodetopo/probes/discovery_cache.hpp>
#include <nodetopo/probes/net_probe.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/topology/ids.hpp>

#include "net/class_cache.hpp"
#include "net/net_class_device.hpp"

namespace nodetopo::probes {

namespace {

constexpr std::string_view kNetDir = "sys/class/net";

// The kernel prints SPEED_UNKNOWN as -1; some older drivers printed it unsigned (u16 or u32).
constexpr std::int64_t kSpeedUnknownU16 = 0xffff;
constexpr std::int64_t kSpeedUnknownU32 = 0xffffffff;

std::optional<std::uint64_t> parse_speed(ProbeContext& ctx, const std::string& rel,
                                         const std::string& text) {
  if (text.empty()) return std::nullopt;  // what captures hold for a link that was down
  auto value = parse_int(text);
  if (!value) {
    ctx.warn(value.error().message + " (speed ignored)", ctx.root().host_path(rel));
    return std::nullopt;
  }
  if (*value <= 0 || *value == kSpeedUnknownU16 || *value == kSpeedUnknownU32) return std::nullopt;
  return static_cast<std::uint64_t>(*value);
}

// `opened`: the interface's directory, when it was opened by its descriptor (ClassAttrs).
void read_attributes(ProbeContext& ctx, const ClassDevice& located, const SysDir* opened,
                     NetDeviceInfo& info) {
  const ClassAttrs attrs(ctx, located.dir, opened);
  if (auto mac = attrs.read("address")) info.mac = std::move(*mac);
  if (auto mtu = attrs.read("mtu")) {
    auto value = parse_uint(*mtu);
    if (value && *value <= UINT32_MAX) {
      info.mtu = static_cast<std::uint32_t>(*value);
    } else {
      ctx.warn("expected an MTU, got '" + *mtu + "' (mtu ignored)",
               ctx.root().host_path(attrs.path("mtu")));
    }
  }
  // Reading `speed` of a link that is down fails with EINVAL by design: absent, not an error.
  if (auto speed = attrs.read("speed", /*quiet=*/true)) {
    info.speed_mbps = parse_speed(ctx, attrs.path("speed"), *speed);
  }
  if (auto state = attrs.read("operstate")) info.operstate = std::move(*state);
  if (auto type = attrs.read("type")) {
    auto value = parse_uint(*type);
    if (value && *value <= UINT32_MAX) {
      info.link_type = link_type_name(static_cast<std::uint32_t>(*value));
    } else {
      ctx.warn("expected an ARPHRD number, got '" + *type + "' (link type ignored)",
               ctx.root().host_path(attrs.path("type")));
    }
  }
  // Software interfaces have no device, hence no driver: absence is silent. Read beside the
  // resolved device, whose directory is canonical: one readlink, not one per component.
  if (located.device_dir.empty()) return;
  if (auto driver = ctx.root().read_link(located.device_dir + "/driver")) {
    const std::string& target = driver.value();
    info.driver = target.substr(target.rfind('/') + 1);
  }
}

// Notes, on each VF interface, the interface of its physical function (the PCI probe recorded
// the VF -> PF relation on the functions; users look for it on the interfaces).
void link_virtual_functions(TopologyBuilder& builder) {
  for (NodeIndex net : builder.nodes_of_kind(NodeKind::kNetDevice)) {
    const NodeIndex parent = builder.node(net).parent;
    const auto* vf = builder.node(parent).get_if<PciFunctionInfo>();
    if (vf == nullptr || !vf->physical_function) continue;
    const auto pf = builder.find(node_id::pci(*vf->physical_function));
    if (!pf) continue;
    std::vector<std::string> names;
    for (NodeIndex child : builder.node(*pf).children) {
      if (const auto* n = builder.node(child).get_if<NetDeviceInfo>()) names.push_back(n->name);
    }
    if (names.empty()) continue;
    std::sort(names.begin(), names.end(),
              [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    builder.node(net).as<NetDeviceInfo>().physical_function_netdev = names.front();
  }
}

}  // namespace

std::string link_type_name(std::uint32_t arphrd) {
  static constexpr std::array<std::pair<std::uint32_t, std::string_view>, 18> kNames{{
      {1, "ether"},
      {24, "ieee1394"},
      {32, "infiniband"},
      {256, "slip"},
      {280, "can"},
      {512, "ppp"},
      {519, "rawip"},
      {768, "tunnel"},
      {769, "tunnel6"},
      {772, "loopback"},
      {776, "sit"},
      {778, "ipgre"},
      {801, "ieee80211"},
      {803, "ieee80211_radiotap"},
      {823, "ip6gre"},
      {824, "netlink"},
      {65534, "none"},
      {65535, "void"},
  }};
  for (const auto& [number, name] : kNames) {
    if (number == arphrd) return std::string(name);
  }
  return "arphrd_" + std::to_string(arphrd);
}

struct NetProbe::Read : detail::ClassDirRead<NetDeviceInfo> {};

NetProbe::NetProbe() = default;
NetProbe::~NetProbe() = default;

void NetProbe::prefetch(ProbeContext& ctx) {
  const detail::NetCache* cache = ctx.cache() != nullptr ? &ctx.cache()->net() : nullptr;
  read_ = std::make_unique<Read>(Read{detail::read_class_dir<NetDeviceInfo>(
      ctx, kNetDir, "no network interfaces in this root", cache,
      [](ProbeContext& c, const ClassDevice& located, const SysDir* opened, NetDeviceInfo& info) {
        if (!located.dir.empty()) read_attributes(c, located, opened, info);
      })});
}

Result<void> NetProbe::discover(ProbeContext& ctx, TopologyBuilder& builder) {
  if (!read_) prefetch(ctx);
  const std::unique_ptr<Read> read = std::move(read_);
  detail::NetCache* cache = ctx.cache() != nullptr ? &ctx.cache()->net() : nullptr;
  if (!read->result.ok()) {
    if (cache != nullptr) cache->clear();
    return read->result.error();
  }
  detail::add_class_entries(
      ctx, builder, kNetDir, read->entries, cache,
      [&](const std::string& name, const ClassDevice& located, NetDeviceInfo info) {
        info.name = name;
        info.is_virtual = located.pci_function == kNoNode;
        const NodeIndex parent = info.is_virtual ? builder.root() : located.pci_function;
        auto added = builder.add(NodeKind::kNetDevice, node_id::net(name), parent, std::move(info));
        if (!added) ctx.warn(added.error());
      });
  if (ctx.cache() != nullptr) {
    ctx.cache()->mutable_stats().net_read = read->read;
    ctx.cache()->mutable_stats().net_reused = read->reused;
  }
  link_virtual_functions(builder);
  return {};
}

}  // namespace nodetopo::probes
