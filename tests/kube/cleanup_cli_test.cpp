// `topo cleanup` as a user runs it: against the fake API server through a kubeconfig, with the
// project's exit codes (0 done, 1 failure named, 2 usage).
#include "publisher_fixture.hpp"

namespace nodetopo::test {
namespace {

std::string topo() {
  return (build_dir() / "topo").string();
}

TEST(KubeCleanupCli, RemovesThePublishedObjectsThroughAKubeconfig) {
  FakeApiServer fake;
  {
    auto config = fast_config(fake.client_config());
    config.label_mode = kube::LabelMode::kNode;
    kube::Publisher p(config);
    p.update(desired(make_dgx(), "node-a", true));
    ASSERT_TRUE(api_eventually([&] { return in_sync(p) && in_sync(p, "nodelabels"); }));
  }
  ASSERT_EQ(slices_of(fake).size(), 1U);
  const auto kubeconfig = fake.write_kubeconfig("kc", "    token: token-1\n");
  const auto r =
      run_command({topo(), "cleanup", "--kubeconfig", kubeconfig.string(), "--node", "node-a"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1 ResourceSlice(s) of nodetopo.dev deleted"), std::string::npos) << r.out;
  EXPECT_TRUE(slices_of(fake).empty());
  for (const auto& n : fake.objects("nodes"))
    EXPECT_EQ(n["metadata"]["labels"].size(), 2U);
}

TEST(KubeCleanupCli, UnsupportedCredentialsAndUsageErrors) {
  TempDir d;
  write_file(d.path() / "kc",
             "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n"
             "    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: k\n"
             "    user: u\nusers:\n- name: u\n  user:\n    exec:\n      command: "
             "gke-gcloud-auth-plugin\n");
  auto r =
      run_command({topo(), "cleanup", "--kubeconfig", (d.path() / "kc").string(), "--node", "n1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("exec: credential plugins are not supported"), std::string::npos) << r.err;
  r = run_command({topo(), "cleanup", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  r = run_command({topo(), "cleanup", "--node", "Not_A_Node"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--node"), std::string::npos);
}

TEST(KubeCleanupCli, ADeadServerIsAFailureNamingIt) {
  FakeApiServer fake;
  fake.fault({{"status", 503}, {"count", -1}});
  const auto kubeconfig = fake.write_kubeconfig("kc", "    token: token-1\n");
  const auto r =
      run_command({topo(), "cleanup", "--kubeconfig", kubeconfig.string(), "--node", "node-a"}, {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("list resourceslices"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace nodetopo::test
