#include <cstdint>
#include <exception>
#include <optional>
#include <set>

#include <nodetopo/base/yaml_reader.hpp>
#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/exporters/k8s_names.hpp>

namespace nodetopo::exporters {

namespace {

// A whole number or a Kubernetes quantity ("100", "1Gi", "512Mi"), within [min, max]; `what`
// says in words what the bound means when it is broken.
std::optional<std::uint64_t> read_quantity(yaml::Reader& r, const YAML::Node& node,
                                           const std::string& path, std::uint64_t min,
                                           std::uint64_t max, std::string_view range) {
  const auto text = yaml::read_scalar(r, node, path, "a number");
  if (!text) return std::nullopt;
  const auto value = k8s::parse_quantity(*text);
  if (!value) {
    r.fail(node, path, "\"" + *text + "\" is not a whole number or quantity");
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    r.fail(node, path, std::string(range));
    return std::nullopt;
  }
  return value;
}

SharingConfig parse_sharing(yaml::Reader& r, const YAML::Node& node) {
  SharingConfig cfg;
  yaml::Fields f(r, node, "sharing");
  const YAML::Node mode_node = f.take("mode");
  if (auto text = yaml::read_string(r, mode_node, f.path("mode"))) {
    auto mode = parse_sharing_mode(*text);
    if (mode) {
      cfg.mode = mode.value();
    } else {
      r.fail(mode_node, f.path("mode"), mode.error().message);
    }
  }
  if (auto v = read_quantity(r, f.take("cores"), f.path("cores"), 1, 10000,
                             "must be between 1 and 10000")) {
    cfg.cores = static_cast<std::uint32_t>(*v);
  }
  if (auto v = read_quantity(r, f.take("memoryStep"), f.path("memoryStep"), std::uint64_t{1} << 20,
                             UINT64_MAX, "must be at least 1Mi")) {
    cfg.memory_step = *v;
  }
  const YAML::Node parts = f.take("partitions");
  if (!yaml::is_absent(parts)) {
    if (!parts.IsSequence()) {
      r.fail(parts, f.path("partitions"), "expected a list");
    } else {
      std::set<std::uint32_t> seen;
      for (const auto& item : parts) {
        auto v = read_quantity(r, item, f.path("partitions"), 2, 16,
                               "each entry must be between 2 and 16");
        if (!v) break;
        if (!seen.insert(static_cast<std::uint32_t>(*v)).second) {
          r.fail(item, f.path("partitions"), "duplicate entry " + std::to_string(*v));
          break;
        }
      }
      cfg.partitions.assign(seen.begin(), seen.end());
    }
  }
  f.done();
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
  if (!root.IsMap()) {
    return make_error(ErrorCode::kInvalid, "expected a mapping at the top level",
                      std::string(source));
  }
  yaml::Reader r(std::string(source), "settings");
  try {
    yaml::Fields f(r, root, "");
    const YAML::Node driver_node = f.take("driver");
    if (auto driver = yaml::read_string(r, driver_node, "driver")) {
      if (std::string why = k8s::check_dns_subdomain(*driver, 63); !why.empty()) {
        r.fail(driver_node, "driver", why);
      } else {
        cfg.driver = *driver;
      }
    }
    const YAML::Node sharing = f.take("sharing");
    if (sharing.IsDefined()) {
      // `sharing:` with nothing after it is a mistake, not "no sharing": say so.
      if (!sharing.IsMap()) {
        r.fail(sharing, "sharing", "expected a mapping");
      } else {
        cfg.sharing = parse_sharing(r, sharing);
      }
    }
    const YAML::Node instance = f.take("instance");
    if (instance.IsDefined()) {
      if (!instance.IsMap()) {
        r.fail(instance, "instance", "expected a mapping");
      } else {
        yaml::Fields i(r, instance, "instance");
        for (const auto& [key, name] :
             {std::pair<const char*, std::string_view>{"type", kInstanceTypeLabel},
              {"capacityType", kCapacityTypeLabel},
              {"reservation", kReservationLabel}}) {
          const YAML::Node n = i.take(key);
          if (auto v = yaml::read_string(r, n, i.path(key))) {
            if (std::string why = check_instance_value(name, *v); !why.empty()) {
              r.fail(n, i.path(key), why);
            } else {
              cfg.instance[std::string(name)] = *v;
            }
          }
        }
        i.done();
      }
    }
    f.done();
  } catch (const std::exception& e) {
    return make_error(ErrorCode::kMalformed, e.what(), std::string(source));
  }
  if (r.failed()) return r.error();
  return cfg;
}

}  // namespace nodetopo::exporters
