// hwloc's settings that exist only as environment variables (the rest goes through its API in
// the cpu probe). Private to the probes; the public entry is nodetopo/probes/environment.hpp.
#pragma once

#include <vector>

#include <nodetopo/probes/environment.hpp>

namespace nodetopo::probes {

/// HWLOC_FSROOT (unset for "/"), HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1, HWLOC_PLUGINS_PATH pointing
/// nowhere, HWLOC_XMLFILE / HWLOC_SYNTHETIC / HWLOC_COMPONENTS / HWLOC_DUMP_NOFILE_INFO unset, and
/// HWLOC_HIDE_ERRORS=2 with JSON logs (with text logs it is left as the user set it).
std::vector<EnvVar> hwloc_environment(const SysRoot& root);

}  // namespace nodetopo::probes
