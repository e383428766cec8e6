// Accelerator probe: classification of PCI functions, sysfs identity fields, and the trimmed
// POWER9 capture whose GPUs have no readable vendor id.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nodetopo/probes/accelerator_probe.hpp>

#include "captures.hpp"
#include "devices_fake_host.hpp"
#include "discover.hpp"

namespace nodetopo::test {
namespace {

using ::testing::IsEmpty;

const AcceleratorInfo& accel(const Topology& topo, const std::string& id) {
  const auto index = topo.find(id);
  if (!index) throw std::runtime_error("no " + id);
  return topo.node(*index).as<AcceleratorInfo>();
}

std::vector<std::string> ids_of_kind(const Topology& topo, NodeKind kind) {
  std::vector<std::string> out;
  for (NodeIndex i : topo.nodes_of_kind(kind))
    out.push_back(topo.node(i).id);
  return out;
}

TEST(AcceleratorProbe, NvidiaGpusAndNvSwitchesAreClassifiedByClassAndId) {
  FakeHost host;
  host.add_pci({"0000:1b:00.0", 0x10de, 0x2330, 0x030200, "nvidia"});  // H100 SXM, 3D
  host.add_pci({"0000:1c:00.0", 0x10de, 0x1eb8, 0x030000, ""});        // T4 as VGA, no driver
  host.add_pci({"0000:1c:00.1", 0x10de, 0x10fa, 0x040300, ""});        // a GPU's HDMI audio
  host.add_pci({"0000:05:00.0", 0x10de, 0x22a3, 0x068000, "nvidia"});  // NVSwitch gen 3
  host.add_pci({"0000:06:00.0", 0x10de, 0x1234, 0x068000, ""});        // some other NVIDIA bridge
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  EXPECT_EQ(ids_of_kind(topo, NodeKind::kAccelerator),
            (std::vector<std::string>{"accelerator/0000:1b:00.0", "accelerator/0000:1c:00.0"}));
  EXPECT_EQ(ids_of_kind(topo, NodeKind::kNvSwitch),
            std::vector<std::string>{"nvswitch/0000:05:00.0"});
  EXPECT_EQ(parent_id(topo, "accelerator/0000:1b:00.0"), "pci/0000:1b:00.0");
  EXPECT_EQ(parent_id(topo, "nvswitch/0000:05:00.0"), "pci/0000:05:00.0");

  const auto& h100 = accel(topo, "accelerator/0000:1b:00.0");
  EXPECT_EQ(h100.vendor, AcceleratorVendor::kNvidia);
  EXPECT_EQ(h100.product, "NVIDIA H100 SXM5 80GB");  // the project's table
  EXPECT_FALSE(h100.index);                          // NVML's to give
  EXPECT_EQ(accel(topo, "accelerator/0000:1c:00.0").product,
            "NVIDIA Tesla T4");  // pci.ids "TU104GL [Tesla T4]"
  EXPECT_EQ(accel(topo, "nvswitch/0000:05:00.0").product, "NVIDIA NVSwitch (3rd gen)");
  EXPECT_EQ(report_of(d, "accelerator").status, ProbeStatus::kOk);
}

TEST(AcceleratorProbe, AmdNeedsADrmOrKfdNodeAndReadsVram) {
  FakeHost host;
  const std::string mi300 = host.add_pci({"0000:05:00.0", 0x1002, 0x74a1, 0x120000, "amdgpu"});
  host.write(mi300 + "/drm/card1/dev", "226:1\n");
  host.write(mi300 + "/mem_info_vram_total", "206141652992\n");
  host.write(mi300 + "/serial_number", "692251001234\n");
  host.add_pci({"0000:06:00.0", 0x1002, 0x74a1, 0x120000, ""});  // no driver: no DRM, no KFD
  host.add_pci({"0000:00:00.0", 0x1022, 0x14d8, 0x060000, ""});  // AMD host bridge (1022)
  host.add_pci({"0000:07:00.1", 0x1002, 0xab38, 0x040300, "snd_hda_intel"});  // HDMI audio
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  EXPECT_EQ(ids_of_kind(topo, NodeKind::kAccelerator),
            std::vector<std::string>{"accelerator/0000:05:00.0"});
  const auto& a = accel(topo, "accelerator/0000:05:00.0");
  EXPECT_EQ(a.vendor, AcceleratorVendor::kAmd);
  EXPECT_EQ(a.product, "AMD Instinct MI300X");
  EXPECT_EQ(a.memory_bytes, 206141652992U);
  EXPECT_EQ(a.serial, "692251001234");
  EXPECT_EQ(a.architecture, "");  // only KFD tells it
  EXPECT_FALSE(a.index);
}

TEST(AcceleratorProbe, GarbageVramSizeIsReported) {
  FakeHost host;
  const std::string dev = host.add_pci({"0000:05:00.0", 0x1002, 0x740f, 0x038000, "amdgpu"});
  host.write(dev + "/drm/card0/dev", "226:0\n");
  host.write(dev + "/mem_info_vram_total", "lots\n");
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(accel(d.topology, "accelerator/0000:05:00.0").memory_bytes, 0U);
  const auto& warnings = report_of(d, "accelerator").warnings;
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_THAT(warnings[0], ::testing::HasSubstr("mem_info_vram_total"));
}

TEST(AcceleratorProbe, IntelGpusNeedI915OrXe) {
  FakeHost host;
  const std::string pvc = host.add_pci({"0000:29:00.0", 0x8086, 0x0bd5, 0x038000, "i915"});
  host.write(pvc + "/drm/card1/dev", "226:1\n");
  host.write(pvc + "/drm/renderD129/dev", "226:129\n");
  host.add_pci({"0000:3a:00.0", 0x8086, 0x56c0, 0x038000, "xe"});
  host.add_pci({"0000:00:02.0", 0x8086, 0x0102, 0x030000, ""});        // no driver
  host.add_pci({"0000:00:1f.6", 0x8086, 0x15bb, 0x020000, "e1000e"});  // a NIC
  const auto d = run(host.sys_root(), device_probes());
  const Topology& topo = d.topology;
  EXPECT_EQ(ids_of_kind(topo, NodeKind::kAccelerator),
            (std::vector<std::string>{"accelerator/0000:29:00.0", "accelerator/0000:3a:00.0"}));
  const auto& a = accel(topo, "accelerator/0000:29:00.0");
  EXPECT_EQ(a.vendor, AcceleratorVendor::kIntel);
  EXPECT_EQ(a.product, "Intel Ponte Vecchio XT (Data Center GPU Max 1550)");
  EXPECT_EQ(a.index, 1U);  // DRM card minor
  EXPECT_FALSE(accel(topo, "accelerator/0000:3a:00.0").index);
}

TEST(AcceleratorProbe, HabanaGaudi) {
  FakeHost host;
  const std::string g2 = host.add_pci({"0000:33:00.0", 0x1da3, 0x1020, 0x120000, "habanalabs"});
  host.write(g2 + "/accel/accel3/dev", "261:3\n");
  host.add_pci({"0000:34:00.0", 0x1da3, 0x1020, 0x020000, ""});  // not a processing accelerator
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(ids_of_kind(d.topology, NodeKind::kAccelerator),
            std::vector<std::string>{"accelerator/0000:33:00.0"});
  const auto& a = accel(d.topology, "accelerator/0000:33:00.0");
  EXPECT_EQ(a.vendor, AcceleratorVendor::kHabana);
  EXPECT_EQ(a.product, "Habana Gaudi2 AI Training Accelerator");
  EXPECT_EQ(a.index, 3U);
}

TEST(AcceleratorProbe, SriovVirtualFunctionsOfAGpuAreNotAccelerators) {
  FakeHost host;
  const std::string pf = host.add_pci({"0000:3b:00.0", 0x10de, 0x20b5, 0x030200, "nvidia"});
  host.write(pf + "/sriov_totalvfs", "16\n");
  host.write(pf + "/sriov_numvfs", "1\n");
  const std::string vf = host.add_pci({"0000:3b:00.4", 0x10de, 0x20b5, 0x030200, "nvidia"});
  host.link(vf + "/physfn", pf);
  const auto d = run(host.sys_root(), device_probes());
  EXPECT_EQ(ids_of_kind(d.topology, NodeKind::kAccelerator),
            std::vector<std::string>{"accelerator/0000:3b:00.0"});
  EXPECT_EQ(accel(d.topology, "accelerator/0000:3b:00.0").product, "NVIDIA A100 PCIe 80GB");
}

TEST(AcceleratorProbe, GfxTargetNames) {
  EXPECT_EQ(probes::gfx_target_name(90010), "gfx90a");
  EXPECT_EQ(probes::gfx_target_name(90402), "gfx942");
  EXPECT_EQ(probes::gfx_target_name(90008), "gfx908");
  EXPECT_EQ(probes::gfx_target_name(110000), "gfx1100");
  EXPECT_EQ(probes::gfx_target_name(100300), "gfx1030");
  EXPECT_EQ(probes::gfx_target_name(0), "");
  EXPECT_EQ(probes::gfx_target_name(91700), "");  // minor 17 is no hex digit
}

// The POWER9 capture's GPU directories hold only `class` and `local_cpus`: no vendor, device or
// driver. Without a vendor no accelerator is claimed; the PCI functions stay (vendor 0000).
TEST(AcceleratorCaptures, GpusWithoutVendorFilesAreNotClassified) {
  auto root = probes::SysRoot::open(capture_root("nvidiagpunumanodes"),
                                    probes::SysRoot::Liveness::kCapture);
  ASSERT_TRUE(root);
  const auto d = ::nodetopo::test::discover(root.value());
  EXPECT_THAT(d.topology.nodes_of_kind(NodeKind::kAccelerator), IsEmpty());
  const auto functions = d.topology.nodes_of_kind(NodeKind::kPciDevice);
  ASSERT_EQ(functions.size(), 6U);
  for (NodeIndex i : functions) {
    const auto& f = d.topology.node(i).as<PciFunctionInfo>();
    EXPECT_EQ(f.vendor_id, 0);
    EXPECT_EQ(f.class_code >> 8, 0x0300U);
  }
  EXPECT_EQ(report_of(d, "accelerator").status, ProbeStatus::kOk);
}

}  // namespace
}  // namespace nodetopo::test
