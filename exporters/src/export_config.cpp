#include <algorithm>
#include <exception>
#include <set>

#include <yaml-cpp/yaml.h>

#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/k8s_names.hpp>

namespace nodetopo::exporters {

namespace {

Error bad(std::string_view source, const std::string& message) {
  return make_error(ErrorCode::kInvalid, message, std::string(source));
}

Result<std::uint64_t> to_uint(const YAML::Node& node, const std::string& key,
                              std::string_view source) {
  if (!node.IsScalar()) return bad(source, key + ": expected a number");
  const auto value = k8s::parse_quantity(node.Scalar());
  if (!value) {
    return bad(source, key + ": \"" + node.Scalar() + "\" is not a whole number or quantity");
  }
  return *value;
}

Result<SharingConfig> parse_sharing(const YAML::Node& node, std::string_view source) {
  if (!node.IsMap()) return bad(source, "sharing: expected a mapping");
  SharingConfig cfg;
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    if (key == "mode") {
      if (!value.IsScalar()) return bad(source, "sharing.mode: expected a string");
      auto mode = parse_sharing_mode(value.Scalar());
      if (!mode) return bad(source, "sharing.mode: " + mode.error().message);
      cfg.mode = mode.value();
    } else if (key == "cores") {
      auto v = to_uint(value, "sharing.cores", source);
      if (!v) return v.error();
      if (v.value() < 1 || v.value() > 10000) {
        return bad(source, "sharing.cores: must be between 1 and 10000");
      }
      cfg.cores = static_cast<std::uint32_t>(v.value());
    } else if (key == "memoryStep") {
      auto v = to_uint(value, "sharing.memoryStep", source);
      if (!v) return v.error();
      if (v.value() < (std::uint64_t{1} << 20)) {
        return bad(source, "sharing.memoryStep: must be at least 1Mi");
      }
      cfg.memory_step = v.value();
    } else if (key == "partitions") {
      if (!value.IsSequence()) return bad(source, "sharing.partitions: expected a list");
      cfg.partitions.clear();
      std::set<std::uint32_t> seen;
      for (const auto& item : value) {
        auto v = to_uint(item, "sharing.partitions", source);
        if (!v) return v.error();
        if (v.value() < 2 || v.value() > 16) {
          return bad(source, "sharing.partitions: each entry must be between 2 and 16");
        }
        if (!seen.insert(static_cast<std::uint32_t>(v.value())).second) {
          return bad(source, "sharing.partitions: duplicate entry " + std::to_string(v.value()));
        }
      }
      cfg.partitions.assign(seen.begin(), seen.end());
    } else {
      return bad(source, "sharing: unknown key \"" + key +
                             "\" (known: mode, cores, memoryStep, partitions)");
    }
  }
  return cfg;
}

}  // namespace

std::string_view to_string(SharingMode mode) {
  switch (mode) {
    case SharingMode::kNone:
      return "none";
    case SharingMode::kConsumable:
      return "consumable";
    case SharingMode::kPartitionable:
      return "partitionable";
  }
  return "none";
}

Result<SharingMode> parse_sharing_mode(std::string_view text) {
  for (SharingMode m :
       {SharingMode::kNone, SharingMode::kConsumable, SharingMode::kPartitionable}) {
    if (text == to_string(m)) return m;
  }
  return make_error(ErrorCode::kInvalid, "unknown sharing mode \"" + std::string(text) +
                                             "\" (expected none, consumable or partitionable)");
}

Result<ExportConfig> parse_export_config(std::string_view text, std::string_view source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kMalformed, std::string("not valid YAML: ") + e.what(),
                      std::string(source));
  }
  ExportConfig cfg;
  if (root.IsNull()) return cfg;  // an empty file changes nothing
  if (!root.IsMap()) return bad(source, "expected a mapping at the top level");
  try {
    for (const auto& entry : root) {
      const std::string key = entry.first.as<std::string>();
      if (key == "driver") {
        if (!entry.second.IsScalar()) return bad(source, "driver: expected a string");
        const std::string driver = entry.second.Scalar();
        if (std::string why = k8s::check_dns_subdomain(driver, 63); !why.empty()) {
          return bad(source, "driver: " + why);
        }
        cfg.driver = driver;
      } else if (key == "sharing") {
        auto sharing = parse_sharing(entry.second, source);
        if (!sharing) return sharing.error();
        cfg.sharing = std::move(sharing.value());
      } else {
        return bad(source, "unknown key \"" + key + "\" (known: driver, sharing)");
      }
    }
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kMalformed, e.what(), std::string(source));
  }
  return cfg;
}

}  // namespace nodetopo::exporters
