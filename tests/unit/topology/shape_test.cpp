// The shape fingerprint (SHA-256 itself is tested in tests/unit/base), and the shape rules:
// identical machines with different identities share a shape; a different wiring or different parts
// do not.
#include <gtest/gtest.h>

#include <nodetopo/topology/shape.hpp>

#include "test_topologies.hpp"

namespace nodetopo {
namespace {

TEST(Shape, IsTwelveHexDigitsOfTheDescriptionsSha256) {
  const ShapeFingerprint s = compute_shape(test::make_dgx());
  ASSERT_EQ(s.hash.size(), 12U);
  EXPECT_EQ(s.hash, s.sha256.substr(0, 12));
  EXPECT_EQ(s.sha256, sha256_hex(s.description));
  EXPECT_EQ(s.description.rfind(kShapeFormat, 0), 0U);
  EXPECT_EQ(compute_shape(test::make_dgx()).description, s.description);  // deterministic
}

TEST(Shape, IdenticalMachinesWithDifferentIdentitiesShareAShape) {
  const ShapeFingerprint a = compute_shape(test::make_dgx({.identity = 0}));
  const ShapeFingerprint b = compute_shape(test::make_dgx({.identity = 7}));
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.hash, b.hash);
}

TEST(Shape, IgnoresBusNumbersLinkStateVfsAndDriverVersion) {
  const std::string base = compute_shape(test::make_dgx()).hash;
  EXPECT_EQ(compute_shape(test::make_dgx({.bus_offset = 3})).hash, base);
  EXPECT_EQ(compute_shape(test::make_dgx({.links_up = false})).hash, base);
  EXPECT_EQ(compute_shape(test::make_dgx({.nic0_vfs = 7})).hash, base);
  EXPECT_EQ(compute_shape(test::make_dgx({.driver_version = "550.54.15"})).hash, base);
}

TEST(Shape, DescriptionHoldsNoIdentities) {
  const std::string d = compute_shape(test::make_dgx({.identity = 5})).description;
  for (const char* identity :
       {"GPU-", "ibp", "mlx5_", "eno", "0000:", "00:00:", "a088", "DGX", "1654922"}) {
    EXPECT_EQ(d.find(identity), std::string::npos) << identity << " in\n" << d;
  }
  // But it does describe the parts and the wiring.
  EXPECT_NE(d.find("\"NVIDIA H100 80GB HBM3\""), std::string::npos);
  EXPECT_NE(d.find("device 15b3:1021 class=0207"), std::string::npos);
  EXPECT_NE(d.find("nvlink gpu0 sw0 x5"), std::string::npos) << d;
  EXPECT_NE(d.find("numa 1: 21 10"), std::string::npos);
}

TEST(Shape, MovingOneNicBehindAnotherSwitchChangesTheShape) {
  EXPECT_NE(compute_shape(test::make_dgx()).hash,
            compute_shape(test::make_dgx({.move_nic0 = true})).hash);
}

TEST(Shape, DifferentPartsOrFabricChangeTheShape) {
  const std::string base = compute_shape(test::make_dgx()).hash;
  EXPECT_NE(compute_shape(test::make_dgx({.gpus = 6})).hash, base);
  EXPECT_NE(compute_shape(test::make_dgx({.nvlink = false})).hash, base);
  EXPECT_NE(compute_shape(test::make_dgx({.gpu_memory = 150ULL << 30})).hash, base);
}

}  // namespace
}  // namespace nodetopo
