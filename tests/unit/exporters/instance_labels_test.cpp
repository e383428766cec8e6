// The reservation and instance labels: precedence config > Node labels > cloud-init > none, the
// providers' label values mapped onto ours, cloud-init's instance data parsed (and refused with
// the file's name when it is not JSON), and export.yaml's `instance:` keys checked.
#include <gtest/gtest.h>

#include <nodetopo/exporters/export_config.hpp>
#include <nodetopo/exporters/instance_labels.hpp>
#include <nodetopo/exporters/node_labels.hpp>

#include "test_topologies.hpp"

namespace nodetopo::test {
namespace {

using exporters::choose_instance_labels;
using exporters::InstanceInputs;

constexpr const char* kType = "nodetopo.dev/instance-type";
constexpr const char* kCapacity = "nodetopo.dev/capacity-type";
constexpr const char* kReservation = "nodetopo.dev/reservation";

// As cloud-init writes it on EC2 (instance-data.json: standardized v1 keys and the datasource's
// own meta_data).
constexpr const char* kEc2 = R"({
  "ds": {"meta_data": {"instance-id": "i-0abc", "instance-type": "g4dn.12xlarge",
                       "instance-life-cycle": "spot", "reservation-id": "r-038c774ff30715538"}},
  "v1": {"cloud_name": "aws", "platform": "ec2", "region": "eu-west-1"}
})";

InstanceInputs with_cloud_init() {
  InstanceInputs in;
  auto facts = exporters::parse_cloud_init(kEc2, "/host/run/cloud-init/instance-data.json");
  EXPECT_TRUE(facts.ok()) << facts.error().describe();
  in.cloud_init = facts.value();
  return in;
}

TEST(InstanceLabels, CloudInitAloneGivesTypeAndLifeCycleButNeverTheLaunchReservation) {
  const auto labels = choose_instance_labels(with_cloud_init(), {});
  EXPECT_EQ(labels.at(kType).value, "g4dn.12xlarge");
  EXPECT_EQ(labels.at(kType).source, "cloud-init ds.meta_data.instance-type");
  EXPECT_EQ(labels.at(kCapacity).value, "spot");
  // EC2's reservation-id names the launch request, not a capacity reservation.
  EXPECT_EQ(labels.count(kReservation), 0U);
}

TEST(InstanceLabels, NodeLabelsWinOverCloudInitAndAreMapped) {
  const std::map<std::string, std::string> node = {
      {"node.kubernetes.io/instance-type", "p5.48xlarge"},
      {"karpenter.sh/capacity-type", "reserved"},
      {"karpenter.k8s.aws/capacity-reservation-id", "cr-56fac701cc1951b03"},
      {"team.example.com/owner", "infra"}};
  const auto labels = choose_instance_labels(with_cloud_init(), node);
  EXPECT_EQ(labels.at(kType).value, "p5.48xlarge");
  EXPECT_EQ(labels.at(kType).source, "node label node.kubernetes.io/instance-type");
  EXPECT_EQ(labels.at(kCapacity).value, "reserved");
  EXPECT_EQ(labels.at(kReservation).value, "cr-56fac701cc1951b03");
  // Providers' own spellings.
  EXPECT_EQ(choose_instance_labels({}, {{"eks.amazonaws.com/capacityType", "ON_DEMAND"}})
                .at(kCapacity)
                .value,
            "on-demand");
  EXPECT_EQ(choose_instance_labels({}, {{"cloud.google.com/gke-spot", "true"}}).at(kCapacity).value,
            "spot");
  EXPECT_EQ(choose_instance_labels({}, {{"cloud.google.com/reservation-name", "gpu-res-1"}})
                .at(kReservation)
                .source,
            "node label cloud.google.com/reservation-name");
  // A value that says nothing (gke-spot=false, an unknown capacity type) falls through.
  auto fall = choose_instance_labels(with_cloud_init(), {{"cloud.google.com/gke-spot", "false"},
                                                         {"karpenter.sh/capacity-type", "weird"}});
  EXPECT_EQ(fall.at(kCapacity).source, "cloud-init ds.meta_data.instance-life-cycle");
}

