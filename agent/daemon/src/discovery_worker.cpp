#include "discovery_worker.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <sys/eventfd.h>
#include <unistd.h>

namespace nodetopo::daemon {

DiscoveryWorker::DiscoveryWorker(SnapshotSource& source, std::chrono::milliseconds delay)
    : source_(source), delay_(delay) {
  fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  thread_ = std::thread([this] { run(); });
}

DiscoveryWorker::~DiscoveryWorker() {
  stop(std::chrono::milliseconds(0));
  if (fd_ >= 0) ::close(fd_);
}

void DiscoveryWorker::request(probes::Changes changes) {
  {
    std::lock_guard lock(mutex_);
    requested_ = true;
    changes_ = std::move(changes);
  }
  wake_.notify_one();
}

std::optional<Result<Snapshot>> DiscoveryWorker::take() {
  std::uint64_t value = 0;
  // Only clears the eventfd's counter; a failure (EAGAIN: nothing posted) changes nothing. The
  // result is looked at because Debian's fortified build (warn_unused_result) ignores a (void).
  if (::read(fd_, &value, sizeof(value)) < 0) value = 0;
  std::lock_guard lock(mutex_);
  std::optional<Result<Snapshot>> out = std::move(result_);
  result_.reset();
  return out;
}

bool DiscoveryWorker::stop(std::chrono::milliseconds grace) {
  if (!thread_.joinable()) return true;
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  const bool idle = finished_.wait_for(lock, grace, [this] { return !running_; });
  lock.unlock();
  if (idle) {
    thread_.join();
    return true;
  }
  // A discovery stuck in the kernel (a hung sysfs read) must not keep SIGTERM from working: the
  // caller leaves the process; the result, if it ever comes, is never published.
  thread_.detach();
  return false;
}

void DiscoveryWorker::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_) return;
    requested_ = false;
    running_ = true;
    const probes::Changes changes = std::move(changes_);
    changes_ = {};
    if (delay_.count() > 0) {
      wake_.wait_for(lock, delay_, [this] { return stopping_; });
      if (stopping_) {
        running_ = false;
        finished_.notify_all();
        return;
      }
    }
    lock.unlock();
    Result<Snapshot> snapshot = make_error(ErrorCode::kIo, "discovery did not run");
    try {
      snapshot = source_.take(changes);
    } catch (const std::exception& e) {
      snapshot = make_error(ErrorCode::kIo, std::string("discovery failed: ") + e.what());
    }
    lock.lock();
    running_ = false;
    finished_.notify_all();
    if (stopping_) return;
    result_ = std::move(snapshot);
    const std::uint64_t one = 1;
    // An eventfd write fails only when the counter would overflow, i.e. the loop has a wake-up
    // pending already: nothing to do then (the result is looked at for the fortified build).
    if (::write(fd_, &one, sizeof(one)) < 0) continue;
  }
}

}  // namespace nodetopo::daemon
