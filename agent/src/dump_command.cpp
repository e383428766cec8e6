// `topo dump`: one-shot discovery printed as a tree (like lstopo) or as the JSON model.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/agent/command_output.hpp>
#include <nodetopo/agent/commands.hpp>
#include <nodetopo/agent/from_agent.hpp>
#include <nodetopo/agent/host_source.hpp>
#include <nodetopo/daemon/agent_client.hpp>
#include <nodetopo/exporters/dot.hpp>
#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/text_tree.hpp>

namespace nodetopo::agent {

namespace {

struct DumpOptions {
  HostSource source;
  FromAgent from_agent;
  std::string format = "text";
  std::string output;
};

int run_dump(const DumpOptions& opts) {
  if (opts.from_agent.enabled) {
    auto doc = daemon::fetch_agent_document(opts.from_agent.bus, "dump", opts.format);
    if (!doc) return fail("dump", doc.error().describe());
    return emit("dump", opts.output, doc.value());
  }
  auto discovery = opts.source.discover();
  if (!discovery) return fail("dump", discovery.error().describe());
  const auto& d = discovery.value();
  std::string doc;
  if (opts.format == "json") {
    doc = exporters::render_json_model(d.topology, d.reports);
  } else if (opts.format == "dot") {
    doc = exporters::render_dot(d.topology);
  } else {
    doc = exporters::render_text_tree(d.topology, d.reports);
  }
  return emit("dump", opts.output, doc);
}

}  // namespace

void register_dump_command(CLI::App& app, CommandRunner& runner) {
  auto opts = std::make_shared<DumpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "dump",
      "Discover the host once and print its topology: tree (text), model (json) or picture (dot)");
  opts->source.add_options(*cmd);
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "dot"}))
      ->capture_default_str();
  cmd->add_option("--output,-o", opts->output,
                  "Write to FILE (atomically: temporary file + rename) instead of stdout")
      ->type_name("FILE");
  opts->from_agent.add_options(*cmd);
  cmd->callback([&runner, opts] { runner = [opts] { return run_dump(*opts); }; });
}

}  // namespace nodetopo::agent
