// Profile-only YAML readers: PCIe links and device.function pairs. They build model types
// (PcieLink), so they live in mock, above the model, over base's strict reader
// (nodetopo/base/yaml_reader.hpp), whose names are brought in here for the profile parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nodetopo/base/yaml_reader.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo::mock::detail {

using yaml::Fields;
using yaml::line_of;
using yaml::parse_number;
using yaml::read_bool;
using yaml::read_int;
using yaml::read_int_map;
using yaml::read_size;
using yaml::read_string;
using yaml::read_string_list;
using yaml::read_uint;
using yaml::Reader;

/// PCIe links: "gen5 x16", "32 GT/s x16", "gen4" / "x8" alone, or {speed: .., width: ..}.
std::optional<PcieLink> read_link(Reader& r, const YAML::Node& n, const std::string& path);

/// "DD.F" device/function on a bus ("01.0", "1f.3").
struct DevFn {
  std::uint8_t device = 0;
  std::uint8_t function = 0;
};
std::optional<DevFn> read_devfn(Reader& r, const YAML::Node& n, const std::string& path);

/// Parses a PCIe speed in GT/s ("2.5", "32", "gen5") into MT/s; nullopt when not a PCIe speed.
std::optional<std::uint32_t> parse_pcie_speed(std::string_view text);

}  // namespace nodetopo::mock::detail
