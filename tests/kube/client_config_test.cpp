// Credentials: in-cluster service-account files and kubeconfig files (contexts, files and inline
// data, tokens, unsupported plugins), each failure naming the file and the key.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nodetopo/kube/client_config.hpp>

#include "test_support.hpp"

namespace nodetopo::test {
namespace {

using kube::load_in_cluster;
using kube::load_kubeconfig;

TEST(KubeBase64, DecodesAndRejects) {
  EXPECT_EQ(kube::base64_decode("aGVsbG8=").value(), "hello");
  EXPECT_EQ(kube::base64_decode("aGVs\nbG8h").value(), "hello!");
  EXPECT_EQ(kube::base64_decode("").value(), "");
  EXPECT_FALSE(kube::base64_decode("aGVsbG8*").has_value());
  EXPECT_FALSE(kube::base64_decode("aG=Vs").has_value());
}

TEST(KubeInCluster, ReadsEnvironmentAndServiceAccountFiles) {
  TempDir sa;
  write_file(sa.path() / "token", "tok\n");
  write_file(sa.path() / "ca.crt", "PEM");
  write_file(sa.path() / "namespace", "nodetopo\n");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = load_in_cluster(sa.path().string());
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->token_file, (sa.path() / "token").string());
  EXPECT_EQ(c->ca.file, (sa.path() / "ca.crt").string());
  EXPECT_EQ(c->name_space, "nodetopo");
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  EXPECT_EQ(load_in_cluster(sa.path().string())->server, "https://[fd00::1]:443");
}

TEST(KubeInCluster, MissingPiecesAreNamed) {
  TempDir sa;
  unsetenv("KUBERNETES_SERVICE_HOST");
  auto c = load_in_cluster(sa.path().string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
  c = load_in_cluster(sa.path().string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("token"), std::string::npos);
  write_file(sa.path() / "token", "t");
  c = load_in_cluster(sa.path().string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("ca.crt"), std::string::npos);
}

std::string kubeconfig(const std::string& user, const std::string& cluster_extra = {}) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: tenant\nclusters:\n"
         "- name: mgmt\n  cluster:\n    server: https://mgmt.example:6443\n"
         "- name: tenant\n  cluster:\n    server: https://tenant.example:6443\n"
         "    certificate-authority-data: UEVNLUNB\n" +
         cluster_extra +
         "contexts:\n- name: mgmt\n  context:\n    cluster: mgmt\n    user: admin\n"
         "- name: tenant\n  context:\n    cluster: tenant\n    user: agent\n    namespace: nt\n"
         "users:\n- name: admin\n  user:\n    token: admin-token\n- name: agent\n  user:\n" +
         user;
}

TEST(KubeKubeconfig, CurrentContextWithInlineData) {
  TempDir d;
  write_file(d.path() / "config",
             kubeconfig("    client-certificate-data: Q0VSVA==\n    client-key-data: S0VZ\n"));
  auto c = load_kubeconfig((d.path() / "config").string());
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->server, "https://tenant.example:6443");
  EXPECT_EQ(c->ca.data, "PEM-CA");
  EXPECT_EQ(c->client_cert.data, "CERT");
  EXPECT_EQ(c->client_key.data, "KEY");
  EXPECT_EQ(c->name_space, "nt");
  EXPECT_NE(c->origin.find("context tenant"), std::string::npos);
}

TEST(KubeKubeconfig, NamedContextAndRelativeFiles) {
  TempDir d;
  write_file(d.path() / "certs" / "tok", "file-token");
  write_file(d.path() / "config", kubeconfig("    tokenFile: certs/tok\n"));
  auto c = load_kubeconfig((d.path() / "config").string(), "mgmt");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->server, "https://mgmt.example:6443");
  EXPECT_EQ(c->token, "admin-token");
  c = load_kubeconfig((d.path() / "config").string());
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->token_file, (d.path() / "certs" / "tok").string());
}

