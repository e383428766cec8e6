// The fixture parser: simdjson checks the text (RFC 8259, UTF-8) and builds its document, whose
// fields are then read into the structs of fixture.hpp. Every error about a field names it
// ("devices[3].nvlinks[0].remote_pci_bus_id"); see docs/mock-nvml.md#parsing.
#include "fixture.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include <simdjson.h>

namespace nodetopo::mock_nvml {

namespace {

using simdjson::dom::element;

// A field the fixture gets wrong. Its path is put together on the way out: each member and array
// element the error passes through puts ".name" or "[index]" in front (within()).
struct Invalid {
  std::string path;  // ".devices[3].pci_bus_id"
  std::string what;
};

[[noreturn]] void invalid(std::string what) {
  throw Invalid{{}, std::move(what)};
}

// read(), with `where` (a member name or an array index) put in front of the path of its errors.
template <class Where, class Read>
auto within(Where where, Read&& read) {
  try {
    return read();
  } catch (Invalid& e) {
    if constexpr (std::is_integral_v<Where>) {
      e.path.insert(0, '[' + std::to_string(where) + ']');
    } else {
      e.path.insert(0, '.' + std::string(where));
    }
    throw;
  }
}

[[noreturn]] void wrong_type(element v, const char* expected) {
  const char* found = v.is_object()   ? "an object"
                      : v.is_array()  ? "an array"
                      : v.is_string() ? "a string"
                      : v.is_bool()   ? "a boolean"
                      : v.is_null()   ? "null"
                                      : "a number";
  invalid(std::string("expected ") + expected + ", found " + found);
}

// The value as T (simdjson's own types: object, array, string_view, bool), or a type error; and
// the readers of each type.
template <class T>
T as(element v, const char* expected) {
  T out{};
  if (v.get(out) != simdjson::SUCCESS) wrong_type(v, expected);
  return out;
}

constexpr auto object_of = [](element v) { return as<simdjson::dom::object>(v, "an object"); };
constexpr auto string_of = [](element v) { return as<std::string_view>(v, "a string"); };
constexpr auto bool_of = [](element v) { return as<bool>(v, "true or false"); };

// An integer that fits Int. simdjson keeps fractions and exponents as doubles, which are refused;
// so are integers outside 64 bits (the whole text is).
template <class Int>
Int integer(element v) {
  using Wide = std::conditional_t<std::is_signed_v<Int>, std::int64_t, std::uint64_t>;
  if (!v.is_number()) wrong_type(v, "an integer");
  Wide n = 0;
  if (v.get(n) != simdjson::SUCCESS || !std::in_range<Int>(n)) {
    invalid("expected an integer from " + std::to_string(std::numeric_limits<Int>::min()) + " to " +
            std::to_string(std::numeric_limits<Int>::max()) + ", found " + simdjson::to_string(v));
  }
  return static_cast<Int>(n);
}

constexpr auto u32 = integer<std::uint32_t>;
constexpr auto int_of = integer<int>;

// Member `key` read by read(value); nullopt when it is absent or null.
template <class Read>
auto optional_field(simdjson::dom::object o, std::string_view key, Read&& read)
    -> std::optional<std::invoke_result_t<Read&, element>> {
  element v;
  if (o.at_key(key).get(v) != simdjson::SUCCESS || v.is_null()) return std::nullopt;
  return within(key, [&] { return read(v); });
}

template <class Read>
auto required_field(simdjson::dom::object o, std::string_view key, Read&& read) {
  element v;
  if (o.at_key(key).get(v) != simdjson::SUCCESS) invalid("missing \"" + std::string(key) + '"');
  return within(key, [&] { return read(v); });
}

// each(element) for the elements of array member `key` (none when absent or null).
template <class Each>
void for_each_element(simdjson::dom::object o, std::string_view key, Each&& each) {
  const auto list =
      optional_field(o, key, [](element v) { return as<simdjson::dom::array>(v, "an array"); });
  if (!list) return;
  within(key, [&] {
    std::size_t i = 0;
    for (element e : *list)
      within(i++, [&] { each(e); });
  });
}

// Hex digits only, min_digits to max_digits of them (at most 8).
std::optional<std::uint32_t> parse_hex(std::string_view text, std::size_t min_digits,
                                       std::size_t max_digits) {
  std::uint32_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value, 16);
  if (text.size() < min_digits || text.size() > max_digits || error != std::errc() || stop != end) {
    return std::nullopt;
  }
  return value;
}

BusId bus_id(element v) {
  const std::string_view text = string_of(v);
  auto id = parse_bus_id(text);
  if (!id) invalid('\'' + std::string(text) + "' is not domain:bus:device.function");
  return *id;
}

// "0x233010de" (as the contract writes it) or a plain JSON number.
std::uint32_t id_word(element v) {
  if (!v.is_string()) return u32(v);
  const std::string_view text = string_of(v);
  const bool prefixed = text.starts_with("0x") || text.starts_with("0X");
  const auto value = parse_hex(text.substr(prefixed ? 2 : 0), 1, 8);
  if (!value) invalid('\'' + std::string(text) + "' is not a 32-bit hex value");
  return *value;
}

FailMap fail_map(element v) {
  FailMap out;
  for (const simdjson::dom::key_value_pair member : object_of(v))
    out.emplace(member.key, within(member.key, [&] { return int_of(member.value); }));
  return out;
}

int remote_type(element v) {
  // nvmlIntNvLinkDeviceType_t values.
  const std::string_view text = string_of(v);
  if (text == "gpu") return 0x00;
  if (text == "ibmnpu") return 0x01;
  if (text == "switch") return 0x02;
  invalid('\'' + std::string(text) + "' is not gpu, switch or ibmnpu");
}

std::array<unsigned char, 16> cluster_uuid(element v) {
  std::string hex(string_of(v));
  std::erase(hex, '-');
  std::array<unsigned char, 16> out{};
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto byte = hex.size() == 32 ? parse_hex(hex.substr(2 * i, 2), 2, 2) : std::nullopt;
    if (!byte) invalid("not a UUID (32 hex digits)");
    out[i] = static_cast<unsigned char>(*byte);
  }
  return out;
}

