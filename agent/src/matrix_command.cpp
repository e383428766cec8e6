// `topo matrix`: the accelerator/NIC relation matrix, like `nvidia-smi topo -m`.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/commands.hpp>
#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/sinks.hpp>

namespace nodetopo::agent {

namespace {

struct MatrixOptions {
  HostSource source;
  std::string format = "text";
};

int run_matrix(const MatrixOptions& opts) {
  auto discovery = opts.source.discover();
  if (!discovery) {
    std::cerr << "topo matrix: " << discovery.error().describe() << "\n";
    return kExitFailure;
  }
  const exporters::DeviceMatrix matrix = exporters::build_device_matrix(discovery.value().topology);
  const std::string doc =
      opts.format == "json" ? exporters::render_matrix_json(matrix)
                            : exporters::render_matrix_text(matrix);
  if (auto written = exporters::write_stdout(doc); !written) {
    std::cerr << "topo matrix: " << written.error().describe() << "\n";
    return kExitFailure;
  }
  return kExitOk;
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
  cmd->callback([&runner, opts] { runner = [opts] { return run_matrix(*opts); }; });
}

}  // namespace nodetopo::agent
