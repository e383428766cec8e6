#include <nodetopo/base/log.hpp>
#include <nodetopo/probes/probe.hpp>

#include "shared_reads.hpp"

namespace nodetopo::probes {

Result<std::vector<std::string>> list_subsystem(const SysRoot& root, std::string_view dir,
                                                std::string_view absent) {
  auto names = root.list_dir(dir);
  if (!names && names.error().code == ErrorCode::kNotFound) {
    return make_error(ErrorCode::kUnavailable, std::string(absent), root.host_path(dir));
  }
  return names;
}

Result<SysDir> open_subsystem(const SysRoot& root, std::string_view dir, std::string_view absent) {
  auto opened = root.open_dir(dir);
  if (!opened && opened.error().code == ErrorCode::kNotFound) {
    return make_error(ErrorCode::kUnavailable, std::string(absent), root.host_path(dir));
  }
  return opened;
}

ProbeContext::ProbeContext(const SysRoot& root, const ProbeOptions& options, std::string probe_name,
                           DiscoveryCache* cache, std::shared_ptr<SharedReads> shared)
    : root_(root),
      options_(options),
      probe_name_(std::move(probe_name)),
      cache_(cache),
      shared_(std::move(shared)) {}

spdlog::logger& ProbeContext::log() const {
  if (!logger_) logger_ = component_logger("probe." + probe_name_);
  return *logger_;
}

SharedReads& ProbeContext::shared_reads() {
  if (!shared_) shared_ = std::make_shared<SharedReads>();
  return *shared_;
}

std::unique_ptr<ProbeContext> ProbeContext::sibling() {
  (void)shared_reads();  // one object for both, made before a thread could race to make it
  auto out = std::make_unique<ProbeContext>(*this);  // root, options, logger, cache, shared reads
  out->warnings_.clear();
  out->hold_ = false;
  out->held_.clear();
  out->capture_ = nullptr;
  return out;
}

void ProbeContext::release_log() {
  hold_ = false;
  for (const std::string& line : held_)
    log().warn("{}", line);
  held_.clear();
}

void ProbeContext::warn(const Error& error) {
  warn(error.message, error.path);
}

void ProbeContext::warn(std::string_view message, std::string_view path) {
  // The log names the full path for the operator; the report keeps it relative to the root so
  // that reports of the same capture are identical wherever it is unpacked.
  std::string full =
      path.empty() ? std::string(message) : std::string(path) + ": " + std::string(message);
  const std::string rel = root_.relative(path);
  std::string recorded = rel.empty() ? std::string(message) : rel + ": " + std::string(message);
  keep({std::move(recorded), std::move(full)});
}

void ProbeContext::replay(const std::vector<HeldWarning>& warnings) {
  for (const HeldWarning& w : warnings)
    keep(w);
}

void ProbeContext::keep(HeldWarning warning) {
  if (capture_ != nullptr) {
    capture_->push_back(std::move(warning));
    return;
  }
  warnings_.push_back(std::move(warning.recorded));
  if (hold_) {
    held_.push_back(std::move(warning.logged));
  } else {
    log().warn("{}", warning.logged);
  }
}

}  // namespace nodetopo::probes
