// The plugin's YAML configuration: one strict reader (unknown keys and bad values are refused
// with the key's path), defaults in config.hpp.
#include <set>

#include <yaml-cpp/yaml.h>

#include <nodetopo/kubelet/config.hpp>

namespace nodetopo::kubelet {

namespace {

Error bad(const std::string& file, const std::string& key, const std::string& why) {
  return make_error(ErrorCode::kInvalid, key + ": " + why, file);
}

Result<std::chrono::milliseconds> read_millis(const YAML::Node& node, const std::string& file,
                                              const std::string& key) {
  try {
    const long long value = node.as<long long>();
    if (value <= 0) return bad(file, key, "must be a positive number of milliseconds");
    return std::chrono::milliseconds(value);
  } catch (const YAML::Exception&) {
    return bad(file, key, "must be a number of milliseconds");
  }
}

Result<std::string> read_string(const YAML::Node& node, const std::string& file,
                                const std::string& key) {
  if (!node.IsScalar()) return bad(file, key, "must be a string");
  return node.as<std::string>();
}

}  // namespace

std::string PluginConfig::registration_socket() const {
  const std::string uid = instance_uid.empty() ? "" : "-" + instance_uid;
  return registry_dir + "/" + driver + uid + "-reg.sock";
}

std::string PluginConfig::dra_socket() const {
  // "dra" is the helper's name too; the directory is the driver's, so the path is unique.
  const std::string uid = instance_uid.empty() ? "" : "-" + instance_uid;
  return plugins_dir + "/" + driver + "/dra" + uid + ".sock";
}

std::string PluginConfig::checkpoint_file() const {
  const std::string dir = state_dir.empty() ? plugins_dir + "/" + driver : state_dir;
  return dir + "/checkpoint.json";
}

Result<PublishPolicy> parse_publish_policy(const std::string& text) {
  if (text == "auto") return PublishPolicy::kAuto;
  if (text == "always") return PublishPolicy::kAlways;
  if (text == "never") return PublishPolicy::kNever;
  return make_error(ErrorCode::kInvalid,
                    "publish policy \"" + text + "\" is not one of auto, always, never");
}

Result<PluginConfig> load_plugin_config(const std::string& path, PluginConfig config) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return make_error(ErrorCode::kNotFound, "cannot read the configuration file", path);
  } catch (const YAML::Exception& e) {
    return make_error(ErrorCode::kMalformed, std::string("not YAML: ") + e.what(), path);
  }
  if (root.IsNull()) return config;
  if (!root.IsMap()) return bad(path, "(top level)", "must be a map of keys");
  for (const auto& entry : root) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    auto text = [&](std::string& into) -> Result<void> {
      auto s = read_string(value, path, key);
      if (!s) return s.error();
      if (s->empty()) return bad(path, key, "must not be empty");
      into = *s;
      return {};
    };
    Result<void> done;
    if (key == "driver")
      done = text(config.driver);
    else if (key == "nodeName")
      done = text(config.node_name);
    else if (key == "registryDir")
      done = text(config.registry_dir);
    else if (key == "pluginsDir")
      done = text(config.plugins_dir);
    else if (key == "cdiDir")
      done = text(config.cdi_dir);
    else if (key == "stateDir")
      done = text(config.state_dir);
    else if (key == "instanceUID")
      done = text(config.instance_uid);
    else if (key == "vendorCdiDirs") {
      if (!value.IsSequence()) return bad(path, key, "must be a list of directories");
      config.vendor_cdi_dirs.clear();
      for (std::size_t i = 0; i < value.size(); ++i) {
        auto s = read_string(value[i], path, key + "[" + std::to_string(i) + "]");
        if (!s) return s.error();
        config.vendor_cdi_dirs.push_back(*s);
      }
    } else if (key == "socketCheckMs" || key == "registrationRetryMs" ||
               key == "foreignSlicePollMs") {
      auto ms = read_millis(value, path, key);
      if (!ms) return ms.error();
      (key == "socketCheckMs"         ? config.socket_check
       : key == "registrationRetryMs" ? config.registration_retry
                                      : config.foreign_slice_poll) = *ms;
    } else if (key == "publish") {
      try {
        config.publish = value.as<bool>();
      } catch (const YAML::Exception&) {
        return bad(path, key, "must be true or false");
      }
    } else if (key == "publishPolicy") {
      if (!value.IsMap()) return bad(path, key, "must map gpu, nic, accelerator to a policy");
      for (const auto& p : value) {
        const std::string kind = p.first.as<std::string>();
        const std::string where = key + "." + kind;
        DeviceKind k{};
        if (kind == "gpu")
          k = DeviceKind::kGpu;
        else if (kind == "nic")
          k = DeviceKind::kNic;
        else if (kind == "accelerator")
          k = DeviceKind::kAccelerator;
        else
          return bad(path, where, "unknown device kind (gpu, nic, accelerator)");
        auto s = read_string(p.second, path, where);
        if (!s) return s.error();
        auto policy = parse_publish_policy(*s);
        if (!policy) return bad(path, where, policy.error().message);
        config.policy[k] = *policy;
      }
    } else {
      return bad(path, key, "unknown key (see docs/kubelet.md)");
    }
    if (!done) return done.error();
  }
  return config;
}

}  // namespace nodetopo::kubelet
