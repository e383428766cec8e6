#include <cstdlib>

#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/environment.hpp>

#include "cpu/hwloc_environment.hpp"

namespace nodetopo::probes {

std::vector<EnvVar> discovery_environment(const SysRoot& root, const ProbeOptions& options) {
  std::vector<EnvVar> vars = hwloc_environment(root);
  for (const auto& [name, value] : options.library_environment) {
    vars.push_back({name, value});
  }
  return vars;
}

void write_process_environment(const std::vector<EnvVar>& vars) {
  for (const EnvVar& v : vars) {
    // NOLINTBEGIN(concurrency-mt-unsafe): the caller guarantees a single thread (see header)
    if (v.value) {
      ::setenv(v.name.c_str(), v.value->c_str(), 1);
    } else {
      ::unsetenv(v.name.c_str());
    }
    // NOLINTEND(concurrency-mt-unsafe)
  }
}

std::optional<std::string> environment_mismatch(const std::vector<EnvVar>& vars) {
  for (const EnvVar& v : vars) {
    const char* now = std::getenv(v.name.c_str());  // NOLINT(concurrency-mt-unsafe): a read
    if (v.value ? (now != nullptr && *v.value == now) : now == nullptr) continue;
    const std::string is = now != nullptr ? "\"" + std::string(now) + "\"" : "unset";
    const std::string wanted = v.value ? "\"" + *v.value + "\"" : "unset";
    return v.name + " is " + is + ", not " + wanted;
  }
  return std::nullopt;
}

std::string environment_not_written(const std::string& mismatch) {
  return "the process environment was not written for this host root (" + mismatch +
         "): the program must call probes::write_process_environment() once, before any thread "
         "starts (docs/ARCHITECTURE.md, \"The environment\")";
}

}  // namespace nodetopo::probes
