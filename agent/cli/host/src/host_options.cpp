#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/host_options.hpp>

namespace nodetopo::cli {

namespace {

constexpr std::string_view kRoot = "--root";
constexpr std::string_view kMock = "--mock";

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
      cmd.add_option(std::string(kRoot), spec.root,
                     "Host root to read: a directory holding sys/ and proc/ (a capture or a mock "
                     "host). Default: $HOST_ROOT, else /")
          ->type_name("DIR")
          ->check(
              non_empty(std::string(kRoot), "an empty path would silently mean the live machine"));
  CLI::Option* mock =
      cmd.add_option(std::string(kMock), spec.mock,
                     "Read a mock host built from PROFILE (a shipped name such as dgx-h100, a "
                     ".yaml file, optionally with overrides: synthetic:gpus=64); see `topo mock "
                     "list`")
          ->type_name("PROFILE")
          ->check(non_empty(std::string(kMock), "give a shipped profile name or a .yaml file"));
  root->excludes(mock);
  mock->excludes(root);
}

std::array<PlainOption, 2> plain_host_options(core::HostSpec& spec) {
  // Values CLI11's check refuses (empty ones) are never read plainly (read_plain_options()).
  return {PlainOption{kRoot, {}, &spec.root}, PlainOption{kMock, {}, &spec.mock}};
}

bool plain_host_choice(const core::HostSpec& spec) {
  return spec.root.empty() || spec.mock.empty();
}

}  // namespace nodetopo::cli
