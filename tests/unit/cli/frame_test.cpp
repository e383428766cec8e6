// The command-line frame (agent/cli/app) over `topo`'s real command table: building only the
// command argv names must print, exit and choose exactly as building every command does, and
// must really leave the other commands unbuilt (the start-up cost of docs/cli.md, "Start-up").
// In process: parse_command_line() never runs a command, so no helper is exec'd.
#include <algorithm>
#include <cstddef>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/cli/app.hpp>
#include <nodetopo/cli/commands.hpp>

namespace nodetopo::cli {
namespace {

// argv as the frame gets it: "topo" then `args`; owns the strings.
class Argv {
 public:
  explicit Argv(const std::vector<std::string>& args) : strings_{"topo"} {
    strings_.insert(strings_.end(), args.begin(), args.end());
    for (std::string& s : strings_)
      pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(strings_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// What one parse printed and decided.
struct Outcome {
  std::string out;
  std::string err;
  int exit_code = -1;
  bool runs = false;
  std::string log_level;
  std::string log_format;
};

// Redirects std::cout and std::cerr (where CLI11 prints help and errors) for its lifetime.
class Captured {
 public:
  Captured() : out_buf_(std::cout.rdbuf(out_.rdbuf())), err_buf_(std::cerr.rdbuf(err_.rdbuf())) {}
  ~Captured() {
    std::cout.rdbuf(out_buf_);
    std::cerr.rdbuf(err_buf_);
  }
  Captured(const Captured&) = delete;
  Captured& operator=(const Captured&) = delete;
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

 private:
  std::ostringstream out_, err_;
  std::streambuf* out_buf_;
  std::streambuf* err_buf_;
};

Outcome parse(const std::vector<std::string>& args, Registration registration) {
  Argv argv(args);
  const auto commands = topo_commands(argv.argv());
  Outcome o;
  CommandLine line;
  {
    Captured captured;
    line = parse_command_line(argv.argc(), argv.argv(), commands, registration);
    o.out = captured.out();
    o.err = captured.err();
  }
  o.exit_code = line.exit_code;
  o.runs = static_cast<bool>(line.runner);
  o.log_level = line.log_level;
  o.log_format = line.log_format;
  return o;
}

std::string show(const std::vector<std::string>& args) {
  std::string s = "topo";
  for (const std::string& a : args)
    s += " '" + a + "'";
  return s;
}

// CLI11 keeps an option's "Excludes:" and "Needs:" in a std::set<Option*>: listed in address
// order, which in a fresh process is the order the options were made in, but in this test
// process depends on what the heap held before. So the names in those lists are compared
// sorted; the order in `topo`'s own output is checked against the man page (packaging.man) and
// by walking the real binary (docs/cli.md).
std::string sorted_relations(const std::string& text) {
  std::istringstream in(text);
  std::string result;
  for (std::string line; std::getline(in, line);) {
    for (const std::string_view key : {"Excludes: ", "Needs: "}) {
      std::size_t at = line.find(key);
      if (at == std::string::npos) continue;
      at += key.size();
      std::size_t end = at;
      std::vector<std::string> names;
      while (end < line.size() && line[end] == '-') {
        const std::size_t space = std::min(line.find(' ', end), line.size());
        names.push_back(line.substr(end, space - end));
        end = std::min(space + 1, line.size());
      }
      std::sort(names.begin(), names.end());
      std::string joined;
      for (const std::string& n : names)
        joined += n + " ";
      line = line.substr(0, at) + joined + line.substr(end);
    }
    result += line + "\n";
  }
  return result;
}

void expect_same(const std::vector<std::string>& args) {
  const Outcome named = parse(args, Registration::kNamed);
  const Outcome all = parse(args, Registration::kAll);
  EXPECT_EQ(sorted_relations(named.out), sorted_relations(all.out)) << show(args);
  EXPECT_EQ(sorted_relations(named.err), sorted_relations(all.err)) << show(args);
  EXPECT_EQ(named.exit_code, all.exit_code) << show(args);
  EXPECT_EQ(named.runs, all.runs) << show(args);
  EXPECT_EQ(named.log_level, all.log_level) << show(args);
  EXPECT_EQ(named.log_format, all.log_format) << show(args);
}

// The subcommands a help text lists (its "Subcommands:" section), as make-topo-man.sh finds
// them for the man page.
std::vector<std::string> listed_subcommands(const std::string& help) {
  std::vector<std::string> names;
  std::istringstream in(help);
  bool on = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:") {
      on = true;
    } else if (on && line.empty()) {
      on = false;
    } else if (on && line.size() > 2 && line.starts_with("  ") && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  return names;
}

// Every command path, depth first: {}, {dump}, {export}, {export, labels}, ...
void walk(const std::vector<std::string>& path, std::vector<std::vector<std::string>>& paths) {
  paths.push_back(path);
  std::vector<std::string> help_args = path;
  help_args.push_back("--help");
  for (const std::string& sub : listed_subcommands(parse(help_args, Registration::kAll).out)) {
    std::vector<std::string> next = path;
    next.push_back(sub);
    walk(next, paths);
  }
}

TEST(CliFrame, EveryHelpIsTheSameAsWithEveryCommandBuilt) {
  std::vector<std::vector<std::string>> paths;
  walk({}, paths);
  // The walk found the commands and their subcommands (else this test compares nothing).
  ASSERT_GE(paths.size(), 1 + kTopoCommandCount + 2 + 5) << paths.size();
  for (const auto& path : paths) {
    for (const std::vector<std::string>& prefix :
         {std::vector<std::string>{}, {"--log-level", "debug"}, {"--log-format=json"}}) {
      std::vector<std::string> args = prefix;
      args.insert(args.end(), path.begin(), path.end());
      args.push_back("--help");
      expect_same(args);
    }
    if (!path.empty()) {
      std::vector<std::string> args{"--help"};
      args.insert(args.end(), path.begin(), path.end());
      expect_same(args);  // CLI11 prints the help of the last command named
    }
  }
}

TEST(CliFrame, EveryUsageErrorIsTheSameAsWithEveryCommandBuilt) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"help"},
      {"bogus"},
      {"dum"},
      {"--bogus"},
      {"--bogus", "dump"},
      {"-x", "dump"},
      {"--", "dump"},
      {"--log-level"},
      {"--log-level", "dump"},
      {"--log-level", "--help"},
      {"--log-level", "loud", "dump"},
      {"--log-level=loud", "dump"},
      {"--log-format", "xml", "dump"},
      {"--log-format="},
      {"dump", "matrix"},
      {"dump", "--bogus"},
      {"dump", "--format"},
      {"dump", "--format", "xml"},
      {"dump", "--root", ""},
      {"dump", "--root", "a", "--mock", "b"},
      {"matrix", "--format", "dot"},
      {"export"},
      {"export", "bogus"},
      {"export", "labels", "--bogus"},
      {"mock"},
      {"mock", "build"},
      {"mock", "build", "only-one"},
      {"mock", "dump"},
      {"fit"},
      {"fit", "--max-age", "3"},
      {"dump", "--log-level", "debug"},
  };
  for (const auto& args : cases)
    expect_same(args);
}

TEST(CliFrame, VersionAndChoicesAreTheSameAsWithEveryCommandBuilt) {
  const std::vector<std::vector<std::string>> cases = {
      {"--version"},
      {"--version", "dump"},
      {"dump", "--version"},
      {"--log-level", "debug", "--version"},
      {"dump", "--format", "json", "--root", "/nonexistent"},
      {"--log-level=debug", "--log-format", "json", "matrix", "--root", "/nonexistent"},
      {"export", "labels", "--mock", "dgx-h100"},
      {"mock", "list"},
      {"fit", "claim.yaml"},
      {"agent", "--help"},
      {"capture", "--whatever", "x"},
      {"--log-level", "info", "kubelet-plugin"},
      {"cleanup", "--help"},
  };
  for (const auto& args : cases)
    expect_same(args);
}

// topo's table with every registrar counting its calls.
class Counted {
 public:
  explicit Counted(char** argv) : real_(topo_commands(argv)) {
    for (std::size_t i = 0; i < real_.size(); ++i) {
      const Command& c = real_[i];
      counted_[i] = {c.name, c.description,
                     [this, c](CLI::App& cmd, CommandRunner& runner) {
                       ++built[std::string(c.name)];
                       c.add(cmd, runner);
                     },
                     c.plain};
    }
  }
  std::span<const Command> commands() const { return counted_; }
  std::map<std::string, int> built;

