// Writes one file per Kubernetes object kind nodetopo renders, from hand-built topologies, for
// the independent validator (tests/validate/validate.mjs): ResourceSlices for every supported
// version and both sharing modes (YAML and JSON), a multi-slice pool, the NodeFeature, the
// NodeResourceTopology and the Node label patch.
//
//   k8s_render_samples DIR
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nodetopo/exporters/node_labels.hpp>
#include <nodetopo/exporters/nrt.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/exporters/yaml_emit.hpp>

#include "test_topologies.hpp"

namespace {

using namespace nodetopo;
using namespace nodetopo::exporters;

bool write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) std::cerr << "cannot write " << path << "\n";
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: k8s_render_samples DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const Topology dgx = test::make_dgx({.fabric = true});
  bool ok = true;
  for (auto version : {dra::K8sVersion::k1_34, dra::K8sVersion::k1_35, dra::K8sVersion::k1_36}) {
    for (auto mode : {SharingMode::kNone, SharingMode::kConsumable, SharingMode::kPartitionable}) {
      if (mode == SharingMode::kPartitionable && version < dra::K8sVersion::k1_35) continue;
      dra::SliceOptions o;
      o.node_name = "dgx-01";
      o.node_uid = "6c1b2a7e-3f9d-4e1a-8b2c-5d6e7f8a9b0c";
      o.version = version;
      o.sharing.mode = mode;
      auto slices = dra::build_resource_slices(dgx, o);
      if (!slices) {
        std::cerr << slices.error().describe() << "\n";
        return 1;
      }
      const std::string stem =
          "resourceslices-" + dra::to_string(version) + "-" + std::string(to_string(mode));
      ok = write(dir / (stem + ".yaml"), dra::render_slices_yaml(*slices)) && ok;
      ok = write(dir / (stem + ".json"), dra::render_slices_json(*slices)) && ok;
    }
  }
  dra::SliceOptions farm;
  farm.node_name = "nic-farm";
  auto many = dra::build_resource_slices(test::make_nic_farm(300), farm);
  if (!many) return 1;
  ok = write(dir / "resourceslices-split.yaml", dra::render_slices_yaml(*many)) && ok;

  const LabelMap labels = compute_labels(dgx);
  auto feature = labels_to_nodefeature(labels, "dgx-01", "node-feature-discovery");
  auto nrt = render_nrt(dgx, "dgx-01");
  if (!feature || !nrt) return 1;
  ok = write(dir / "nodefeature.yaml", to_yaml(*feature)) && ok;
  ok = write(dir / "nrt.yaml", to_yaml(*nrt)) && ok;
  ok = write(dir / "nrt.json", nrt->dump(2) + "\n") && ok;
  ok = write(dir / "labels.patch.json", render_labels_patch(labels)) && ok;
  return ok ? 0 : 1;
}
