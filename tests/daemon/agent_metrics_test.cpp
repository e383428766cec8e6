// /metrics against Prometheus' own tools: promtool's linter, and a real Prometheus server on
// loopback that scrapes the agent.
#include <regex>

#include <gtest/gtest.h>

#include "agent_fixture.hpp"

namespace nodetopo::test {
namespace {

using namespace std::chrono_literals;

TEST(AgentMetrics, PassPromtoolCheckMetrics) {
  AgentWithFakes agent;
  const auto [status, body] = agent.http_get("/metrics");
  ASSERT_EQ(status, 200);
  write_file(agent.dir() / "metrics.txt", body);
  const auto r = run_command(
      {"sh", "-c", "promtool check metrics < " + (agent.dir() / "metrics.txt").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(body.find("nodetopo_build_info{version=\""), std::string::npos);
  EXPECT_NE(body.find("# TYPE nodetopo_discovery_duration_seconds histogram"), std::string::npos);
  EXPECT_NE(body.find("nodetopo_discoveries_total{trigger=\"start\",result=\"published\"} 1"),
            std::string::npos);
  EXPECT_NE(body.find("nodetopo_probe_status{probe=\"pci\",status=\"ok\"} 1"), std::string::npos);
  EXPECT_NE(body.find("nodetopo_devices{kind=\"accelerator\"} 2"), std::string::npos);
  EXPECT_NE(body.find("nodetopo_sink_writes_total{sink=\"nfd\"} 1"), std::string::npos);
  EXPECT_NE(body.find("nodetopo_generation 1"), std::string::npos);
}

// GET on Prometheus' HTTP API through the agent fixture's plain HTTP client.
std::string prometheus_query(unsigned port, const std::string& query) {
  const auto r = run_command({"curl", "-sf", "--max-time", "2",
                              "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query",
                              "--data-urlencode", "query=" + query});
  return r.exit_code == 0 ? r.out : std::string();
}

TEST(AgentMetrics, RealPrometheusScrapesTheAgent) {
  AgentWithFakes agent;
  const unsigned prom_port = free_port();
  const auto config = agent.dir() / "prometheus.yml";
  write_file(config,
             "global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n"
             "scrape_configs:\n  - job_name: nodetopo\n    static_configs:\n"
             "      - targets: ['127.0.0.1:" +
                 std::to_string(agent.http_port()) + "']\n");
  std::filesystem::create_directories(agent.dir() / "tsdb");
  Child prometheus({"prometheus", "--config.file=" + config.string(),
                    "--storage.tsdb.path=" + (agent.dir() / "tsdb").string(),
                    "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                   {}, agent.dir() / "prometheus.log");
  // A sample: "value":[<time>,"<value>"].
  const std::regex value(R"re("value":\[[0-9.]+,"([^"]+)"\])re");
  std::string up;
  std::string generation;
  const bool scraped = eventually(
      [&] {
        std::smatch m;
        const std::string u = prometheus_query(prom_port, "up{job=\"nodetopo\"}");
        if (!std::regex_search(u, m, value)) return false;
        up = m[1];
        const std::string g = prometheus_query(prom_port, "nodetopo_generation");
        if (!std::regex_search(g, m, value)) return false;
        generation = m[1];
        return true;
      },
      20s);
  ASSERT_TRUE(scraped) << read_file(agent.dir() / "prometheus.log");
  EXPECT_EQ(up, "1");
  EXPECT_EQ(generation, "1");
  prometheus.signal(SIGTERM);
  EXPECT_TRUE(prometheus.wait(5s));
}

}  // namespace
}  // namespace nodetopo::test
