// How many CPUs this process may run on, for sizing the discovery's threads.
#pragma once

namespace nodetopo::probes {

/// The CPUs of this process's affinity mask (which taskset and cgroup cpusets shrink), at least
/// 1. Not std::thread::hardware_concurrency(): that counts the machine's online CPUs, more than a
/// container limited to a few may use, and glibc finds them by reading
/// /sys/devices/system/cpu/online — on a live root a second read of a file hwloc reads.
unsigned usable_cpus();

}  // namespace nodetopo::probes