TEST(InstanceLabels, ConfigWinsOverEverything) {
  InstanceInputs in = with_cloud_init();
  in.config["capacity-type"] = {"on-demand", "agent config instance.capacity_type"};
  in.config["reservation"] = {"lab-rack-7", "etc/nodetopo/export.yaml instance.reservation"};
  const auto labels =
      choose_instance_labels(in, {{"karpenter.sh/capacity-type", "spot"},
                                  {"karpenter.k8s.aws/capacity-reservation-id", "cr-1"}});
  EXPECT_EQ(labels.at(kCapacity).value, "on-demand");
  EXPECT_EQ(labels.at(kCapacity).source, "agent config instance.capacity_type");
  EXPECT_EQ(labels.at(kReservation).value, "lab-rack-7");
  EXPECT_EQ(labels.at(kType).value, "g4dn.12xlarge");  // not in the config: cloud-init's
}

TEST(InstanceLabels, NoneWhenNothingSaysAnything) {
  EXPECT_TRUE(choose_instance_labels({}, {{"kubernetes.io/hostname", "a"}}).empty());
  const auto text = exporters::describe_instance_labels({}, {});
  EXPECT_NE(text.find("nodetopo.dev/instance-type: none"), std::string::npos) << text;
}

TEST(InstanceLabels, TheyJoinTheNodeLabelsAndValidate) {
  const auto labels =
      exporters::compute_labels(make_dgx(), choose_instance_labels(with_cloud_init(), {}));
  EXPECT_EQ(labels.at(kType), "g4dn.12xlarge");
  EXPECT_TRUE(exporters::validate_labels(labels).empty());
  // Without instance facts the labels are the topology's alone.
  EXPECT_EQ(exporters::compute_labels(make_dgx(), {}), exporters::compute_labels(make_dgx()));
}

TEST(CloudInit, MalformedInstanceDataNamesTheFile) {
  const std::string file = "/host/run/cloud-init/instance-data.json";
  for (const char* bad : {"{\"v1\": ", "not json at all", "", "[1, 2]", "\"text\""}) {
    auto r = exporters::parse_cloud_init(bad, file);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().path, file);
    EXPECT_NE(r.error().describe().find(file), std::string::npos) << r.error().describe();
  }
  // Wrong types and hostile values are ignored, not trusted.
  auto odd = exporters::parse_cloud_init(
      R"({"v1": {"instance_type": 7}, "ds": {"meta_data": {"instance-type": "bad value with spaces",
          "instance-life-cycle": "scheduled"}}})",
      file);
  ASSERT_TRUE(odd.ok());
  EXPECT_TRUE(odd->values.empty());
  // v1.instance_type, where a cloud-init writes it, is taken first.
  auto v1 = exporters::parse_cloud_init(
      R"({"v1": {"instance_type": "n2-standard-8"}, "ds": {"meta_data": {"instance-type": "x"}}})",
      file);
  EXPECT_EQ(v1->values.at("instance-type").value, "n2-standard-8");
  EXPECT_EQ(v1->values.at("instance-type").source, "cloud-init v1.instance_type");
}

TEST(ExportConfigInstance, ValuesAreCheckedAsLabelValues) {
  auto ok = exporters::parse_export_config(
      "instance:\n  type: g4dn.xlarge\n  capacityType: reserved\n  reservation: cr-1\n", "x.yaml");
  ASSERT_TRUE(ok.ok()) << ok.error().describe();
  EXPECT_EQ(ok->instance.at("instance-type"), "g4dn.xlarge");
  EXPECT_EQ(ok->instance.at("capacity-type"), "reserved");
  auto bad = exporters::parse_export_config("instance:\n  capacityType: cheap\n", "x.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().describe().find("instance.capacityType"), std::string::npos)
      << bad.error().describe();
  auto unknown = exporters::parse_export_config("instance:\n  zone: a\n", "x.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().describe().find("zone"), std::string::npos);
  auto invalid = exporters::parse_export_config("instance:\n  type: \"has space\"\n", "x.yaml");
  ASSERT_FALSE(invalid.ok());
}

}  // namespace
}  // namespace nodetopo::test
