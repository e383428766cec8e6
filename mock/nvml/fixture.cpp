#include "fixture.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace nodetopo::mock_nvml {

namespace {

using nlohmann::json;

std::optional<std::uint32_t> parse_hex(const std::string& text, std::size_t min_digits,
                                       std::size_t max_digits) {
  if (text.size() < min_digits || text.size() > max_digits) return std::nullopt;
  std::uint32_t value = 0;
  for (char c : text) {
    const int digit = std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0'
                      : (c >= 'a' && c <= 'f')                         ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F')                         ? c - 'A' + 10
                                                                       : -1;
    if (digit < 0) return std::nullopt;
    value = (value << 4) | static_cast<std::uint32_t>(digit);
  }
  return value;
}

// Everything below throws std::runtime_error (or nlohmann's exceptions) on bad input;
// parse_fixture turns that into an error string.
[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

BusId bus_id_at(const json& j, const char* key) {
  const auto text = j.at(key).get<std::string>();
  auto id = parse_bus_id(text);
  if (!id) fail(std::string(key) + " '" + text + "' is not domain:bus:device.function");
  return *id;
}

// "0x233010de" (as the contract writes it) or a plain JSON number.
std::uint32_t id_word(const json& j, const char* key) {
  if (!j.contains(key)) return 0;
  const json& v = j.at(key);
  if (v.is_number_unsigned()) return v.get<std::uint32_t>();
  auto text = v.get<std::string>();
  if (text.starts_with("0x") || text.starts_with("0X")) text = text.substr(2);
  auto value = parse_hex(text, 1, 8);
  if (!value) fail(std::string(key) + " '" + v.get<std::string>() + "' is not a 32-bit hex value");
  return *value;
}

template <class T>
std::optional<T> optional_at(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

std::map<std::string, int> fail_map(const json& j) {
  std::map<std::string, int> out;
  if (!j.contains("fail")) return out;
  for (const auto& [name, code] : j.at("fail").items())
    out[name] = code.get<int>();
  return out;
}

int remote_type(const std::string& text) {
  // nvmlIntNvLinkDeviceType_t values.
  if (text == "gpu") return 0x00;
  if (text == "ibmnpu") return 0x01;
  if (text == "switch") return 0x02;
  fail("remote_type '" + text + "' is not gpu, switch or ibmnpu");
}

Fabric fabric_at(const json& j) {
  Fabric f;
  if (j.contains("cluster_uuid")) {
    std::string hex = j.at("cluster_uuid").get<std::string>();
    hex.erase(std::remove(hex.begin(), hex.end(), '-'), hex.end());
    if (hex.size() != 32) fail("fabric.cluster_uuid is not a UUID (32 hex digits)");
    for (std::size_t i = 0; i < 16; ++i) {
      auto byte = parse_hex(hex.substr(2 * i, 2), 2, 2);
      if (!byte) fail("fabric.cluster_uuid is not a UUID (32 hex digits)");
      f.cluster_uuid[i] = static_cast<unsigned char>(*byte);
    }
  }
  f.clique_id = optional_at<std::uint32_t>(j, "clique_id").value_or(0);
  f.state = optional_at<unsigned char>(j, "state").value_or(3);
  f.status = optional_at<int>(j, "status").value_or(0);
  return f;
}

Device device_at(const json& j) {
  Device d;
  d.index = j.at("index").get<std::uint32_t>();
  d.bus_id = bus_id_at(j, "pci_bus_id");
  d.pci_device_id = id_word(j, "pci_device_id");
  d.pci_subsystem_id = id_word(j, "pci_subsystem_id");
  d.uuid = optional_at<std::string>(j, "uuid");
  d.name = optional_at<std::string>(j, "name");
  d.serial = optional_at<std::string>(j, "serial");
  d.memory_total_bytes = optional_at<std::uint64_t>(j, "memory_total_bytes");
  d.architecture = optional_at<std::uint32_t>(j, "architecture");
  d.numa_node = optional_at<std::uint32_t>(j, "numa_node");
  if (j.contains("fabric") && !j.at("fabric").is_null()) d.fabric = fabric_at(j.at("fabric"));
  if (j.contains("nvlinks")) {
    for (const json& l : j.at("nvlinks")) {
      const auto number = l.at("link").get<std::uint32_t>();
      NvLink link;
      link.active = l.at("active").get<bool>();
      if (link.active) {
        link.remote = bus_id_at(l, "remote_pci_bus_id");
        link.remote_type = remote_type(l.at("remote_type").get<std::string>());
      }
      if (!d.nvlinks.emplace(number, link).second) {
        fail("link " + std::to_string(number) + " listed twice");
      }
    }
  }
  d.fail = fail_map(j);
  return d;
}

}  // namespace

std::optional<BusId> parse_bus_id(const std::string& text) {
  const std::size_t colon1 = text.find(':');
  const std::size_t colon2 = text.find(':', colon1 + 1);
  const std::size_t dot = text.find('.', colon2 + 1);
  if (colon1 == std::string::npos || colon2 == std::string::npos || dot == std::string::npos) {
    return std::nullopt;
  }
  auto domain = parse_hex(text.substr(0, colon1), 4, 8);
  auto bus = parse_hex(text.substr(colon1 + 1, colon2 - colon1 - 1), 2, 2);
  auto device = parse_hex(text.substr(colon2 + 1, dot - colon2 - 1), 2, 2);
  auto function = parse_hex(text.substr(dot + 1), 1, 1);
  if (!domain || !bus || !device || !function || *device > 0x1f || *function > 7) {
    return std::nullopt;
  }
  return BusId{*domain, *bus, *device, *function};
}

std::optional<Fixture> parse_fixture(const std::string& text, std::string& error) {
  try {
    const json j = json::parse(text);
    Fixture f;
    f.driver_version = optional_at<std::string>(j, "driver_version");
    f.cuda_driver_version = optional_at<int>(j, "cuda_driver_version");
    f.fail = fail_map(j);
    std::vector<Device> devices;
    if (j.contains("devices")) {
      for (const json& d : j.at("devices"))
        devices.push_back(device_at(d));
    }
    // Indices must be exactly 0..N-1; the handle of index i is devices[i].
    f.devices.resize(devices.size());
    std::vector<bool> seen(devices.size(), false);
    for (Device& d : devices) {
      if (d.index >= devices.size() || seen[d.index]) {
        fail("device indices are not 0..N-1 (index " + std::to_string(d.index) + ")");
      }
      seen[d.index] = true;
      f.devices[d.index] = std::move(d);
    }
    return f;
  } catch (const std::exception& e) {
    error = e.what();
    return std::nullopt;
  }
}

}  // namespace nodetopo::mock_nvml