 private:
  std::array<Command, kTopoCommandCount> real_;
  std::array<Command, kTopoCommandCount> counted_;
};

std::map<std::string, int> built_by(const std::vector<std::string>& args) {
  Argv argv(args);
  Counted table(argv.argv());
  Captured captured;
  (void)parse_command_line(argv.argc(), argv.argv(), table.commands());
  return table.built;
}

TEST(CliFrame, OnlyTheNamedCommandIsBuilt) {
  using Built = std::map<std::string, int>;
  EXPECT_EQ(built_by({"dump", "--format", "json", "--root", "/nonexistent"}), (Built{{"dump", 1}}));
  EXPECT_EQ(built_by({"--log-level", "debug", "--log-format=json", "export", "labels"}),
            (Built{{"export", 1}}));
  EXPECT_EQ(built_by({"--help", "mock", "build"}), (Built{{"mock", 1}}));
  EXPECT_EQ(built_by({"agent", "--help"}), (Built{{"agent", 1}}));
  // Nothing named: the top level's help, version and errors need no command's options.
  EXPECT_EQ(built_by({"--version"}), Built{});
  EXPECT_EQ(built_by({"--help"}), Built{});
  EXPECT_EQ(built_by({}), Built{});
  EXPECT_EQ(built_by({"--log-level", "dump"}), Built{});  // "dump" is the level here
}

TEST(CliFrame, AnUnknownWordBuildsEveryCommand) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bogus", "dump"}, {"--bogus", "dump"}, {"--", "dump"}}) {
    const auto built = built_by(args);
    EXPECT_EQ(built.size(), kTopoCommandCount) << show(args);
    for (const auto& [name, times] : built)
      EXPECT_EQ(times, 1) << name << " in " << show(args);
  }
}

