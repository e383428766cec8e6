// The agent picks the journal when systemd connected its stderr to it (JOURNAL_STREAM).
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/daemon/config.hpp>
#include <nodetopo/daemon/logging.hpp>

namespace nodetopo::test {
namespace {

std::string stream_of(int fd, long long inode_delta = 0) {
  struct stat st {};
  EXPECT_EQ(::fstat(fd, &st), 0);
  return std::to_string(st.st_dev) + ":" +
         std::to_string(static_cast<long long>(st.st_ino) + inode_delta);
}

TEST(AgentLogging, JournalStreamMustNameStderr) {
  ::unsetenv("JOURNAL_STREAM");
  EXPECT_FALSE(daemon::stderr_is_journal_stream());
  ::setenv("JOURNAL_STREAM", stream_of(STDERR_FILENO).c_str(), 1);
  EXPECT_TRUE(daemon::stderr_is_journal_stream());
  // A child whose stderr was redirected inherits the variable, not the stream.
  ::setenv("JOURNAL_STREAM", stream_of(STDERR_FILENO, 1).c_str(), 1);
  EXPECT_FALSE(daemon::stderr_is_journal_stream());
  for (const char* bad : {"", "12", "a:b", "1:2:3", ":5"}) {
    ::setenv("JOURNAL_STREAM", bad, 1);
    EXPECT_FALSE(daemon::stderr_is_journal_stream()) << bad;
  }
  ::unsetenv("JOURNAL_STREAM");
}

TEST(AgentLogging, JournalIsAFormatOfTheConfig) {
  auto c = daemon::parse_agent_config("log: {format: journal}\n", "agent.yaml");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->log_format, "journal");
  auto bad = daemon::parse_agent_config("log: {format: syslog}\n", "agent.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().describe().find("log.format: expected one of text, json, journal"),
            std::string::npos)
      << bad.error().describe();
}

}  // namespace
}  // namespace nodetopo::test
