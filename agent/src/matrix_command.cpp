// `topo matrix`: the accelerator/NIC relation matrix, like `nvidia-smi topo -m`.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/command_output.hpp>
#include <nodetopo/agent/commands.hpp>
#include <nodetopo/agent/from_agent.hpp>
#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/daemon/agent_client.hpp>
#include <nodetopo/exporters/matrix.hpp>

namespace nodetopo::agent {

namespace {

struct MatrixOptions {
  HostSource source;
  FromAgent from_agent;
  std::string format = "text";
  std::string output;
};

int run_matrix(const MatrixOptions& opts) {
  if (opts.from_agent.enabled) {
    auto doc = daemon::fetch_agent_document(opts.from_agent.bus, "matrix", opts.format);
    if (!doc) return fail("matrix", doc.error().describe());
    return emit("matrix", opts.output, doc.value());
  }
  auto discovery = opts.source.discover();
  if (!discovery) return fail("matrix", discovery.error().describe());
  const exporters::DeviceMatrix matrix = exporters::build_device_matrix(discovery.value().topology);
  const std::string doc = opts.format == "json" ? exporters::render_matrix_json(matrix)
                                                : exporters::render_matrix_text(matrix);
  return emit("matrix", opts.output, doc);
}

}  // namespace

void register_matrix_command(CLI::App& app, CommandRunner& runner) {
  auto opts = std::make_shared<MatrixOptions>();
  CLI::App* cmd = app.add_subcommand(
      "matrix", "Print the accelerator/NIC connection matrix (like nvidia-smi topo -m)");
  opts->source.add_options(*cmd);
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--output,-o", opts->output,
                  "Write to FILE (atomically: temporary file + rename) instead of stdout")
      ->type_name("FILE");
  opts->from_agent.add_options(*cmd);
  cmd->callback([&runner, opts] { runner = [opts] { return run_matrix(*opts); }; });
}

}  // namespace nodetopo::agent
