// Pass 1: logical CPUs, NUMA nodes and their distances (written by render/write_system.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan_state.hpp"

namespace nodetopo::mock::detail {

// Logical CPU numbers follow Linux on x86, where the firmware lists the first thread of every
// core of every socket before any second thread: cpu = (thread * sockets + socket) * cores + core.
// hwloc and the probes must find SMT siblings far apart (0 and 56 on a 56-core socket), as on
// real hosts. A socket's cores are split into contiguous blocks, one per NUMA node of the socket
// (sub-NUMA clustering), in the order the profile lists the nodes.
void Planner::plan_cpus() {
  const CpuSpec& c = p_.cpu;
  const std::uint64_t total = std::uint64_t{c.sockets} * c.cores_per_socket * c.threads_per_core;
  if (total > 8192) {
    fail(c.origin, "cores_per_socket",
         std::to_string(total) + " CPUs in all; the mock supports at most 8192");
    return;
  }
  const std::size_t n = p_.numa.size();
  if (n == 0) {
    fail({"numa", 0}, "", "at least one NUMA node is required");
    return;
  }
  std::vector<std::vector<std::uint32_t>> of_socket(c.sockets);
  for (std::size_t i = 0; i < n; ++i) {
    const NumaSpec& node = p_.numa[i];
    if (node.id != i) {
      fail(node.origin, "id",
           "NUMA ids must be 0, 1, 2, ... in order: expected " + std::to_string(i) + ", got " +
               std::to_string(node.id));
      return;
    }
    if (node.socket && *node.socket >= c.sockets) {
      fail(node.origin, "socket",
           "socket " + std::to_string(*node.socket) + " does not exist (cpu.sockets is " +
               std::to_string(c.sockets) + ")");
      return;
    }
    if (node.memory_bytes == 0 || node.memory_bytes % 4096 != 0) {
      fail(node.origin, "memory",
           "must be a positive multiple of the 4 KiB page size (got " +
               std::to_string(node.memory_bytes) + " bytes)");
      return;
    }
    if (node.socket) of_socket[*node.socket].push_back(node.id);
  }
  for (std::uint32_t s = 0; s < c.sockets; ++s) {
    if (of_socket[s].empty()) {
      fail(c.origin, "sockets",
           "socket " + std::to_string(s) +
               " has no NUMA node: add a numa entry with socket: " + std::to_string(s));
      return;
    }
    if (c.cores_per_socket % of_socket[s].size() != 0) {
      fail(p_.numa[of_socket[s].front()].origin, "socket",
           "the " + std::to_string(c.cores_per_socket) + " cores of socket " + std::to_string(s) +
               " do not split evenly over its " + std::to_string(of_socket[s].size()) +
               " NUMA nodes");
      return;
    }
  }
  if (c.caches && c.caches->l3_cores != 0 &&
      (c.caches->l3_cores > c.cores_per_socket || c.cores_per_socket % c.caches->l3_cores != 0)) {
    fail(c.origin, "caches.l3_cores",
         std::to_string(c.caches->l3_cores) + " does not divide the " +
             std::to_string(c.cores_per_socket) + " cores of a socket");
    return;
  }
  plan_.numa_cpus.assign(n, CpuSet{});
  plan_.cpus.resize(total);
  const std::uint32_t per_socket = c.cores_per_socket;
  for (std::uint32_t t = 0; t < c.threads_per_core; ++t) {
    for (std::uint32_t s = 0; s < c.sockets; ++s) {
      const auto nodes = static_cast<std::uint32_t>(of_socket[s].size());
      for (std::uint32_t core = 0; core < per_socket; ++core) {
        const std::uint32_t cpu = (t * c.sockets + s) * per_socket + core;
        const std::uint32_t numa = of_socket[s][core / (per_socket / nodes)];
        plan_.cpus[cpu] = {s, core, t, numa};
        plan_.numa_cpus[numa].insert(cpu);
        plan_.all_cpus.insert(cpu);
      }
    }
  }
  plan_distances();
}

// The SLIT matrix: given for every node or for none. Given ones must be what the kernel accepts
// (10 on the diagonal, more than 10 elsewhere, symmetric), or hwloc and the probes would read
// distances no real firmware reports.
void Planner::plan_distances() {
  const std::size_t n = p_.numa.size();
  std::size_t given = 0;
  for (const NumaSpec& node : p_.numa)
    given += node.distances.empty() ? 0 : 1;
  if (given != 0 && given != n) {
    for (const NumaSpec& node : p_.numa) {
      if (node.distances.empty()) {
        fail(node.origin, "distances", "give distances for every NUMA node or for none");
        return;
      }
    }
  }
  if (given == 0) {
    // Defaults like common firmware: 10 local, 12 same socket, 21 (Intel) or 32 (AMD) across
    // sockets, 30 to and from memory-only nodes.
    const std::uint32_t remote = p_.cpu.vendor == "AuthenticAMD" ? 32 : 21;
    plan_.distances.assign(n, std::vector<std::uint32_t>(n, 0));
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const auto& a = p_.numa[i].socket;
        const auto& b = p_.numa[j].socket;
        std::uint32_t d = 30;
        if (i == j) {
          d = 10;
        } else if (a && b) {
          d = *a == *b ? 12 : remote;
        }
        plan_.distances[i][j] = d;
      }
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const NumaSpec& node = p_.numa[i];
    if (node.distances.size() != n) {
      fail(node.origin, "distances",
           "has " + std::to_string(node.distances.size()) + " entries; expected " +
               std::to_string(n) + " (one per NUMA node)");
      return;
    }
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint32_t d = node.distances[j];
      const std::string field = "distances[" + std::to_string(j) + "]";
      if (i == j && d != 10) {
        fail(node.origin, field, "the distance of a node to itself must be 10");
        return;
      }
      if (i != j && d <= 10) {
        fail(node.origin, field, "the distance to another node must be more than 10");
        return;
      }
      if (p_.numa[j].distances.size() == n && p_.numa[j].distances[i] != d) {
        fail(node.origin, field,
             std::to_string(d) + " differs from numa[" + std::to_string(j) + "].distances[" +
                 std::to_string(i) + "] (" + std::to_string(p_.numa[j].distances[i]) +
                 "): distances are symmetric");
        return;
      }
    }
    plan_.distances.push_back(node.distances);
  }
}

// PCI devices may name a NUMA node only if it has CPUs: the kernel reports memory-only nodes
// (CXL, GPU memory) as no device's locality, and local_cpulist would otherwise be empty.
void Planner::check_numa(const Origin& origin, std::string_view subfield, int numa) {
  if (numa == -1) return;
  const std::size_t n = plan_.numa_cpus.size();
  if (numa < 0 || static_cast<std::size_t>(numa) >= n) {
    fail(origin, subfield,
         "NUMA node " + std::to_string(numa) + " does not exist (nodes: " +
             (n == 1 ? std::string("0") : "0-" + std::to_string(n - 1)) + ")");
    return;
  }
  if (plan_.numa_cpus[static_cast<std::size_t>(numa)].empty()) {
    fail(origin, subfield,
         "NUMA node " + std::to_string(numa) +
             " has no CPUs; PCI devices are local to a node with CPUs (or -1)");
  }
}

}  // namespace nodetopo::mock::detail