TEST(KubeKubeconfig, ExecPluginAndAuthProviderAreRefusedByName) {
  TempDir d;
  write_file(d.path() / "config",
             kubeconfig("    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                        "      command: aws\n"));
  auto c = load_kubeconfig((d.path() / "config").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("exec: credential plugins are not supported"),
            std::string::npos)
      << c.error().describe();
  EXPECT_NE(c.error().describe().find((d.path() / "config").string()), std::string::npos);
  write_file(d.path() / "config", kubeconfig("    auth-provider:\n      name: gcp\n"));
  c = load_kubeconfig((d.path() / "config").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("auth-provider"), std::string::npos);
}

TEST(KubeKubeconfig, ClusterSettingsLibcurlCannotHonourAreRefused) {
  TempDir d;
  for (const std::string extra :
       {"    proxy-url: http://proxy:3128\n", "    tls-server-name: kubernetes.default\n"}) {
    write_file(d.path() / "config", kubeconfig("    token: t\n", extra));
    auto c = load_kubeconfig((d.path() / "config").string());
    ASSERT_FALSE(c) << extra;
    EXPECT_NE(c.error().describe().find("not supported"), std::string::npos);
    EXPECT_NE(c.error().describe().find("cluster \"tenant\""), std::string::npos);
  }
}

TEST(KubeKubeconfig, BrokenFilesAreNamed) {
  TempDir d;
  auto c = load_kubeconfig((d.path() / "absent").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("absent"), std::string::npos);
  write_file(d.path() / "bad", "clusters: [unclosed\n");
  c = load_kubeconfig((d.path() / "bad").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("not a valid kubeconfig"), std::string::npos);
  write_file(d.path() / "config", kubeconfig("    token: t\n"));
  c = load_kubeconfig((d.path() / "config").string(), "nope");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("context \"nope\" is not defined"), std::string::npos);
  write_file(d.path() / "config", kubeconfig("    client-certificate: missing.crt\n"
                                             "    client-key: missing.key\n"));
  c = load_kubeconfig((d.path() / "config").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("client-certificate: no such file"), std::string::npos);
  write_file(d.path() / "config", kubeconfig("    client-certificate-data: '***'\n"));
  c = load_kubeconfig((d.path() / "config").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("not valid base64"), std::string::npos);
}

// A kubeconfig (or the service account's namespace file) that is a FIFO would block the agent's
// start for ever, /dev/zero would grow it without bound: only a bounded regular file is read.
TEST(KubeKubeconfig, OnlyABoundedRegularFileIsRead) {
  TempDir d;
  const auto fifo = d.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto c = load_kubeconfig(fifo.string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find(fifo.string() + ": the kubeconfig is not a regular file"),
            std::string::npos)
      << c.error().describe();
  c = load_kubeconfig("/dev/zero");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("/dev/zero: the kubeconfig is not a regular file"),
            std::string::npos);
  c = load_kubeconfig(d.path().string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("not a regular file"), std::string::npos);
  { std::ofstream(d.path() / "huge") << "kind: Config\n"; }
  std::filesystem::resize_file(d.path() / "huge", std::uintmax_t{5} << 20);
  c = load_kubeconfig((d.path() / "huge").string());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().describe().find("larger than 4 MiB"), std::string::npos);

  TempDir sa;
  write_file(sa.path() / "token", "t");
  write_file(sa.path() / "ca.crt", "PEM");
  ASSERT_EQ(::mkfifo((sa.path() / "namespace").c_str(), 0600), 0);
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
  auto in_cluster = load_in_cluster(sa.path().string());
  ASSERT_TRUE(in_cluster) << in_cluster.error().describe();
  EXPECT_EQ(in_cluster->name_space, "") << "the FIFO is not read";
}

TEST(KubeKubeconfig, ParsesTextWithThePathItCameFrom) {
  auto c = kube::parse_kubeconfig(kubeconfig("    token: t\n"), "/etc/tenant/kubeconfig");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->token, "t");
  c = kube::parse_kubeconfig("[unclosed", "/etc/tenant/kubeconfig");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().path, "/etc/tenant/kubeconfig");
}

TEST(KubeKubeconfig, KubeconfigVariableIsUsedBeforeInCluster) {
  TempDir d;
  write_file(d.path() / "config", kubeconfig("    token: t\n"));
  setenv("KUBECONFIG", ((d.path() / "config").string() + ":/nonexistent").c_str(), 1);
  auto c = kube::load_client_config("", "");
  ASSERT_TRUE(c) << c.error().describe();
  EXPECT_EQ(c->server, "https://tenant.example:6443");
  unsetenv("KUBECONFIG");
}

}  // namespace
}  // namespace nodetopo::test