Fabric fabric(element v) {
  const auto o = object_of(v);
  Fabric f;
  f.cluster_uuid = optional_field(o, "cluster_uuid", cluster_uuid).value_or(f.cluster_uuid);
  f.clique_id = optional_field(o, "clique_id", u32).value_or(0);
  f.state = optional_field(o, "state", integer<unsigned char>).value_or(3);
  f.status = optional_field(o, "status", int_of).value_or(0);
  return f;
}

Device device(element v) {
  const auto o = object_of(v);
  Device d;
  d.index = required_field(o, "index", u32);
  d.bus_id = required_field(o, "pci_bus_id", bus_id);
  d.pci_device_id = optional_field(o, "pci_device_id", id_word).value_or(0);
  d.pci_subsystem_id = optional_field(o, "pci_subsystem_id", id_word).value_or(0);
  d.uuid = optional_field(o, "uuid", string_of);
  d.name = optional_field(o, "name", string_of);
  d.serial = optional_field(o, "serial", string_of);
  d.memory_total_bytes = optional_field(o, "memory_total_bytes", integer<std::uint64_t>);
  d.architecture = optional_field(o, "architecture", u32);
  d.numa_node = optional_field(o, "numa_node", u32);
  d.fabric = optional_field(o, "fabric", fabric);
  // NVML describes no far end of an inactive link: those members are not looked at.
  for_each_element(o, "nvlinks", [&](element e) {
    const auto l = object_of(e);
    const std::uint32_t number = required_field(l, "link", u32);
    NvLink link;
    link.active = required_field(l, "active", bool_of);
    if (link.active) {
      link.remote = required_field(l, "remote_pci_bus_id", bus_id);
      link.remote_type = required_field(l, "remote_type", remote_type);
    }
    if (!d.nvlinks.emplace(number, link).second) {
      invalid("link " + std::to_string(number) + " listed twice");
    }
  });
  d.fail = optional_field(o, "fail", fail_map).value_or(FailMap{});
  return d;
}

