#include <CLI/CLI.hpp>

#include <nodetopo/cli/host_options.hpp>

namespace nodetopo::cli {

void add_host_options(CLI::App& cmd, core::HostSpec& spec) {
  CLI::Option* root =
      cmd.add_option("--root", spec.root,
                     "Host root to read: a directory holding sys/ and proc/ (a capture or a mock "
                     "host). Default: $HOST_ROOT, else /")
          ->type_name("DIR");
  CLI::Option* mock =
      cmd.add_option("--mock", spec.mock,
                     "Read a mock host built from PROFILE (a shipped name such as dgx-h100, a "
                     ".yaml file, optionally with overrides: synthetic:gpus=64); see `topo mock "
                     "list`")
          ->type_name("PROFILE");
  root->excludes(mock);
  mock->excludes(root);
}

}  // namespace nodetopo::cli
