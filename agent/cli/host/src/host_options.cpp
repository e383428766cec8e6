#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/host_options.hpp>

namespace nodetopo::cli {

namespace {

// Refuses an empty value: `--root ""` must not fall back to $HOST_ROOT or "/" unnoticed.
CLI::Validator non_empty(const std::string& option, const std::string& why) {
  return CLI::Validator(
      [option, why](std::string& value) {
        return value.empty() ? option + " is empty: " + why : std::string();
      },
      "", "non-empty");
}

}  // namespace

void add_host_options(CLI::App& cmd, core::HostSpec& spec) {
  CLI::Option* root =
      cmd.add_option("--root", spec.root,
                     "Host root to read: a directory holding sys/ and proc/ (a capture or a mock "
                     "host). Default: $HOST_ROOT, else /")
          ->type_name("DIR")
          ->check(non_empty("--root", "an empty path would silently mean the live machine"));
  CLI::Option* mock =
      cmd.add_option("--mock", spec.mock,
                     "Read a mock host built from PROFILE (a shipped name such as dgx-h100, a "
                     ".yaml file, optionally with overrides: synthetic:gpus=64); see `topo mock "
                     "list`")
          ->type_name("PROFILE")
          ->check(non_empty("--mock", "give a shipped profile name or a .yaml file"));
  root->excludes(mock);
  mock->excludes(root);
}

}  // namespace nodetopo::cli
