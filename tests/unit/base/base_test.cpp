// base: errors and their context chain, the JSON escaper, key=value log fields, the strict YAML
// reader, SHA-256 (FIPS 180-4 vectors) and atomic file writes.
#include <cerrno>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/stat.h>

#include <nodetopo/base/atomic_file.hpp>
#include <nodetopo/base/error.hpp>
#include <nodetopo/base/file_read.hpp>
#include <nodetopo/base/json_escape.hpp>
#include <nodetopo/base/log.hpp>
#include <nodetopo/base/log_journal.hpp>
#include <nodetopo/base/sha256.hpp>
#include <nodetopo/base/strings.hpp>
#include <nodetopo/base/yaml_reader.hpp>

#include "sha256_impl.hpp"
#include "test_support.hpp"

namespace nodetopo {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// errors

TEST(Error, DescribeWithoutContextIsPathAndMessage) {
  EXPECT_EQ(make_error(ErrorCode::kIo, "boom", "sys/x").describe(), "sys/x: boom");
  EXPECT_EQ(make_error(ErrorCode::kIo, "boom").describe(), "boom");
}

TEST(Error, ContextChainPrintsOutermostFirst) {
  Error e = make_error(ErrorCode::kInvalid, "409 Conflict", "resourceslices/node-a");
  e.with_context("updating the slice").with_context("publishing ResourceSlices");
  EXPECT_EQ(
      e.describe(),
      "publishing ResourceSlices <- updating the slice <- resourceslices/node-a: 409 Conflict");
}

TEST(Error, ErrnoKeepsTheNumberAndClassifies) {
  const Error missing = errno_error(ENOENT, "cannot open", "etc/x");
  EXPECT_EQ(missing.code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.sys_errno, ENOENT);
  EXPECT_FALSE(missing.retryable());
  EXPECT_NE(missing.describe().find("etc/x: cannot open: "), std::string::npos);
  EXPECT_EQ(errno_error(EACCES, "x").code, ErrorCode::kPermission);
  EXPECT_EQ(errno_error(ELOOP, "x").code, ErrorCode::kSymlinkLoop);
  EXPECT_EQ(errno_error(EAGAIN, "x").error_class, ErrorClass::kTransient);
  EXPECT_TRUE(errno_error(EINTR, "x").retryable());
  EXPECT_EQ(errno_error(EIO, "x").code, ErrorCode::kIo);
}

// ---------------------------------------------------------------------------------------------
// JSON escaping

std::string escaped(std::string_view text) {
  std::string out;
  json::append_string(out, text);
  return out;
}

TEST(JsonEscape, MatchesNlohmannOnEveryKindOfString) {
  const std::string cases[] = {"plain",
                               "",
                               "quote\" and \\",
                               "tab\tnl\n\b\f\r",
                               "\x01\x1f\x7f",
                               "caf\xc3\xa9",
                               "bad \xff byte",
                               "cut \xe2\x82",
                               "\xe0\x80 overlong"};
  for (const std::string& text : cases) {
    EXPECT_EQ(escaped(text),
              nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
        << text;
  }
}

TEST(JsonEscape, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(escaped("a\xff"
                    "b"),
            "\"a\xef\xbf\xbd"
            "b\"");
  EXPECT_TRUE(nlohmann::json::accept(escaped("\xc3")));
}

// ---------------------------------------------------------------------------------------------
// log fields

TEST(LogFields, PlainValuesBareOthersQuoted) {
  EXPECT_EQ(log_fields({{"probe", "pci"}, {"path", "sys/bus/pci/devices/0000:00:01.0"}}),
            "probe=pci path=sys/bus/pci/devices/0000:00:01.0");
  EXPECT_EQ(log_fields({{"msg", "two words"}, {"empty", ""}, {"q", "a\"b"}}),
            "msg=\"two words\" empty=\"\" q=\"a\\\"b\"");
}

// ---------------------------------------------------------------------------------------------
// strict YAML

TEST(LogJournal, TheJournalIsTheSinkTheProgramGaveElseStderr) {
  // Base links no libsystemd: kJournal writes to the sink the agent hands over, and without one
  // stays on stderr instead of losing the lines.
  auto log = component_logger("test.journal");
  configure_logging(spdlog::level::info, LogFormat::kText, LogSink::kJournal);
  ::testing::internal::CaptureStderr();
  log->warn("before any journal sink");
  log->flush();
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("before any journal sink"),
            std::string::npos);

  std::ostringstream journal;
  set_journal_sink(std::make_shared<spdlog::sinks::ostream_sink_mt>(journal));
  configure_logging(spdlog::level::info, LogFormat::kText, LogSink::kJournal);
  log->warn("to the journal");
  log->flush();
  EXPECT_EQ(journal.str(), "[test.journal] to the journal\n");
  configure_logging(spdlog::level::info, LogFormat::kText, LogSink::kStderr);
  ::testing::internal::CaptureStderr();
  log->warn("back on stderr");
  log->flush();
  EXPECT_NE(::testing::internal::GetCapturedStderr().find("back on stderr"), std::string::npos);
  EXPECT_EQ(journal.str(), "[test.journal] to the journal\n");
}

TEST(YamlReader, UnknownAndDuplicateKeysNameTheLine) {
  {
    yaml::Reader r("f.yaml", "settings");
    const YAML::Node root = YAML::Load("a: 1\nb: 2\n");
    yaml::Fields f(r, root, "");
    EXPECT_EQ(yaml::read_uint(r, f.take("a"), "a", 10), 1U);
    f.done();
    ASSERT_TRUE(r.failed());
    EXPECT_EQ(r.error().describe(), "f.yaml: line 2: b: unknown key (expected one of: a)");
  }
  {
    yaml::Reader r("f.yaml");
    const YAML::Node root = YAML::Load("a: 1\na: 2\n");
    yaml::Fields f(r, root, "");
    ASSERT_TRUE(r.failed());
    EXPECT_NE(r.error().describe().find("line 2: a: duplicate key"), std::string::npos);
  }
}

TEST(YamlReader, TopLevelOfTheWrongTypeUsesTheDocumentName) {
  yaml::Reader r("f.yaml", "settings");
  const YAML::Node root = YAML::Load("[1, 2]");
  yaml::Fields f(r, root, "");
  ASSERT_TRUE(r.failed());
  EXPECT_NE(r.error().describe().find("settings: expected a mapping"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// SHA-256

// Both compressions (the SHA extensions where this CPU has them, and the portable code) and
// the public function, which takes the fastest.
class Sha256Paths : public ::testing::TestWithParam<detail::Sha256Impl> {};

INSTANTIATE_TEST_SUITE_P(Impls, Sha256Paths,
                         ::testing::Values(detail::Sha256Impl::kShaNi,
                                           detail::Sha256Impl::kPortable),
                         [](const auto& param_info) {
                           return param_info.param == detail::Sha256Impl::kShaNi ? "ShaNi"
                                                                                 : "Portable";
                         });

TEST_P(Sha256Paths, FipsVectors) {
  const auto hash = [](std::string_view s) { return detail::sha256_hex(s, GetParam()); };
  EXPECT_EQ(hash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hash(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every length up to 17 blocks, and a long input, in bytes of every value: each block count
// and tail, every carry of the message schedule.
TEST(Sha256, ExtensionsAndPortableCodeAgreeOnEveryLength) {
  std::string data(1100, '\0');
  std::uint32_t x = 2463534242U;  // xorshift32
  for (char& c : data) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    c = static_cast<char>(x);
  }
  for (std::size_t n = 0; n <= data.size(); ++n) {
    const std::string_view s(data.data(), n);
    ASSERT_EQ(detail::sha256_hex(s, detail::Sha256Impl::kShaNi),
              detail::sha256_hex(s, detail::Sha256Impl::kPortable))
        << n << " bytes";
  }
  std::string big;
  for (int i = 0; i < 3000; ++i)
    big += data;
  EXPECT_EQ(detail::sha256_hex(big, detail::Sha256Impl::kShaNi),
            detail::sha256_hex(big, detail::Sha256Impl::kPortable));
  EXPECT_EQ(sha256_hex(big), detail::sha256_hex(big, detail::Sha256Impl::kPortable));
}

TEST(Sha256, PaddingBoundariesMatchSha256sum) {
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, hex] : cases) {
    EXPECT_EQ(sha256_hex(std::string(n, 'a')), hex) << n << " bytes";
  }
}

// ---------------------------------------------------------------------------------------------
// bounded reads of regular files

TEST(ReadRegularFile, ReadsARegularFileWhole) {
  test::TempDir dir;
  const fs::path file = dir.path() / "agent.yaml";
  ASSERT_TRUE(write_file_atomic(file, "log:\n  level: debug\n").ok());
  auto r = read_regular_file(file.string(), "agent config", 1024);
  ASSERT_TRUE(r.ok()) << r.error().describe();
  EXPECT_EQ(r.value(), "log:\n  level: debug\n");
}

TEST(ReadRegularFile, MissingFileIsNotFoundWithErrno) {
  test::TempDir dir;
  const std::string path = (dir.path() / "absent.yaml").string();
  auto r = read_regular_file(path, "agent config", 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(r.error().sys_errno, ENOENT);
  EXPECT_NE(r.error().describe().find(path), std::string::npos) << r.error().describe();
}

// A FIFO must be refused at once (the open is non-blocking), never waited on.
TEST(ReadRegularFile, FifoAndDirectoryAreRefusedByName) {
  test::TempDir dir;
  const std::string fifo = (dir.path() / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, dir.path().string()}) {
    auto r = read_regular_file(path, "kubeconfig", 1024);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalid);
    EXPECT_EQ(r.error().describe(), path + ": the kubeconfig is not a regular file: not read");
  }
}

TEST(ReadRegularFile, LargerThanTheLimitIsRefused) {
  test::TempDir dir;
  const fs::path file = dir.path() / "big";
  ASSERT_TRUE(write_file_atomic(file, std::string(2048, 'x')).ok());
  auto r = read_regular_file(file.string(), "profile file", 1024);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().describe().find("larger than 1024 bytes"), std::string::npos)
      << r.error().describe();
  auto whole = read_regular_file(file.string(), "profile file", 2048);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole.value().size(), 2048U);
}

// ---------------------------------------------------------------------------------------------
// atomic files

TEST(WriteFileAtomic, WritesAndReplaces) {
  test::TempDir dir;
  const fs::path file = dir.path() / "out.json";
  ASSERT_TRUE(write_file_atomic(file, "first\n").ok());
  EXPECT_EQ(test::read_file(file), "first\n");
  ASSERT_TRUE(write_file_atomic(file, "second").ok());
  EXPECT_EQ(test::read_file(file), "second");
  EXPECT_EQ((fs::status(file).permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 1U) << "no temporary file is left behind";
}

TEST(WriteFileAtomic, MissingDirectoryFailsNamingIt) {
  test::TempDir dir;
  const fs::path file = dir.path() / "missing" / "out.json";
  const Result<void> r = write_file_atomic(file, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().describe().find((dir.path() / "missing").string()), std::string::npos)
      << r.error().describe();
  EXPECT_FALSE(fs::exists(dir.path() / "missing"));
}

TEST(WriteFileAtomic, TargetThatIsADirectoryFailsAndCleansUp) {
  test::TempDir dir;
  fs::create_directories(dir.path() / "out.json");
  const Result<void> r = write_file_atomic(dir.path() / "out.json", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().describe().find("out.json"), std::string::npos) << r.error().describe();
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 1U) << "the temporary file is removed on failure";
}

TEST(Strings, AsciiLowerLeavesOtherBytesAlone) {
  EXPECT_EQ(ascii_lower("Node-1.EXAMPLE"), "node-1.example");
  EXPECT_EQ(ascii_lower("GiB \xc3\x84"), "gib \xc3\x84");  // UTF-8 "Ä" is not ASCII
  EXPECT_EQ(ascii_lower(""), "");
}

TEST(Strings, TrimRemovesEveryAsciiSpaceAtBothEnds) {
  EXPECT_EQ(trim(" \t\v\f\r\nhost a\n\n"), "host a");
  EXPECT_EQ(trim("   "), "");
  EXPECT_EQ(trim("x"), "x");
  const std::string text = "  kept  ";
  const std::string_view view = trim(text);
  EXPECT_EQ(view.data(), text.data() + 2) << "a view into the argument, not a copy";
}

TEST(Strings, SplitKeepsEmptyParts) {
  EXPECT_EQ(split("1.2.3", '.'), (std::vector<std::string_view>{"1", "2", "3"}));
  EXPECT_EQ(split("a..b.", '.'), (std::vector<std::string_view>{"a", "", "b", ""}));
  EXPECT_EQ(split("", '.'), (std::vector<std::string_view>{""}));
}

}  // namespace
}  // namespace nodetopo
