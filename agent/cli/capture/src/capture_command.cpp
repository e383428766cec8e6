// `topo capture [--root DIR | --mock PROFILE] --output FILE.tar.gz`: the host's files that one
// discovery read, packed so that a user can send their machine in one file and it becomes a test
// case (hwloc's hwloc-gather-topology is the model). docs/cli.md, "topo capture".
#include <iostream>
#include <memory>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <nodetopo/base/atomic_file.hpp>
#include <nodetopo/cli/capture_command.hpp>
#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/helper_commands.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>

#include "capture_archive.hpp"

namespace nodetopo::cli {

namespace {

struct CaptureOptions {
  core::HostSource source;
  std::string output;
};

// What hwloc's Linux backend reads through HWLOC_FSROOT. Those reads bypass SysRoot (hwloc opens
// the files itself), so they cannot be recorded: they are listed here, after hwloc's own
// topology-linux.c and hwloc-gather-topology, as trees copied whole (links stored, not followed)
// or as single files. A kernel that adds a file hwloc starts to read needs a line here; the
// capture tests, which replay mock and real hosts, notice when one is missing.
struct HwlocPath {
  std::string_view path;
  int depth;  // 0: the path alone
};
constexpr HwlocPath kHwlocPaths[] = {
    {"sys/devices/system/cpu", 6},   // online, possible, cpuN/{topology,cache,cpufreq,node*}
    {"sys/devices/system/node", 4},  // nodeN/{cpumap,meminfo,distance,hugepages}
    {"sys/bus/cpu/devices", 1},      // older kernels
    {"sys/bus/node/devices", 1},
    {"sys/class/dmi/id", 1},  // machine vendor, product, BIOS
    {"sys/kernel/mm/hugepages", 2},
    {"sys/fs/cgroup", 1},            // cgroup v2: the root group's cpuset files
    {"sys/fs/cgroup/cpuset", 3},     // cgroup v1: the cpuset hierarchy proc/self/cgroup names
    {"dev/cpuset", 1},               // cgroup v1 cpuset mounts of old captures
    {"proc/driver/nvidia/gpus", 2},  // <bdf>/numa_status: GPU memory as NUMA nodes (POWER9)
    {"proc/cpuinfo", 0},
    {"proc/meminfo", 0},
    {"proc/mounts", 0},
    {"proc/stat", 0},
    {"proc/version", 0},
    {"proc/cmdline", 0},
    {"proc/hwloc-nofile-info", 0},  // uname facts in hwloc's own captures (a capture of one)
    {"proc/self/cpuset", 0},
    {"proc/self/cgroup", 0},
};

// The capture's top folder: the output's name without .tar.gz (hwloc's captures unpack the same
// way, into one folder named after the machine).
std::string top_folder(const std::string& output) {
  std::string name = std::filesystem::path(output).filename().string();
  for (const std::string_view suffix : {".tar.gz", ".tgz"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      name.resize(name.size() - suffix.size());
      break;
    }
  }
  return name.empty() ? std::string("capture") : name;
}

int run_capture(CaptureOptions& opts) {
  auto host = opts.source.open();
  if (!host) return fail("capture", host.error().describe());
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  host->root().record_reads();
  auto snapshot = core::take_snapshot(*host, {.node_name = {}, .with_digest = false});
  if (!snapshot) return fail("capture", snapshot.error().describe());
  auto dump = core::render(*snapshot, core::DocumentKind::kDump, "json");
  if (!dump) return fail("capture", dump.error().describe());

  CaptureTree tree(host->root().path(), host->root().is_live());
  const probes::SysRoot::ReadLog log = host->root().read_log();
  for (const std::string& dir : log.listed_dirs)
    tree.add_listing(dir);
  for (const std::string& path : log.paths)
    tree.add_path(path);
  for (const HwlocPath& p : kHwlocPaths)
    tree.add_tree(p.path, p.depth);
  // A mock host's NVML fixture (docs/mock.md): a capture of a mock host replays with it.
  tree.add_tree("nodetopo-mock", 4);
  const std::string meta(kCaptureMetadataDir);
  tree.add_extra(meta + "/version", version_line() + "\n");
  tree.add_extra(meta + "/dump.json", *dump);

  const std::string top = top_folder(opts.output);
  auto data = tree.archive(top);
  if (!data) return fail("capture", data.error().describe());
  if (auto written = write_file_atomic(opts.output, *data); !written) {
    return fail("capture", "cannot write " + opts.output + ": " + written.error().describe());
  }
  std::cerr << "topo capture: " << tree.files() << " files and " << tree.links()
            << " links written to " << opts.output << "; replay: tar xzf " << opts.output
            << " && topo dump --root " << top << "\n";
  return kExitOk;
}

}  // namespace

void register_capture_command(CLI::App& cmd, CommandRunner& runner) {
  auto opts = std::make_shared<CaptureOptions>();
  add_host_options(cmd, opts->source.spec());
  cmd.add_option("--output,-o", opts->output,
                 "The .tar.gz to write (atomically: temporary file + rename); its name without "
                 ".tar.gz is the folder it unpacks to")
      ->type_name("FILE.tar.gz")
      ->required();
  cmd.callback([&runner, opts] { runner = [opts] { return run_capture(*opts); }; });
}

}  // namespace nodetopo::cli
