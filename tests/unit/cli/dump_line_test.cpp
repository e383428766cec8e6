// `topo dump`'s two readers of its words (nodetopo/cli/dump_line.hpp): wherever the plain reading
// reads a line, CLI11 must read the same DumpLine from it; a line CLI11 refuses, or stops at for
// help, the plain reading must leave to CLI11. Compared over every line of up to three words
// drawn from a pool of the forms that matter (options, joined and separate values, bad values,
// flags, "--", repeats) and over longer lines drawn at random from the same pool.
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <nodetopo/cli/dump_line.hpp>

namespace nodetopo::cli {
namespace {

using Words = std::vector<std::string>;

std::string show_dump(const Words& words) {
  std::string s = "topo dump";
  for (const std::string& w : words)
    s += " '" + w + "'";
  return s;
}

std::string describe(const DumpLine& line) {
  return "root=" + line.host.root + " mock=" + line.host.mock + " format=" + line.format +
         " output=" + line.output + " from_agent=" + (line.from_agent.enabled ? "1" : "0") +
         " bus=" + line.from_agent.bus;
}

std::vector<const char*> pointers_of(const Words& words) {
  std::vector<const char*> p;
  for (const std::string& w : words)
    p.push_back(w.c_str());
  return p;
}

// CLI11's reading, as `topo` builds dump under its top level; nullopt: an error or help.
std::optional<DumpLine> cli11_reading(const Words& words) {
  CLI::App app{"topo", "topo"};
  app.require_subcommand(1);
  DumpLine line;
  add_dump_options(*app.add_subcommand("dump", "dump"), line);
  Words args = {"topo", "dump"};
  args.insert(args.end(), words.begin(), words.end());
  const std::vector<const char*> argv = pointers_of(args);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {  // CallForHelp and CallForVersion too
    return std::nullopt;
  }
  return line;
}

std::optional<DumpLine> plain_reading(const Words& words) {
  const std::vector<const char*> argv = pointers_of(words);
  return read_plain_dump_line(argv);
}

const Words kPool = {
    "--root",
    "/srv/cap",
    "--root=/srv/cap",
    "--root=",
    "--mock",
    "dgx-h100",
    "--mock=syn:a=1",
    "--format",
    "json",
    "dot",
    "xml",
    "--format=text",
    "-o",
    "--output",
    "out.json",
    "--output=o",
    "-oout",
    "-o=out",
    "--from-agent",
    "--bus",
    "session",
    "--",
    "-",
    "",
    "--ROOT",
    "dump",
    "--help",
    "--root=-x",
};

// Compares both readings of `words`; counts the lines the plain reading read.
void compare(const Words& words, std::size_t& read_plainly) {
  const std::optional<DumpLine> plain = plain_reading(words);
  if (!plain) return;
  ++read_plainly;
  const std::optional<DumpLine> cli11 = cli11_reading(words);
  ASSERT_TRUE(cli11.has_value()) << show_dump(words) << ": read plainly, refused by CLI11";
  EXPECT_EQ(describe(*plain), describe(*cli11)) << show_dump(words);
  EXPECT_TRUE(*plain == *cli11) << show_dump(words);
}

TEST(DumpLine, EveryShortLineIsReadPlainlyAsCli11ReadsIt) {
  std::size_t read_plainly = 0;
  std::size_t lines = 0;
  std::vector<Words> lines_of_length = {Words{}};
  for (std::size_t length = 0; length <= 3; ++length) {
    std::vector<Words> longer;
    for (const Words& words : lines_of_length) {
      ++lines;
      compare(words, read_plainly);
      if (length == 3) continue;
      for (const std::string& next : kPool) {
        longer.push_back(words);
        longer.back().push_back(next);
      }
    }
    lines_of_length = std::move(longer);
  }
  // The lines of the common forms (`--root DIR`, `--format=json -o FILE`, ...) were compared;
  // else this test compares nothing.
  EXPECT_GE(read_plainly, 150u) << "of " << lines;
}

// Longer lines are drawn as options with their values, so that many are read plainly; a few
// units are bad on purpose.
const std::vector<Words> kUnits = {
    {"--root", "/srv/cap"},
    {"--root=/r"},
    {"--mock", "dgx-h100"},
    {"--mock=mi300x"},
    {"--format", "json"},
    {"--format=dot"},
    {"--format", "text"},
    {"-o", "out.json"},
    {"--output", "o.txt"},
    {"--output=o.dot"},
    {"--from-agent"},
    {"--bus", "session"},
    {"--format", "xml"},
    {"--root", ""},
    {"--"},
    {"extra"},
};

TEST(DumpLine, LongerRandomLinesAreReadPlainlyAsCli11ReadsThem) {
  std::mt19937 random(18);  // fixed: the same lines every run
  std::uniform_int_distribution<std::size_t> pick(0, kUnits.size() - 1);
  std::uniform_int_distribution<std::size_t> units(2, 5);
  std::size_t read_plainly = 0;
  for (int i = 0; i < 3000; ++i) {
    Words words;
    for (std::size_t n = units(random); n > 0; --n) {
      const Words& unit = kUnits[pick(random)];
      words.insert(words.end(), unit.begin(), unit.end());
    }
    compare(words, read_plainly);
  }
  EXPECT_GE(read_plainly, 100u);
}

TEST(DumpLine, TheCommonLinesAreReadPlainly) {
  DumpLine json_of_capture;
  json_of_capture.format = "json";
  json_of_capture.host.root = "/srv/cap";
  EXPECT_EQ(plain_reading({"--format", "json", "--root", "/srv/cap"}), json_of_capture);
  EXPECT_EQ(plain_reading({"--root=/srv/cap", "--format=json"}), json_of_capture);

  DumpLine mock_to_file;
  mock_to_file.host.mock = "synthetic:gpus=64";
  mock_to_file.output = "/tmp/dump.txt";
  EXPECT_EQ(plain_reading({"--mock", "synthetic:gpus=64", "-o", "/tmp/dump.txt"}), mock_to_file);
  EXPECT_EQ(plain_reading({}), DumpLine{});
}

TEST(DumpLine, WhatOnlyCli11CanSayIsLeftToIt) {
  for (const Words& words : std::vector<Words>{
           {"--help"},
           {"--from-agent"},
           {"--root", "a", "--mock", "b"},
           {"--format", "xml"},
           {"--root", ""},
           {"--root"},
           {"--root", "a", "--root", "b"},
           {"--", "--root", "a"},
           {"extra"},
           {"-oFILE"},
       }) {
    EXPECT_FALSE(plain_reading(words).has_value()) << show_dump(words);
  }
}

}  // namespace
}  // namespace nodetopo::cli