Fixture fixture(element root) {
  const auto o = object_of(root);
  Fixture f;
  f.driver_version = optional_field(o, "driver_version", string_of);
  f.cuda_driver_version = optional_field(o, "cuda_driver_version", int_of);
  f.fail = optional_field(o, "fail", fail_map).value_or(FailMap{});
  for_each_element(o, "devices", [&](element e) { f.devices.push_back(device(e)); });

  // Indices must be exactly 0..N-1, each once; the handle of index i is devices[i].
  std::ranges::stable_sort(f.devices, {}, &Device::index);
  for (std::uint32_t i = 0; i < f.devices.size(); ++i) {
    if (f.devices[i].index == i) continue;
    const bool twice = f.devices[i].index < i;  // then it is i - 1
    throw Invalid{".devices", "device indices are not 0..N-1, each once: index " +
                                  std::to_string(twice ? i - 1 : i) +
                                  (twice ? " twice" : " missing")};
  }
  return f;
}

// Gives every active link the PCI ids of the fixture device at its far end, so that
// nvmlDeviceGetNvLinkRemotePciInfo_v2 needs no search. Later indices win, as NVML's busId is
// expected to be unique anyway.
void resolve_remote_ids(Fixture& f) {
  auto key = [](const BusId& id) {
    return (std::uint64_t{id.domain} << 16) | (std::uint64_t{id.bus} << 8) |
           (std::uint64_t{id.device} << 3) | id.function;
  };
  std::unordered_map<std::uint64_t, const Device*> by_bus_id;
  by_bus_id.reserve(f.devices.size());
  for (const Device& d : f.devices)
    by_bus_id.insert_or_assign(key(d.bus_id), &d);
  for (Device& d : f.devices) {
    for (auto& [number, link] : d.nvlinks) {
      if (!link.remote) continue;
      if (auto it = by_bus_id.find(key(*link.remote)); it != by_bus_id.end()) {
        link.remote_pci_device_id = it->second->pci_device_id;
        link.remote_pci_subsystem_id = it->second->pci_subsystem_id;
      }
    }
  }
}

}  // namespace

std::optional<BusId> parse_bus_id(std::string_view text) {
  // dddd[dddd]:bb:dd.f -- after the domain's 4 to 8 digits, a fixed layout.
  const std::size_t colon = text.find(':');
  if (colon < 4 || colon > 8 || text.size() != colon + 8 || text[colon + 3] != ':' ||
      text[colon + 6] != '.') {
    return std::nullopt;
  }
  auto domain = parse_hex(text.substr(0, colon), 4, 8);
  auto bus = parse_hex(text.substr(colon + 1, 2), 2, 2);
  auto device = parse_hex(text.substr(colon + 4, 2), 2, 2);
  auto function = parse_hex(text.substr(colon + 7, 1), 1, 1);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7) {
    return std::nullopt;
  }
  return BusId{*domain, *bus, *device, *function};
}

std::optional<Fixture> parse_fixture(std::string_view text, std::string& error) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // simdjson 3.0 refuses a BOM
  simdjson::dom::parser parser;
  element root;
  if (const auto code = parser.parse(text.data(), text.size()).get(root)) {
    error = std::string("not valid JSON: ") + simdjson::error_message(code);
    return std::nullopt;
  }
  try {
    Fixture f = fixture(root);
    resolve_remote_ids(f);
    return f;
  } catch (const Invalid& e) {
    error = e.path.empty() ? e.what : e.path.substr(1) + ": " + e.what;
    return std::nullopt;
  }
}

}  // namespace nodetopo::mock_nvml
