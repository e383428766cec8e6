// The shape fingerprint: SHA-256 against FIPS 180-4 vectors (and sha256sum at the padding
// boundaries), and the shape rules: identical machines with different identities share a shape;
// a different wiring or different parts do not.
#include <gtest/gtest.h>

#include <nodetopo/topology/shape.hpp>

#include "../exporters/k8s_test_topology.hpp"

namespace nodetopo {
namespace {

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundariesMatchSha256sum) {
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, hex] : cases) {
    EXPECT_EQ(sha256_hex(std::string(n, 'a')), hex) << n << " bytes";
  }
}

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
