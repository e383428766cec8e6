// `topo matrix`: the accelerator/NIC relation matrix, like `nvidia-smi topo -m`.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/command_output.hpp>
#include <nodetopo/agent/commands.hpp>
#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/exporters/matrix.hpp>

namespace nodetopo::agent {

namespace {

struct MatrixOptions {
  HostSource source;
  std::string format = "text";
  std::string output;
};

int run_matrix(const MatrixOptions& opts) {
  auto discovery = opts.source.discover();
  if (!discovery) return fail("matrix", discovery.error().describe());
  const exporters::DeviceMatrix matrix = exporters::build_device_matrix(discovery.value().topology);
  const std::string doc = opts.format == "json" ? exporters::render_matrix_json(matrix)
                                                : exporters::render_matrix_text(matrix);
  const int rc = emit("matrix", opts.output, doc);
  if (const std::string why = discovery->degraded(); rc == kExitOk && !why.empty()) {
    return fail("matrix", "degraded result: " + why);
  }
  return rc;
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
  cmd->callback([&runner, opts] { runner = [opts] { return run_matrix(*opts); }; });
}

}  // namespace nodetopo::agent
