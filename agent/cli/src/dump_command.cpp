// `topo dump`: one-shot discovery printed as a tree (like lstopo) or as the JSON model.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/daemon/agent_client.hpp>

#include "from_agent.hpp"

namespace nodetopo::cli {

namespace {

struct DumpOptions {
  core::HostSource source;
  FromAgent from_agent;
  std::string format = "text";
  std::string output;
};

int run_dump(DumpOptions& opts) {
  if (opts.from_agent.enabled) {
    auto doc = daemon::fetch_agent_document(opts.from_agent.bus, "dump", opts.format);
    if (!doc) return fail("dump", doc.error().describe());
    return emit("dump", opts.output, doc.value());
  }
  auto host = opts.source.open();
  if (!host) return fail("dump", host.error().describe());
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  auto snapshot = core::take_snapshot(*host, {.node_name = {}, .with_digest = false});
  if (!snapshot) return fail("dump", snapshot.error().describe());
  auto doc = core::render(*snapshot, core::DocumentKind::kDump, opts.format);
  if (!doc) return fail("dump", doc.error().describe());
  const int rc = emit("dump", opts.output, *doc);
  // Printed, since a partial tree helps to see what is wrong, but not a success.
  if (const std::string why = snapshot->discovery.degraded(); rc == kExitOk && !why.empty()) {
    return fail("dump", "degraded result: " + why);
  }
  return rc;
}

}  // namespace

void register_dump_command(CLI::App& cmd, CommandRunner& runner) {
  auto opts = std::make_shared<DumpOptions>();
  add_host_options(cmd, opts->source.spec());
  cmd.add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  cmd.add_option("--output,-o", opts->output,
                 "Write to FILE (atomically: temporary file + rename) instead of stdout")
      ->type_name("FILE");
  opts->from_agent.add_options(cmd);
  cmd.callback([&runner, opts] { runner = [opts] { return run_dump(*opts); }; });
}

}  // namespace nodetopo::cli
