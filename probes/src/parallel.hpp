// Spreading a discovery's independent reads (PCI hierarchies, KFD nodes, class entries) over a
// few threads of its own.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include <sched.h>

#include "usable_cpus.hpp"

namespace nodetopo::probes::detail {

/// The most reader threads any of the discovery's pools runs, the calling one included
/// (discovery_thread_limit() counts on it).
inline constexpr unsigned kMaxPoolThreads = 8;

/// Threads for `items` independent reads: one per `per_thread` of them, at most `max`
/// (kMaxPoolThreads or less) and the CPUs this process may use, at least 1.
inline unsigned reader_threads(std::size_t items, std::size_t per_thread, unsigned max) {
  return static_cast<unsigned>(std::max<std::size_t>(
      1, std::min<std::size_t>({std::size_t{usable_cpus()}, std::size_t{max},
                                std::size_t{kMaxPoolThreads}, items / per_thread})));
}

/// Whether the workers a pool starts keep the process's descriptor table or take a copy.
enum class Descriptors {
  kShared,
  /// Each started worker takes a private copy of the table (unshare(CLONE_FILES)) before its
  /// first visit: its opens and closes then take no lock the other threads take, and the
  /// kernel counts no reference on a file at each of its calls. Only for visits whose every
  /// descriptor is opened and closed within the visit (or was open before the pool started):
  /// a descriptor a started worker leaves open is closed with its table, and its number means
  /// nothing to the other threads.
  kPrivatePerWorker,
};

/// Calls visit(worker, i) once for every i below `count`, on `threads` workers: worker 0 is the
/// calling thread, the others threads of their own, each taking the next index when it is done
/// with one. A thread that cannot be started leaves its share to the others. What visit()
/// throws is rethrown here once every worker has stopped (a std::jthread whose function throws
/// would end the process). visit() must make each index's result depend on that index alone, so
/// that nothing depends on scheduling.
template <class Visit>
void for_each_on_threads(std::size_t count, unsigned threads, Visit&& visit,
                         Descriptors descriptors = Descriptors::kShared) {
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> failed(std::max(threads, 1U));
  auto work = [&](unsigned worker) {
    // A worker that cannot take its copy (a seccomp filter) shares the table, as by default.
    if (worker != 0 && descriptors == Descriptors::kPrivatePerWorker) ::unshare(CLONE_FILES);
    try {
      for (std::size_t i = next++; i < count; i = next++)
        visit(worker, i);
    } catch (...) {
      failed[worker] = std::current_exception();
      next = count;  // the others stop after the index they are on
    }
  };
  {
    std::vector<std::jthread> pool;
    for (unsigned worker = 1; worker < threads; ++worker) {
      try {
        pool.emplace_back(work, worker);
      } catch (const std::system_error&) {
        break;
      }
    }
    work(0);
  }  // the pool joins here
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace nodetopo::probes::detail