// What run_cli() returned and printed, and which commands it built.
struct CliRun {
  int rc = -1;
  std::string out;
  std::string err;
  std::map<std::string, int> built;
};

CliRun run_counted(const std::vector<std::string>& args) {
  Argv argv(args);
  Counted table(argv.argv());
  CliRun run;
  {
    Captured captured;
    run.rc = run_cli(argv.argc(), argv.argv(), table.commands());
    run.out = captured.out();
    run.err = captured.err();
  }
  run.built = table.built;
  return run;
}

// run_cli() itself takes the lazy path: `topo --version` builds no command at all.
TEST(CliFrame, RunCliBuildsNoCommandForVersion) {
  const CliRun run = run_counted({"--version"});
  EXPECT_EQ(run.rc, kExitOk);
  EXPECT_EQ(run.out, version_line() + "\n");
  EXPECT_TRUE(run.built.empty());
}

// The plain reading (read_plain_line()) over lines of every global option form, command word
// and a few of dump's: whatever line it reads, CLI11 runs a command from too, with the same
// global options and nothing printed. Which command, and with what, is dump_line_test.cpp's:
// dump is the only command with a plain reader.
TEST(CliFrame, APlainLineIsOneCli11RunsWithTheSameGlobalOptions) {
  const std::vector<std::vector<std::string>> globals = {
      {},
      {"--log-level", "debug"},
      {"--log-level=off"},
      {"--log-format", "json"},
      {"--log-format=json", "--log-level", "info"},
      {"--log-level", "loud"},
      {"--log-level="},
      {"--log-level"},
      {"--log-level", "dump"},
      {"--log-level", "debug", "--log-level", "info"},
      {"--log-format", "--help"},
      {"--version"},
      {"-h"},
      {"--"},
  };
  const std::vector<std::string> words = {"dump", "Dump", "matrix", "mock", "agent", "bogus"};
  const std::vector<std::vector<std::string>> tails = {
      {},
      {"--format", "json", "--root", "/nonexistent"},
      {"--mock=dgx-h100", "-o", "out.txt"},
      {"--bogus"},
      {"--help"},
      {"--version"},
      {"--log-level", "debug"},
      {"list"},
  };
  std::size_t read_plainly = 0;
  for (const auto& global : globals) {
    for (const std::string& word : words) {
      for (const auto& tail : tails) {
        std::vector<std::string> args = global;
        args.push_back(word);
        args.insert(args.end(), tail.begin(), tail.end());
        Argv argv(args);
        const auto commands = topo_commands(argv.argv());
        const std::optional<CommandLine> plain =
            read_plain_line(argv.argc(), argv.argv(), commands);
        if (!plain) continue;
        ++read_plainly;
        EXPECT_EQ(word, "dump") << show(args);
        EXPECT_TRUE(static_cast<bool>(plain->runner)) << show(args);
        const Outcome cli11 = parse(args, Registration::kAll);
        EXPECT_TRUE(cli11.runs) << show(args);
        EXPECT_EQ(cli11.exit_code, kExitOk) << show(args);
        EXPECT_EQ(cli11.out, "") << show(args);
        EXPECT_EQ(cli11.err, "") << show(args);
        EXPECT_EQ(plain->log_level, cli11.log_level) << show(args);
        EXPECT_EQ(plain->log_format, cli11.log_format) << show(args);
      }
    }
  }
  // {}, two levels and two formats, with three of dump's tails each.
  EXPECT_EQ(read_plainly, 5u * 3u);
}

