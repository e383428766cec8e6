// `topo matrix`: the accelerator/NIC relation matrix, like `nvidia-smi topo -m`.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/command_output.hpp>
#include <nodetopo/cli/commands.hpp>
#include <nodetopo/cli/from_agent.hpp>
#include <nodetopo/cli/host_options.hpp>
#include <nodetopo/core/render.hpp>
#include <nodetopo/daemon/agent_client.hpp>

namespace nodetopo::cli {

namespace {

struct MatrixOptions {
  core::HostSource source;
  FromAgent from_agent;
  std::string format = "text";
  std::string output;
};

int run_matrix(MatrixOptions& opts) {
  if (opts.from_agent.enabled) {
    auto doc = daemon::fetch_agent_document(opts.from_agent.bus, "matrix", opts.format);
    if (!doc) return fail("matrix", doc.error().describe());
    return emit("matrix", opts.output, doc.value());
  }
  auto host = opts.source.open();
  if (!host) return fail("matrix", host.error().describe());
  // Still the only thread: the one place the environment is written (probes/probe.hpp).
  core::write_process_environment(*host);
  auto snapshot = core::take_snapshot(*host, {.node_name = {}, .with_digest = false});
  if (!snapshot) return fail("matrix", snapshot.error().describe());
  auto doc = core::render(*snapshot, core::DocumentKind::kMatrix, opts.format);
  if (!doc) return fail("matrix", doc.error().describe());
  const int rc = emit("matrix", opts.output, *doc);
  // Printed, as dump does, but not a success.
  if (const std::string why = snapshot->discovery.degraded(); rc == kExitOk && !why.empty()) {
    return fail("matrix", "degraded result: " + why);
  }
  return rc;
}

}  // namespace

void register_matrix_command(CLI::App& cmd, CommandRunner& runner) {
  auto opts = std::make_shared<MatrixOptions>();
  add_host_options(cmd, opts->source.spec());
  cmd.add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd.add_option("--output,-o", opts->output,
                 "Write to FILE (atomically: temporary file + rename) instead of stdout")
      ->type_name("FILE");
  opts->from_agent.add_options(cmd);
  cmd.callback([&runner, opts] { runner = [opts] { return run_matrix(*opts); }; });
}

}  // namespace nodetopo::cli
