// for_each_on_threads(): every index visited once, whatever the number of workers, and the
// descriptor table a started worker uses — the process's, or a private copy of it that holds
// what was open before the pool and loses what the worker left open.
#include "parallel.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace nodetopo::probes::detail {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

TEST(ForEachOnThreads, VisitsEveryIndexOnceOnAnyNumberOfWorkers) {
  for (const Descriptors descriptors : {Descriptors::kShared, Descriptors::kPrivatePerWorker}) {
    for (const unsigned threads : {0U, 1U, 2U, 4U}) {
      std::vector<std::atomic<int>> visits(97);
      for_each_on_threads(
          visits.size(), threads, [&](unsigned /*worker*/, std::size_t i) { ++visits[i]; },
          descriptors);
      for (std::size_t i = 0; i < visits.size(); ++i)
        EXPECT_EQ(visits[i].load(), 1) << "index " << i << ", " << threads << " threads";
    }
  }
}

// One visit per worker (the two indexes, each worker held until both arrived): worker 1, a
// started thread, opens /dev/null and leaves it open; both use a descriptor opened before the
// pool. The number worker 1 got, and whether the earlier descriptor was usable in both.
struct LeftOpen {
  int by_started_worker = -1;
  bool before_usable_in_both = true;
};
LeftOpen leave_open(Descriptors descriptors) {
  LeftOpen out;
  const int before = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(before, 0);
  std::mutex mutex;
  std::set<unsigned> arrived;
  for_each_on_threads(
      2, 2,
      [&](unsigned worker, std::size_t /*i*/) {
        {
          const std::lock_guard lock(mutex);
          arrived.insert(worker);
        }
        // The calling thread would otherwise take both indexes before the other starts.
        for (int waits = 0; waits < 5000; ++waits) {
          {
            const std::lock_guard lock(mutex);
            if (arrived.size() == 2) break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        const bool usable = is_open(before);
        const int fd = worker == 1 ? ::open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
        const std::lock_guard lock(mutex);
        out.before_usable_in_both = out.before_usable_in_both && usable;
        if (worker == 1) out.by_started_worker = fd;
      },
      descriptors);
  EXPECT_EQ(arrived.size(), 2U);
  ::close(before);
  return out;
}

TEST(ForEachOnThreads, AStartedWorkerSharesTheTableByDefault) {
  const LeftOpen left = leave_open(Descriptors::kShared);
  EXPECT_TRUE(left.before_usable_in_both);
  ASSERT_GE(left.by_started_worker, 0);
  EXPECT_TRUE(is_open(left.by_started_worker));  // the process's own table: open here too
  ::close(left.by_started_worker);
}

TEST(ForEachOnThreads, AStartedWorkerOfPrivateDescriptorsOpensInItsOwnCopy) {
  const LeftOpen left = leave_open(Descriptors::kPrivatePerWorker);
  // What was open before the pool is in the started worker's copy too.
  EXPECT_TRUE(left.before_usable_in_both);
  // What it left open went with its copy when it ended: the number is free here (nothing else
  // in this test opens a descriptor meanwhile).
  ASSERT_GE(left.by_started_worker, 0);
  EXPECT_FALSE(is_open(left.by_started_worker));
}

TEST(ForEachOnThreads, RethrowsWhatAVisitThrewOnceEveryWorkerStopped) {
  std::atomic<int> visited{0};
  EXPECT_THROW(for_each_on_threads(
                   50, 2,
                   [&](unsigned /*worker*/, std::size_t i) {
                     ++visited;
                     if (i == 3) throw std::runtime_error("index 3");
                   },
                   Descriptors::kPrivatePerWorker),
               std::runtime_error);
  EXPECT_GE(visited.load(), 4);
}

}  // namespace
}  // namespace nodetopo::probes::detail
