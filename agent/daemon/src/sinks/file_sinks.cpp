#include "file_sinks.hpp"

#include <fstream>
#include <sstream>

#include <nodetopo/base/atomic_file.hpp>
#include <nodetopo/base/log.hpp>

#include "../snapshot_source.hpp"

namespace nodetopo::daemon {

namespace {

// Writes one document of the snapshot to a file atomically (dot-file + rename, which NFD
// requires: it skips dot-files and re-reads on rename), and only when the content differs from
// what the file holds, so a restart or a retry of the same content keeps the inode and mtime.
class FileSink final : public Sink {
 public:
  FileSink(std::string name, std::string document, std::string path)
      : name_(std::move(name)), document_(std::move(document)), path_(std::move(path)) {}

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] const SinkState& state() const override { return state_; }

  void publish(const Publication& p) override {
    static const core::ServedDocuments kNone;
    const core::ServedDocuments& served = p.snapshot.served ? *p.snapshot.served : kNone;
    const auto doc = served.documents.find(document_);
    if (doc == served.documents.end()) {
      const auto why = served.errors.find(document_);
      fail(why != served.errors.end() ? why->second : "no " + document_ + " document");
      return;
    }
    if (!same_content(doc->second)) {
      const Result<void> written = write_file_atomic(path_, doc->second);
      if (!written) {
        fail(written.error().describe());
        return;
      }
      ++state_.writes;
      component_logger("agent.sink")
          ->info("sink {}: wrote {} (generation {})", name_, path_, p.generation);
    }
    state_.ok = true;
    state_.error.clear();
    state_.generation = p.generation;
  }

 private:
  bool same_content(const std::string& content) const {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return false;
    std::ostringstream existing;
    existing << in.rdbuf();
    return !in.bad() && existing.str() == content;
  }

  void fail(const std::string& why) {
    state_.ok = false;
    state_.error = why;
    ++state_.errors;
    component_logger("agent.sink")->error("sink {}: {}", name_, why);
  }

  std::string name_;
  std::string document_;
  std::string path_;
  SinkState state_;
};

}  // namespace

std::unique_ptr<Sink> make_nfd_sink(std::string path) {
  return std::make_unique<FileSink>("nfd", "labels/nfd", std::move(path));
}

std::unique_ptr<Sink> make_json_sink(std::string path) {
  return std::make_unique<FileSink>("json", "dump/json", std::move(path));
}

}  // namespace nodetopo::daemon