// run_cli() reads a plain dump line without building any command, and leaves any other to
// CLI11, which builds dump alone.
TEST(CliFrame, RunCliBuildsNoCommandForAPlainDump) {
  const CliRun plain =
      run_counted({"--log-level", "off", "dump", "--format", "json", "--root", "/nonexistent"});
  EXPECT_EQ(plain.rc, kExitFailure);  // it ran: the root does not exist
  EXPECT_TRUE(plain.built.empty());

  const CliRun cli11 = run_counted({"dump", "--from-agent", "--root", "/nonexistent"});
  EXPECT_EQ(cli11.rc, kExitUsage);
  EXPECT_NE(cli11.err.find("--root excludes --from-agent"), std::string::npos) << cli11.err;
  EXPECT_EQ(cli11.built, (std::map<std::string, int>{{"dump", 1}}));
}

TEST(CliFrame, ChooseCommandReadsTheGlobalOptionsAsCli11Does) {
  const auto commands = topo_commands(nullptr);
  const auto choose = [&commands](const std::vector<std::string>& args) {
    Argv argv(args);
    return choose_command(argv.argc(), argv.argv(), commands);
  };
  const auto index_of = [&commands](std::string_view name) {
    for (std::size_t i = 0; i < commands.size(); ++i)
      if (commands[i].name == name) return i;
    return CommandChoice::kNone;
  };
  EXPECT_EQ(choose({"--log-level", "off", "--log-format", "json", "fit"}).index, index_of("fit"));
  EXPECT_EQ(choose({"--log-level=off", "-h", "--version", "--help", "agent"}).index,
            index_of("agent"));
  EXPECT_EQ(choose({"--log-format", "--help", "matrix"}).index, index_of("matrix"));
  const CommandChoice none = choose({"--log-level", "debug"});
  EXPECT_EQ(none.index, CommandChoice::kNone);
  EXPECT_FALSE(none.all);
  EXPECT_TRUE(choose({"--log-levels=x", "dump"}).all);
  EXPECT_TRUE(choose({"Dump"}).all);
}

}  // namespace
}  // namespace nodetopo::cli
