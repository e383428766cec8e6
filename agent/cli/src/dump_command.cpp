// `topo dump`: one-shot discovery printed as a tree (like lstopo) or as the JSON model.
#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <malloc.h>

#include <nodetopo/base/atomic_file.hpp>
#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/dump_line.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/daemon/agent_client.hpp>
#include <nodetopo/probes/discovery.hpp>

namespace nodetopo::cli {

namespace {

constexpr std::array<std::string_view, 3> kFormats = {"text", "json", "dot"};

// To standard output as it is rendered: the JSON model of a 64-GPU node (2.4 MB) is never held
// whole, a quarter of the peak RSS otherwise (issue 18). A write error is reported once, at the
// end.
int print_dump(const core::NodeSnapshot& snapshot, std::string_view format) {
  Result<void> written;
  auto rendered = core::render_to(snapshot, core::DocumentKind::kDump, format,
                                  [&written](std::string_view piece) {
                                    if (written) written = write_stdout(piece);
                                  });
  if (!rendered) return fail("dump", rendered.error().describe());
  if (!written) return fail("dump", written.error().describe());
  return kExitOk;
}

// --output FILE: the whole document, since the file is replaced atomically.
int write_dump(const core::NodeSnapshot& snapshot, const DumpLine& opts) {
  auto doc = core::render(snapshot, core::DocumentKind::kDump, opts.format);
  if (!doc) return fail("dump", doc.error().describe());
  return emit("dump", opts.output, *doc);
}

int run_dump(const DumpLine& opts) {
  if (opts.from_agent.enabled) {
    auto doc = daemon::fetch_agent_document(opts.from_agent.bus, "dump", opts.format);
    if (!doc) return fail("dump", doc.error().describe());
    return emit("dump", opts.output, doc.value());
  }
  auto host = core::HostSource(opts.host).open();
  if (!host) return fail("dump", host.error().describe());
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  // One malloc arena per thread the discovery runs at once (hwloc's thread, the prefetch thread
  // beside it, and the reader pools of both), no more: with one arena for all (round 5, for peak
  // RSS) the readers slept on its lock while hwloc allocated — 6-12 % of the wall time of the
  // dump of a partitioned MI300X's KFD tree. Each further arena costs 0.1-0.3 MiB of peak RSS
  // (docs/performance.md, round 14). Set before any thread exists.
  mallopt(M_ARENA_MAX, static_cast<int>(probes::discovery_thread_limit()));
  auto snapshot = core::take_snapshot(*host, {.node_name = {}, .with_digest = false});
  if (!snapshot) return fail("dump", snapshot.error().describe());
  const int rc =
      opts.output.empty() ? print_dump(*snapshot, opts.format) : write_dump(*snapshot, opts);
  // Printed, since a partial tree helps to see what is wrong, but not a success.
  if (const std::string why = snapshot->discovery.degraded(); rc == kExitOk && !why.empty()) {
    return fail("dump", "degraded result: " + why);
  }
  return rc;
}

}  // namespace

void add_dump_options(CLI::App& cmd, DumpLine& line) {
  add_host_options(cmd, line.host);
  cmd.add_option("--format", line.format, "Output format")
      ->check(CLI::IsMember(std::vector<std::string>(kFormats.begin(), kFormats.end())))
      ->capture_default_str();
  cmd.add_option("--output,-o", line.output,
                 "Write to FILE (atomically: temporary file + rename) instead of stdout")
      ->type_name("FILE");
  line.from_agent.add_options(cmd);
}

std::optional<DumpLine> read_plain_dump_line(std::span<const char* const> words) {
  DumpLine line;
  const auto host = plain_host_options(line.host);
  const std::array<PlainOption, 4> options = {
      host[0],
      host[1],
      PlainOption{"--format", {}, &line.format, kFormats},
      PlainOption{"--output", "-o", &line.output},
  };
  // dump takes no positional word: one left over is CLI11's error.
  if (read_plain_options(words, options) != words.size()) return std::nullopt;
  if (!plain_host_choice(line.host)) return std::nullopt;
  return line;
}

bool read_plain_dump(std::span<const char* const> words, CommandRunner& runner) {
  std::optional<DumpLine> parsed = read_plain_dump_line(words);
  if (!parsed) return false;
  runner = [line = std::move(*parsed)] { return run_dump(line); };
  return true;
}

void register_dump_command(CLI::App& cmd, CommandRunner& runner) {
  auto line = std::make_shared<DumpLine>();
  add_dump_options(cmd, *line);
  cmd.callback([&runner, line] { runner = [line] { return run_dump(*line); }; });
}

}  // namespace nodetopo::cli
