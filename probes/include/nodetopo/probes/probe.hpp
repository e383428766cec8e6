// The Probe interface and the context a probe runs in.
//
// A probe discovers one subsystem and adds what it found to the TopologyBuilder. Rules
// (docs/ARCHITECTURE.md, "Data flow"):
// - a missing optional file drops one attribute; a malformed device is skipped with one warning;
//   only an unreadable subsystem root makes discover() return an error;
// - the runner catches errors and exceptions per probe, so one failing probe never stops the
//   others;
// - every host file is opened through the SysRoot (ctx.root()), never by path;
// - the process environment is never written by a probe: what libraries read from it (hwloc's
//   HWLOC_FSROOT, a drop-in NVML's fixture) is written once by main, before any thread starts,
//   with write_process_environment() (nodetopo/probes/environment.hpp); a probe checks it and
//   fails naming the variable when it does not match its root. Where a library has an API for a
//   setting (hwloc's component blacklist), the probe uses the API instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/probes/sys_dir.hpp>
#include <nodetopo/probes/sys_root.hpp>
#include <nodetopo/topology/diagnostics.hpp>
#include <nodetopo/topology/topology.hpp>

namespace spdlog {
class logger;
}

namespace nodetopo::probes {

class DiscoveryCache;
struct SharedReads;  // probes/src/shared_reads.hpp

/// Probes run phase by phase; within a phase in registry order. Later phases may read what
/// earlier ones added (the PCI probe places host bridges under the NUMA nodes of the platform).
enum class ProbePhase : int {
  kPlatform = 0,  ///< machine, packages, NUMA nodes, distances
  kBus = 1,       ///< PCI hierarchy
  kDevices = 2,   ///< OS devices hanging off PCI functions: NICs, RDMA, accelerators
  kLinks = 3,     ///< fabrics between devices: NVLink, xGMI
};

/// Settings that change what probes may do.
struct ProbeOptions {
  /// Library to dlopen for NVML. Empty: "libnvidia-ml.so.1", and only on a live root.
  /// A mock library given here is used on any root.
  std::string nvml_library;
  /// Variables the NVML library reads from the environment, which must hold these values when
  /// the probes run (the mock library's NODETOPO_MOCK_NVML_FIXTURE). The NVML probe checks them;
  /// write_process_environment() writes them.
  std::vector<std::pair<std::string, std::string>> library_environment;
  /// When a discovery runs independent probe work on a second thread (run_probes).
  enum class Overlap : std::uint8_t {
    kAuto,    ///< when the root is large enough for the thread to pay (overlap_pays())
    kAlways,  ///< whenever the process may use a second CPU (tests of the overlap itself)
    kNever,   ///< strictly one probe after the other (for measuring what the overlap gains)
  };
  Overlap overlap = Overlap::kAuto;
};

/// What a probe gets to work with. One context per probe run.
class ProbeContext {
 public:
  ProbeContext(const SysRoot& root, const ProbeOptions& options, std::string probe_name,
               DiscoveryCache* cache = nullptr, std::shared_ptr<SharedReads> shared = {});

  [[nodiscard]] const SysRoot& root() const { return root_; }
  [[nodiscard]] const ProbeOptions& options() const { return options_; }
  /// The probe's named logger ("probe.pci", ...), made on first use: most runs log nothing
  /// from most probes, and each logger costs its own copy of the compiled log pattern.
  [[nodiscard]] spdlog::logger& log() const;
  /// What an agent keeps between discoveries of the same host (discovery_cache.hpp); nullptr for
  /// a one-shot discovery. A probe that uses it must produce what it would without it.
  [[nodiscard]] DiscoveryCache* cache() const { return cache_; }
  /// What more than one probe of a discovery needs, read by the first that asks and kept for the
  /// others, so that no file is read twice (the KFD tree: the accelerator probe's GPU identities
  /// and the KFD probe's links). run_probes() gives the contexts of one discovery the same one;
  /// a context made without one gets its own on first use.
  [[nodiscard]] SharedReads& shared_reads();
  /// A context for a helper thread of this probe: the same root, options, log, cache and shared
  /// reads, with warnings of its own, which the helper captures (capture_warnings()) for the
  /// probe to give in order. ProbeContext is not thread-safe; each thread uses its own.
  [[nodiscard]] std::unique_ptr<ProbeContext> sibling();

  /// While held, warnings are recorded but not logged: a prefetch running beside another probe
  /// keeps the log in run order. release_log() logs what was held, in order.
  void hold_log() { hold_ = true; }
  void release_log();

  /// Records a warning (a skipped device, a dropped attribute) and logs it.
  void warn(const Error& error);
  void warn(std::string_view message, std::string_view path = {});

  /// A warning kept aside: as the report records it and as the log words it.
  struct HeldWarning {
    std::string recorded;
    std::string logged;
  };
  /// While `into` is set (nullptr ends it), warnings go there instead of the report and the log:
  /// a prefetch that reads entries before discover() hands them back with replay(), in the
  /// order discover() would have met them.
  void capture_warnings(std::vector<HeldWarning>* into) { capture_ = into; }
  /// Records and logs (or holds) warnings captured earlier, in order. Also how a probe gives
  /// again the warnings of what it takes from a DiscoveryCache instead of reading (its report
  /// must be the same): as warnings() recorded them then, logged in that form too.
  void replay(const std::vector<HeldWarning>& warnings);

  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  const SysRoot& root_;
  const ProbeOptions& options_;
  std::string probe_name_;
  mutable std::shared_ptr<spdlog::logger> logger_;  // log()
  DiscoveryCache* cache_ = nullptr;
  std::shared_ptr<SharedReads> shared_;
  std::vector<std::string> warnings_;
  bool hold_ = false;
  std::vector<std::string> held_;  // full messages not yet logged
  std::vector<HeldWarning>* capture_ = nullptr;

  // Where every warning goes: the capture when set, else the report and the log (or the held
  // lines).
  void keep(HeldWarning warning);
};

/// Lists the directory holding a subsystem's devices (sys/bus/pci/devices, sys/class/net, ...).
/// When it does not exist the facility is absent here, not faulty: ErrorCode::kUnavailable with
/// `absent` as the message. Other errors are returned as they are.
Result<std::vector<std::string>> list_subsystem(const SysRoot& root, std::string_view dir,
                                                std::string_view absent);
/// list_subsystem(), with the directory kept open: its entries carry their types and its links
/// can be read through the descriptor (SysDir::read_link).
Result<SysDir> open_subsystem(const SysRoot& root, std::string_view dir, std::string_view absent);

class Probe {
 public:
  virtual ~Probe() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual ProbePhase phase() const = 0;
  /// Adds what the probe finds. Returns an error only when the whole subsystem is unreadable;
  /// ErrorCode::kUnavailable means the facility is absent here (no NVML, no KFD), not a fault.
  virtual Result<void> discover(ProbeContext& ctx, TopologyBuilder& builder) = 0;

  /// True when prefetch() does work: the part of a discovery that needs no earlier phase.
  [[nodiscard]] virtual bool prefetches() const { return false; }
  /// Reads what does not depend on earlier phases into the probe object (the PCI walk needs
  /// nothing of the platform's). The runner calls it once, before discover() and with the same
  /// context, on a thread of its own while the earlier phases run on the runner's thread: it must
  /// not touch a TopologyBuilder, and reads only through ctx.root() (thread-safe). What fails
  /// is kept for discover() to return. Probe objects are used for one discovery.
  virtual void prefetch(ProbeContext& /*ctx*/) {}
};

}  // namespace nodetopo::probes
