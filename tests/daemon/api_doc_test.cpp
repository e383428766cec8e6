// docs/agent.md is held to the D-Bus IDL: every member of dev.nodetopo.Topology1 is documented
// there, and every member carries a DocString annotation in the XML.
#include <regex>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace nodetopo::test {
namespace {

TEST(AgentApiDocs, EveryDbusMemberIsDocumented) {
  const std::string xml = read_file(source_dir() / "agent/daemon/dbus/dev.nodetopo.Topology1.xml");
  const std::string doc = read_file(source_dir() / "docs/agent.md");
  ASSERT_FALSE(xml.empty());
  const std::regex member(R"re(<(method|property|signal) name="([A-Za-z]+)")re");
  std::size_t members = 0;
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), member); it != std::sregex_iterator();
       ++it) {
    ++members;
    const std::string kind = (*it)[1];
    const std::string name = (*it)[2];
    const std::string as_doc = kind == "method" ? "`" + name + "(" : kind + " `" + name;
    EXPECT_NE(doc.find(as_doc), std::string::npos) << kind << " " << name << " not in agent.md";
    // The member's own DocString annotation follows its opening tag.
    const auto at = static_cast<std::size_t>(it->position());
    const auto end = xml.find("</" + kind + ">", at);
    EXPECT_NE(xml.substr(at, end - at).find("org.freedesktop.DBus.DocString"), std::string::npos)
        << kind << " " << name << " has no DocString";
  }
  EXPECT_EQ(members, 9U);
  for (const char* error :
       {"NotReady", "InvalidFormat", "InvalidKind", "ExportFailed", "DiscoveryFailed"}) {
    EXPECT_NE(doc.find(std::string(".") + error), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace nodetopo::test
