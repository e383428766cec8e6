#include "usable_cpus.hpp"

#include <algorithm>

#include <sched.h>

namespace nodetopo::probes {

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

}  // namespace nodetopo::probes
