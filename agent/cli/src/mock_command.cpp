// `topo mock list` and `topo mock build PROFILE|FILE DIR`: the mock hosts of docs/mock.md.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include <nodetopo/cli/commands.hpp>
#include <nodetopo/mock/builder.hpp>
#include <nodetopo/mock/profiles.hpp>

namespace nodetopo::cli {

namespace {

struct BuildArgs {
  std::string profile;
  std::string dir;
  bool force = false;
};

int run_list() {
  auto profiles = mock::list_profiles();
  if (!profiles) {
    std::cerr << "topo mock list: " << profiles.error().describe() << "\n";
    return kExitFailure;
  }
  std::size_t width = 0;
  for (const auto& p : *profiles)
    width = std::max(width, p.name.size());
  for (const auto& p : *profiles) {
    std::cout << p.name << std::string(width - p.name.size() + 2, ' ') << p.description << "\n";
  }
  return kExitOk;
}

int run_build(const BuildArgs& args) {
  auto profile = mock::load_profile(args.profile);
  if (!profile) {
    std::cerr << "topo mock build: " << profile.error().describe() << "\n";
    return kExitFailure;
  }
  mock::BuildOptions options;
  options.replace_existing = args.force;
  auto built = mock::build_host(*profile, args.dir, options);
  if (!built) {
    std::cerr << "topo mock build: " << built.error().describe() << "\n";
    return kExitFailure;
  }
  std::cout << "built " << profile->name << " into " << args.dir << ": " << built->pci_functions
            << " PCI functions, " << built->gpus << " GPUs, " << built->nics << " NICs";
  if (built->nvml_fixture) std::cout << "; NVML fixture " << mock::kNvmlFixtureFile;
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

void register_mock_command(CLI::App& cmd, CommandRunner& runner) {
  cmd.require_subcommand(1);

  CLI::App* list = cmd.add_subcommand("list", "List the shipped profiles with a description");
  list->callback([&runner] { runner = [] { return run_list(); }; });

  auto args = std::make_shared<BuildArgs>();
  CLI::App* build = cmd.add_subcommand(
      "build", "Build a mock host root (sys/, proc/, nodetopo-mock/) from a profile into DIR");
  build
      ->add_option("profile", args->profile,
                   "A shipped profile name, a .yaml file, optionally with synthetic overrides "
                   "(synthetic:gpus=64,nics=64)")
      ->required()
      ->type_name("PROFILE|FILE");
  build->add_option("dir", args->dir, "Directory to build into (created; must be empty)")
      ->required()
      ->type_name("DIR");
  build->add_flag("--force", args->force, "Replace a mock host built in DIR before");
  build->callback([&runner, args] { runner = [args] { return run_build(*args); }; });
}

}  // namespace nodetopo::cli
