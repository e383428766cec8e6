// One worker thread that takes snapshots, so that the loop keeps answering D-Bus and HTTP while
// a discovery runs (NVML on a real 8-GPU host can take far longer than the 10-50 ms of a mock).
// The loop asks with request(); the worker posts the result back by writing an eventfd that is
// an io source of the loop, and the loop collects it with take(). The worker touches nothing
// but the SnapshotSource, which nothing else uses.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "snapshot_source.hpp"

namespace nodetopo::daemon {

class DiscoveryWorker {
 public:
  /// `delay` is slept before each discovery (interruptibly): a test hook that makes a
  /// discovery last long enough to be interrupted.
  DiscoveryWorker(SnapshotSource& source, std::chrono::milliseconds delay);
  ~DiscoveryWorker();
  DiscoveryWorker(const DiscoveryWorker&) = delete;
  DiscoveryWorker& operator=(const DiscoveryWorker&) = delete;

  /// The eventfd that becomes readable when a result is ready.
  [[nodiscard]] int fd() const { return fd_; }
  /// Starts one discovery of what `changes` says may have changed (SnapshotSource::take).
  /// Precondition: none running (the Manager serialises).
  void request(probes::Changes changes);
  /// The finished result, if any; clears the eventfd.
  std::optional<Result<Snapshot>> take();
  /// Stops the thread: waits up to `grace` for a running discovery, then gives up on it.
  /// Returns false when the thread could not be joined in time (it is detached; the caller
  /// should leave the process promptly).
  bool stop(std::chrono::milliseconds grace);

 private:
  void run();

  SnapshotSource& source_;
  std::chrono::milliseconds delay_;
  int fd_ = -1;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  bool requested_ = false;
  probes::Changes changes_;
  bool running_ = false;
  bool stopping_ = false;
  std::optional<Result<Snapshot>> result_;
  std::thread thread_;
};

}  // namespace nodetopo::daemon
