// Kubernetes name and value rules, each at its edge.
#include <gtest/gtest.h>

#include <nodetopo/exporters/k8s_names.hpp>

namespace nodetopo::exporters::k8s {
namespace {

TEST(K8sNames, DnsLabelAtAndOverSixtyThree) {
  EXPECT_EQ(check_dns_label(std::string(63, 'a')), "");
  EXPECT_NE(check_dns_label(std::string(64, 'a')), "");
  EXPECT_EQ(check_dns_label("gpu-0000-1b-00-0"), "");
  EXPECT_NE(check_dns_label("GPU-0"), "");
  EXPECT_NE(check_dns_label("-gpu"), "");
  EXPECT_NE(check_dns_label("gpu-"), "");
  EXPECT_NE(check_dns_label("gpu.0"), "");
  EXPECT_NE(check_dns_label(""), "");
}

TEST(K8sNames, DnsSubdomain) {
  EXPECT_EQ(check_dns_subdomain("nodetopo.dev", 63), "");
  EXPECT_EQ(check_dns_subdomain(std::string(63, 'a'), 63), "");
  EXPECT_NE(check_dns_subdomain(std::string(64, 'a'), 63), "");
  EXPECT_EQ(check_dns_subdomain(std::string(253, 'a'), 253), "");
  EXPECT_NE(check_dns_subdomain(std::string(254, 'a'), 253), "");
  EXPECT_NE(check_dns_subdomain("a..b"), "");
  EXPECT_NE(check_dns_subdomain("a.-b"), "");
  EXPECT_NE(check_dns_subdomain("Node1"), "");
}

TEST(K8sNames, QualifiedAttributeNameEdges) {
  EXPECT_EQ(check_qualified_attribute_name(std::string(32, 'x')), "");
  EXPECT_NE(check_qualified_attribute_name(std::string(33, 'x')), "");
  EXPECT_EQ(check_qualified_attribute_name(std::string(63, 'd') + "/" + std::string(32, 'x')), "");
  const std::string long_domain = check_qualified_attribute_name(std::string(64, 'd') + "/x");
  EXPECT_NE(long_domain.find("domain"), std::string::npos) << long_domain;
  EXPECT_EQ(check_qualified_attribute_name("resource.kubernetes.io/pcieRoot"), "");
  EXPECT_EQ(check_qualified_attribute_name("_under_score9"), "");
  EXPECT_NE(check_qualified_attribute_name("9lives"), "");
  EXPECT_NE(check_qualified_attribute_name("pcie-switch"), "");
  EXPECT_NE(check_qualified_attribute_name("Nodetopo.dev/x"), "");
  EXPECT_NE(check_qualified_attribute_name("nodetopo.dev/"), "");
}

TEST(K8sNames, LabelKeysAndValues) {
  EXPECT_EQ(check_label_key("nodetopo.dev/gpu.count"), "");
  EXPECT_EQ(check_label_key("nodetopo.dev/" + std::string(63, 'a')), "");
  EXPECT_NE(check_label_key("nodetopo.dev/" + std::string(64, 'a')), "");
  EXPECT_NE(check_label_key("nodetopo.dev/-x"), "");
  EXPECT_NE(check_label_key("kubernetes.io/arch"), "");
  EXPECT_NE(check_label_key("node.kubernetes.io/x"), "");
  EXPECT_NE(check_label_key("k8s.io/x"), "");
  EXPECT_NE(check_label_key("foo.k8s.io/x"), "");
  EXPECT_EQ(check_label_key("notkubernetes.io/x"), "");
  EXPECT_EQ(check_label_value(""), "");
  EXPECT_EQ(check_label_value(std::string(63, 'v')), "");
  EXPECT_NE(check_label_value(std::string(64, 'v')), "");
  EXPECT_NE(check_label_value("a b"), "");
  EXPECT_NE(check_label_value("x."), "");
  EXPECT_EQ(check_label_value("NVIDIA-H100-80GB-HBM3"), "");
}

TEST(K8sNames, SanitizeProductNames) {
  EXPECT_EQ(sanitize_label_value("NVIDIA H100 80GB HBM3"), "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(sanitize_label_value("AMD Instinct MI300X (OAM)"), "AMD-Instinct-MI300X-OAM");
  EXPECT_EQ(sanitize_label_value("  --Tesla V100-SXM2-16GB--  "), "Tesla-V100-SXM2-16GB");
  EXPECT_EQ(sanitize_label_value("!!!"), "");
  const std::string long_name = sanitize_label_value(std::string(62, 'a') + " -b");
  EXPECT_EQ(long_name, std::string(62, 'a'));  // cut at 63, then trimmed of the trailing '-'
  EXPECT_EQ(check_label_value(long_name), "");
}

TEST(K8sNames, StrictSemverAndNormalisation) {
  EXPECT_EQ(check_semver("535.104.5"), "");
  EXPECT_EQ(check_semver("1.0.0-rc.1+build.5"), "");
  EXPECT_NE(check_semver("535.104.05"), "");
  EXPECT_NE(check_semver("1.2"), "");
  EXPECT_NE(check_semver("v1.2.3"), "");
  EXPECT_NE(check_semver("1.0.0-rc.01"), "");
  EXPECT_EQ(normalize_semver("535.104.05"), "535.104.5");
  EXPECT_EQ(normalize_semver("550.54"), "550.54.0");
  EXPECT_EQ(normalize_semver("6"), "6.0.0");
  EXPECT_EQ(normalize_semver("00.01.002"), "0.1.2");
  EXPECT_EQ(normalize_semver("1.2.3-rc.1"), "1.2.3-rc.1");
  EXPECT_EQ(normalize_semver("1.2.3.4"), std::nullopt);
  EXPECT_EQ(normalize_semver("unknown"), std::nullopt);
  EXPECT_EQ(normalize_semver(""), std::nullopt);
  EXPECT_EQ(normalize_semver("1.2.3-rc.01"), std::nullopt);
}

TEST(K8sNames, Quantities) {
  EXPECT_EQ(format_binary_quantity(80ULL << 30), "80Gi");
  EXPECT_EQ(format_binary_quantity(85520809984ULL), "81559Mi");
  EXPECT_EQ(format_binary_quantity(1536), "1536");
  EXPECT_EQ(format_binary_quantity(0), "0");
  EXPECT_EQ(format_binary_quantity(1ULL << 40), "1Ti");
  EXPECT_EQ(parse_quantity("80Gi"), 80ULL << 30);
  EXPECT_EQ(parse_quantity("81559Mi"), 85520809984ULL);
  EXPECT_EQ(parse_quantity("100"), 100U);
  EXPECT_EQ(parse_quantity("2k"), 2000U);
  EXPECT_EQ(parse_quantity("1.5Gi"), std::nullopt);
  EXPECT_EQ(parse_quantity("Gi"), std::nullopt);
  EXPECT_EQ(parse_quantity("-1"), std::nullopt);
  EXPECT_EQ(parse_quantity("16Ei"), std::nullopt);  // overflows 64 bits
  EXPECT_EQ(parse_quantity("99999999999999999999999"), std::nullopt);
}

TEST(K8sNames, Rfc3339) {
  EXPECT_EQ(check_rfc3339("2025-06-30T12:00:00Z"), "");
  EXPECT_EQ(check_rfc3339("2025-06-30T12:00:00.123+02:00"), "");
  EXPECT_NE(check_rfc3339("2025-06-30 12:00:00Z"), "");
  EXPECT_NE(check_rfc3339("2025-13-30T12:00:00Z"), "");
  EXPECT_NE(check_rfc3339("2025-06-30T12:00:00"), "");
  EXPECT_NE(check_rfc3339("tomorrow"), "");
}

}  // namespace
}  // namespace nodetopo::exporters::k8s
