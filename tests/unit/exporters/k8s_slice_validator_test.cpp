// The project's own ResourceSlice validator, at each edge: the value at the limit passes, one
// over fails with a message naming the object and the field.
#include <gtest/gtest.h>

#include <nodetopo/exporters/slice_validator.hpp>

namespace nodetopo::exporters::dra {
namespace {

using V = K8sVersion;

Device device(const std::string& name) {
  Device d;
  d.name = name;
  d.attributes["type"] = AttributeValue::of_string("gpu");
  return d;
}

ResourceSlice slice(std::size_t devices, const std::string& node = "node1",
                    const std::string& driver = "nodetopo.dev") {
  ResourceSlice s;
  s.node_name = node;
  s.driver = driver;
  s.generate_name = node + "-" + driver + "-";
  s.pool_name = node;
  for (std::size_t i = 0; i < devices; ++i)
    s.devices.push_back(device("dev-" + std::to_string(i)));
  return s;
}

std::vector<Violation> check(const std::vector<ResourceSlice>& slices, V version = V::k1_35) {
  return validate_slices(slices, version);
}
std::vector<Violation> check(const ResourceSlice& s, V version = V::k1_35) {
  return check(std::vector<ResourceSlice>{s}, version);
}

std::string all(const std::vector<Violation>& v) {
  std::string out;
  for (const auto& x : v)
    out += x.describe() + "\n";
  return out;
}

// Exactly the expected field is named, with the slice as the object.
void expect_violation(const std::vector<Violation>& v, const std::string& field) {
  ASSERT_FALSE(v.empty()) << "expected a violation of " << field;
  bool found = false;
  for (const auto& x : v) {
    if (x.field.find(field) != std::string::npos) {
      found = true;
      EXPECT_NE(x.object.find("ResourceSlice "), std::string::npos) << x.describe();
      EXPECT_NE(x.describe().find(field), std::string::npos);
    }
  }
  EXPECT_TRUE(found) << "no violation of " << field << " in:\n" << all(v);
}

// Two slices of one pool: the counter sets, then the devices that consume them.
std::vector<ResourceSlice> partitioned(std::size_t devices, std::size_t counters_per_set = 1) {
  ResourceSlice counters = slice(0);
  CounterSet set{"gpu-counters", {}};
  for (std::size_t i = 0; i < counters_per_set; ++i)
    set.counters["c" + std::to_string(i)] = "1";
  counters.shared_counters.push_back(set);
  ResourceSlice devs = slice(devices);
  for (Device& d : devs.devices)
    d.consumes_counters.push_back({"gpu-counters", {{"c0", "1"}}});
  counters.resource_slice_count = devs.resource_slice_count = 2;
  return {counters, devs};
}

TEST(SliceValidator, ValidSlicePasses) {
  EXPECT_TRUE(check(slice(3)).empty()) << all(check(slice(3)));
}

TEST(SliceValidator, DevicesPerSliceEdge) {
  EXPECT_TRUE(check(slice(128)).empty());
  const auto v = check(slice(129));
  expect_violation(v, "spec.devices");
  EXPECT_NE(all(v).find("129 devices; at most 128"), std::string::npos) << all(v);
  EXPECT_NE(all(v).find("ResourceSlice node1-nodetopo.dev-* (pool node1, slice 1 of 1)"),
            std::string::npos);
}

TEST(SliceValidator, DevicesPerSliceWithTaintsEdge) {
  ResourceSlice at = slice(64);
  at.devices[10].taints.push_back({"nodetopo.dev/unhealthy", "", "NoSchedule"});
  EXPECT_TRUE(check(at).empty()) << all(check(at));
  ResourceSlice over = slice(65);
  over.devices[10].taints.push_back({"nodetopo.dev/unhealthy", "", "NoSchedule"});
  expect_violation(check(over), "spec.devices");
}

TEST(SliceValidator, DevicesPerSliceWithCountersEdge) {
  EXPECT_TRUE(check(partitioned(64)).empty()) << all(check(partitioned(64)));
  const auto v = check(partitioned(65));
  expect_violation(v, "spec.devices");
  EXPECT_NE(all(v).find("consumes counters"), std::string::npos);
}

TEST(SliceValidator, AttributesAndCapacitiesPerDeviceEdge) {
  ResourceSlice at = slice(1);
  for (int i = 0; i < 30; ++i)
    at.devices[0].attributes["a" + std::to_string(i)] = AttributeValue::of_int(i);
  at.devices[0].capacity["memory"] = {"80Gi", std::nullopt};
  ASSERT_EQ(at.devices[0].attributes.size() + at.devices[0].capacity.size(), 32U);
  EXPECT_TRUE(check(at).empty()) << all(check(at));
  ResourceSlice over = at;
  over.devices[0].capacity["cores"] = {"100", std::nullopt};
  expect_violation(check(over), "spec.devices[0]");
  EXPECT_NE(all(check(over)).find("at most 32 together"), std::string::npos);
}

TEST(SliceValidator, AttributeKeyEdges) {
  ResourceSlice s = slice(1);
  s.devices[0].attributes[std::string(32, 'k')] = AttributeValue::of_bool(true);
  s.devices[0].attributes[std::string(63, 'd') + "/" + std::string(32, 'k')] =
      AttributeValue::of_bool(true);
  EXPECT_TRUE(check(s).empty()) << all(check(s));
  ResourceSlice id_over = slice(1);
  id_over.devices[0].attributes[std::string(33, 'k')] = AttributeValue::of_bool(true);
  expect_violation(check(id_over), "attributes[\"" + std::string(33, 'k') + "\"]");
  ResourceSlice domain_over = slice(1);
  domain_over.devices[0].attributes[std::string(64, 'd') + "/k"] = AttributeValue::of_bool(true);
  expect_violation(check(domain_over), "spec.devices[0].attributes");
  ResourceSlice bad = slice(1);
  bad.devices[0].attributes["pcie-switch"] = AttributeValue::of_string("x");
  expect_violation(check(bad), "attributes[\"pcie-switch\"]");
}

TEST(SliceValidator, StringAndVersionValueLengthEdges) {
  ResourceSlice at = slice(1);
  at.devices[0].attributes["productName"] = AttributeValue::of_string(std::string(64, 'p'));
  at.devices[0].attributes["driverVersion"] =
      AttributeValue::of_version("1.2.3-" + std::string(58, 'r'));
  ASSERT_EQ(at.devices[0].attributes["driverVersion"].text.size(), 64U);
  EXPECT_TRUE(check(at).empty()) << all(check(at));
  ResourceSlice over = slice(1);
  over.devices[0].attributes["productName"] = AttributeValue::of_string(std::string(65, 'p'));
  expect_violation(check(over), "attributes[\"productName\"].string");
  ResourceSlice vover = slice(1);
  vover.devices[0].attributes["driverVersion"] =
      AttributeValue::of_version("1.2.3-" + std::string(59, 'r'));
  expect_violation(check(vover), "attributes[\"driverVersion\"].version");
}

TEST(SliceValidator, VersionsMustBeStrictSemver) {
  ResourceSlice s = slice(1);
  s.devices[0].attributes["driverVersion"] = AttributeValue::of_version("535.104.5");
  EXPECT_TRUE(check(s).empty());
  s.devices[0].attributes["driverVersion"] = AttributeValue::of_version("535.104.05");
  const auto v = check(s);
  expect_violation(v, "attributes[\"driverVersion\"].version");
  EXPECT_NE(all(v).find("leading zeros"), std::string::npos) << all(v);
}

TEST(SliceValidator, DeviceNameIsADnsLabel) {
  ResourceSlice at = slice(1);
  at.devices[0].name = std::string(63, 'g');
  EXPECT_TRUE(check(at).empty());
  ResourceSlice over = slice(1);
  over.devices[0].name = std::string(64, 'g');
  expect_violation(check(over), "spec.devices[0].name");
  ResourceSlice upper = slice(1);
  upper.devices[0].name = "GPU-0";
  expect_violation(check(upper), "spec.devices[0].name");
  ResourceSlice dup = slice(2);
  dup.devices[1].name = dup.devices[0].name;
  expect_violation(check(dup), "spec.devices[1].name");
}

TEST(SliceValidator, DriverNameEdge) {
  EXPECT_TRUE(check(slice(1, "node1", std::string(63, 'd'))).empty());
  expect_violation(check(slice(1, "node1", std::string(64, 'd'))), "spec.driver");
  expect_violation(check(slice(1, "node1", "Nodetopo.dev")), "spec.driver");
}

TEST(SliceValidator, NodeAndPoolNameEdges) {
  const std::string l63(63, 'n');
  const std::string name253 = l63 + "." + l63 + "." + l63 + "." + std::string(61, 'n');
  ASSERT_EQ(name253.size(), 253U);
  EXPECT_TRUE(check(slice(1, name253)).empty()) << all(check(slice(1, name253)));
  const auto v = check(slice(1, name253 + "n"));
  expect_violation(v, "spec.nodeName");
  expect_violation(v, "spec.pool.name");
  ResourceSlice pool = slice(1);
  pool.pool_name = "a/b.c";
  EXPECT_TRUE(check(pool).empty());
  pool.pool_name = "a//b";
  expect_violation(check(pool), "spec.pool.name");
  ResourceSlice no_node = slice(1);
  no_node.node_name = "";
  expect_violation(check(no_node), "spec.nodeName");
}

TEST(SliceValidator, GenerateNameIsNodeDashDriverDash) {
  ResourceSlice s = slice(1);
  s.generate_name = "node1-";
  expect_violation(check(s), "metadata.generateName");
}

TEST(SliceValidator, PoolGenerationAndSliceCount) {
  ResourceSlice s = slice(1);
  s.pool_generation = 0;
  EXPECT_TRUE(check(s).empty());
  s.pool_generation = -1;
  expect_violation(check(s), "spec.pool.generation");
  ResourceSlice zero = slice(1);
  zero.resource_slice_count = 0;
  expect_violation(check(zero), "spec.pool.resourceSliceCount");
  ResourceSlice claims_two = slice(1);
  claims_two.resource_slice_count = 2;
  expect_violation(check(claims_two), "spec.pool.resourceSliceCount");
  ResourceSlice a = slice(1);
  ResourceSlice b = slice(0);
  b.devices.push_back(device("other"));
  a.resource_slice_count = b.resource_slice_count = 2;
  EXPECT_TRUE(check({a, b}).empty()) << all(check({a, b}));
  b.pool_generation = 2;
  expect_violation(check({a, b}), "spec.pool.generation");
}

TEST(SliceValidator, CounterSetsPerSliceEdge) {
  auto make = [](std::size_t sets) {
    ResourceSlice s = slice(0);
    for (std::size_t i = 0; i < sets; ++i) {
      s.shared_counters.push_back({"set-" + std::to_string(i), {{"memory", "1Gi"}}});
    }
    return s;
  };
  EXPECT_TRUE(check(make(8)).empty()) << all(check(make(8)));
  expect_violation(check(make(9)), "spec.sharedCounters");
}

TEST(SliceValidator, CountersPerSetAndPerConsumptionEdges) {
  EXPECT_TRUE(check(partitioned(1, 32)).empty()) << all(check(partitioned(1, 32)));
  expect_violation(check(partitioned(1, 33)), "spec.sharedCounters[0].counters");
  auto consume = partitioned(1, 33);
  consume[0].shared_counters[0].counters.erase("c32");
  auto& use = consume[1].devices[0].consumes_counters[0].counters;
  for (int i = 0; i < 32; ++i)
    use["c" + std::to_string(i)] = "1";
  EXPECT_TRUE(check(consume).empty()) << all(check(consume));
  consume[0].shared_counters[0].counters["c32"] = "1";
  use["c32"] = "1";
  expect_violation(check(consume), "consumesCounters[0].counters");
}

TEST(SliceValidator, ConsumptionsPerDeviceEdge) {
  auto s = partitioned(1);
  for (const char* name : {"set-b", "set-c"})
    s[0].shared_counters.push_back({name, {{"c0", "1"}}});
  s[1].devices[0].consumes_counters.push_back({"set-b", {{"c0", "1"}}});
  EXPECT_TRUE(check(s).empty()) << all(check(s));
  s[1].devices[0].consumes_counters.push_back({"set-c", {{"c0", "1"}}});
  expect_violation(check(s), "spec.devices[0].consumesCounters");
}

TEST(SliceValidator, CounterReferencesMustExistInThePool) {
  auto s = partitioned(1);
  s[1].devices[0].consumes_counters[0].counter_set = "missing";
  expect_violation(check(s), "consumesCounters[0].counterSet");
  auto c = partitioned(1);
  c[1].devices[0].consumes_counters[0].counters = {{"nope", "1"}};
  expect_violation(check(c), "consumesCounters[0].counters[\"nope\"]");
}

TEST(SliceValidator, SharedCountersAndDevicesNotInOneSliceAndNotBefore135) {
  auto s = partitioned(1);
  ResourceSlice both = s[1];
  both.shared_counters = s[0].shared_counters;
  both.resource_slice_count = 1;
  expect_violation(check(both), "spec");
  expect_violation(check(partitioned(1), V::k1_34), "spec.sharedCounters");
}

TEST(SliceValidator, RequestPolicies) {
  ResourceSlice s = slice(1);
  Device& d = s.devices[0];
  d.allow_multiple_allocations = true;
  d.capacity["memory"] = {"80Gi", RequestPolicy{"1Gi", "1Gi", "", "1Gi", {}}};
  d.capacity["cores"] = {"100", RequestPolicy{"1", "1", "100", "1", {}}};
  EXPECT_TRUE(check(s).empty()) << all(check(s));

  ResourceSlice not_shared = s;
  not_shared.devices[0].allow_multiple_allocations = false;
  expect_violation(check(not_shared), "capacity[\"memory\"].requestPolicy");

  ResourceSlice below = s;
  below.devices[0].capacity["cores"].request_policy->default_value = "0";
  expect_violation(check(below), "capacity[\"cores\"].requestPolicy.default");

  ResourceSlice over = s;
  over.devices[0].capacity["cores"].request_policy->max = "101";
  expect_violation(check(over), "capacity[\"cores\"].requestPolicy.validRange.max");

  ResourceSlice step = s;
  step.devices[0].capacity["memory"].request_policy->default_value = "1536Mi";
  expect_violation(check(step), "capacity[\"memory\"].requestPolicy.default");

  ResourceSlice values = slice(1);
  values.devices[0].allow_multiple_allocations = true;
  RequestPolicy ten{"1", "", "", "", {}};
  for (int i = 1; i <= 10; ++i)
    ten.valid_values.push_back(std::to_string(i));
  values.devices[0].capacity["cores"] = {"100", ten};
  EXPECT_TRUE(check(values).empty()) << all(check(values));
  values.devices[0].capacity["cores"].request_policy->valid_values.push_back("11");
  expect_violation(check(values), "requestPolicy.validValues");

  ResourceSlice missing = slice(1);
  missing.devices[0].allow_multiple_allocations = true;
  missing.devices[0].capacity["cores"] = {"100", RequestPolicy{"5", "", "", "", {"1", "2"}}};
  expect_violation(check(missing), "requestPolicy.default");

  ResourceSlice bad_quantity = slice(1);
  bad_quantity.devices[0].capacity["memory"] = {"80 GB", std::nullopt};
  expect_violation(check(bad_quantity), "capacity[\"memory\"].value");
}

TEST(SliceValidator, TaintsPerDeviceEdge) {
  ResourceSlice at = slice(1);
  for (int i = 0; i < 16; ++i) {
    at.devices[0].taints.push_back({"nodetopo.dev/t" + std::to_string(i), "x", "NoSchedule"});
  }
  EXPECT_TRUE(check(at).empty()) << all(check(at));
  ResourceSlice over = at;
  over.devices[0].taints.push_back({"nodetopo.dev/t16", "x", "NoSchedule"});
  expect_violation(check(over), "spec.devices[0].taints");
  ResourceSlice effect = slice(1);
  effect.devices[0].taints.push_back({"nodetopo.dev/t", "", "PreferNoSchedule"});
  expect_violation(check(effect), "taints[0].effect");
}

TEST(SliceValidator, PciBusIdOnlyFrom136) {
  ResourceSlice s = slice(1);
  s.devices[0].attributes["resource.kubernetes.io/pciBusID"] =
      AttributeValue::of_string("0000:1b:00.0");
  EXPECT_TRUE(check(s, V::k1_36).empty());
  expect_violation(check(s, V::k1_35), "resource.kubernetes.io/pciBusID");
}

}  // namespace
}  // namespace nodetopo::exporters::dra
