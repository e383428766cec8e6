// Properties of the allocator on generated inputs: the result does not depend on the order of
// the slices in the input (upstream is order-independent there as long as the pool order is
// fixed; fit fixes it by sorting pools and slices by name), nor does the allocation's node
// selector, and claims already allocated on the node never make a claim fit that did not fit
// without them. Some pools are network-attached (node selectors, matching the Node or not).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nodetopo/fit/allocator.hpp>
#include <nodetopo/fit/node_selector.hpp>

namespace nodetopo::fit {
namespace {

AttributeValue int_attr(std::int64_t v) {
  return {AttributeValue::Type::kInt, v, false, ""};
}

struct Generated {
  Inputs inputs;
  std::vector<DeviceId> all_devices;
};

Generated generate(std::mt19937& rng) {
  Generated g;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  DeviceClass any{"class-a", {R"(device.driver == "driver-a")"}, {}};
  DeviceClass numa0{"class-numa0",
                    {R"(device.driver == "driver-a" && device.attributes["driver-a"].numa == 0)"},
                    {}};
  g.inputs.classes = {any, numa0};
  const int pools = 1 + pick(3);
  for (int p = 0; p < pools; ++p) {
    const int slices = 1 + pick(2);
    // Some pools are network-attached: a node selector on the region instead of the node name,
    // matching the node (region-1) or not (region-2).
    const int selection = pick(4);
    for (int s = 0; s < slices; ++s) {
      ResourceSlice sl;
      sl.name = "pool" + std::to_string(p) + "-slice" + std::to_string(s);
      sl.driver = "driver-a";
      sl.pool = "pool-" + std::to_string(p);
      sl.generation = 1;
      sl.slice_count = slices;
      if (selection == 0) {
        sl.node_selector = NodeSelector{{{{{"region", "In", {"region-1"}}}, {}}}};
      } else if (selection == 1) {
        sl.node_selector = NodeSelector{{{{{"region", "In", {"region-2"}}}, {}}}};
      } else {
        sl.node_name = "node-1";
      }
      const int devices = 1 + pick(4);
      for (int d = 0; d < devices; ++d) {
        Device dev;
        dev.name = "dev-" + std::to_string(s) + "-" + std::to_string(d);
        dev.attributes["numa"] = int_attr(pick(2));
        dev.attributes["switch"] = int_attr(pick(3));
        sl.devices.push_back(dev);
        g.all_devices.push_back({"driver-a", sl.pool, dev.name});
      }
      g.inputs.slices.push_back(std::move(sl));
    }
  }
  const int claims = 1 + pick(2);
  for (int c = 0; c < claims; ++c) {
    ResourceClaim claim;
    claim.name = "claim-" + std::to_string(c);
    const int requests = 1 + pick(2);
    for (int r = 0; r < requests; ++r) {
      DeviceRequest req;
      req.name = "req-" + std::to_string(r);
      ExactRequest ex;
      ex.name = req.name;
      ex.device_class = pick(3) == 0 ? "class-numa0" : "class-a";
      ex.count = 1 + pick(3);
      req.exactly = ex;
      claim.requests.push_back(req);
    }
    if (pick(2) == 0) {
      DeviceConstraint k;
      k.match_attribute = pick(2) == 0 ? "driver-a/numa" : "driver-a/switch";
      claim.constraints.push_back(k);
    }
    g.inputs.claims.push_back(std::move(claim));
  }
  return g;
}

std::vector<std::string> flatten(const AllocateOutcome& o) {
  std::vector<std::string> out;
  for (const ClaimResult& c : o.claims)
    for (const DeviceResult& d : c.devices)
      out.push_back(c.claim + " " + d.request + " " + d.id.to_string());
  for (const ClaimResult& c : o.claims)
    out.push_back(c.claim + " node selector " +
                  (c.node_selector ? describe(*c.node_selector) : std::string("none")));
  return out;
}

AllocateOptions options() {
  AllocateOptions o;
  o.node = "node-1";
  o.node_object = Node{"node-1", {{"region", "region-1"}}};
  o.features = Features::for_version(K8sVersion::k1_35);
  return o;
}

TEST(AllocatorProperties, SliceOrderDoesNotMatter) {
  std::mt19937 rng(20261201);
  int fits = 0;
  for (int i = 0; i < 200; ++i) {
    Generated g = generate(rng);
    const AllocateOutcome base = allocate(g.inputs, options());
    fits += base.status == AllocateOutcome::Status::kFits ? 1 : 0;
    for (int k = 0; k < 3; ++k) {
      Inputs shuffled = g.inputs;
      std::shuffle(shuffled.slices.begin(), shuffled.slices.end(), rng);
      const AllocateOutcome again = allocate(shuffled, options());
      ASSERT_EQ(again.status, base.status) << "case " << i;
      ASSERT_EQ(flatten(again), flatten(base)) << "case " << i;
    }
  }
  // The generator must produce both outcomes, or the property says little.
  EXPECT_GT(fits, 20);
  EXPECT_LT(fits, 180);
}

TEST(AllocatorProperties, AllocatedClaimsNeverMakeAClaimFit) {
  std::mt19937 rng(4242);
  int checked = 0;
  for (int i = 0; i < 120; ++i) {
    Generated g = generate(rng);
    std::vector<DeviceId> order = g.all_devices;
    std::shuffle(order.begin(), order.end(), rng);
    bool fitted = true;
    // Allocate more and more devices elsewhere: once the claims stop fitting, they never fit again.
    for (std::size_t n = 0; n <= order.size(); ++n) {
      Inputs in = g.inputs;
      for (std::size_t k = 0; k < n; ++k)
        in.allocated.push_back(
            {order[k].driver, order[k].pool, order[k].device, false, {}, "other"});
      const bool now = allocate(in, options()).status == AllocateOutcome::Status::kFits;
      ASSERT_FALSE(now && !fitted)
          << "case " << i << ": fits again with " << n << " devices in use";
      fitted = now;
      ++checked;
    }
  }
  EXPECT_GT(checked, 120);
}

}  // namespace
}  // namespace nodetopo::fit
