// The JSON model and the text tree of a hand-built topology that uses every node kind and the
// optional fields both set and unset; format_bytes; the atomic file sink.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/text_tree.hpp>

#include "test_support.hpp"

namespace nodetopo::exporters {
namespace {

namespace fs = std::filesystem;

CpuSet cpus(std::uint32_t first, std::uint32_t last) {
  CpuSet s;
  s.insert_range(first, last);
  return s;
}

NodeIndex add(TopologyBuilder& b, NodeKind kind, const std::string& id, NodeIndex parent,
              NodePayload payload) {
  auto r = b.add(kind, id, parent, std::move(payload));
  if (!r) throw std::runtime_error(r.error().describe());
  return *r;
}

// A small accelerator node: one package, a DRAM and a GPU-memory NUMA node, a root port with a
// GPU (and its VF), an NVSwitch, a NIC with its netdev and RDMA device, an unnamed device.
struct Sample {
  Topology topology;
  std::vector<ProbeReport> reports;
};

Sample sample() {
  TopologyBuilder b;
  auto& m = b.node(b.root()).as<MachineInfo>();
  m.architecture = "x86_64";
  m.product_name = "Test Box";
  m.board_vendor = "Acme";
  m.os_release = "6.1.0";
  m.memory_bytes = 68719476736 + 1610612736;

  PackageInfo pkg;
  pkg.os_index = 0;
  pkg.cpus = cpus(0, 3);
  pkg.cpu_vendor = "GenuineIntel";
  pkg.cpu_model = "Xeon Test";
  const NodeIndex p0 = add(b, NodeKind::kPackage, "package/0", b.root(), pkg);

  NumaInfo n0;
  n0.os_index = 0;
  n0.cpus = cpus(0, 3);
  n0.memory_bytes = 68719476736;
  const NodeIndex numa0 = add(b, NodeKind::kNumaNode, "numa/0", p0, n0);
  NumaInfo n1;
  n1.os_index = 1;
  n1.memory_bytes = 1610612736;
  n1.subtype = "GPUMemory";
  n1.device = PciAddress{0, 1, 0, 0};
  const NodeIndex numa1 = add(b, NodeKind::kNumaNode, "numa/1", p0, n1);

  HostBridgeInfo hb;
  hb.domain = 0;
  hb.bus = 0;
  hb.root_name = "pci0000:00";
  hb.numa_node = 0;
  const NodeIndex host = add(b, NodeKind::kHostBridge, "hostbridge/pci0000:00", numa0, hb);

  PciFunctionInfo port;
  port.address = {0, 0, 1, 0};
  port.vendor_id = 0x8086;
  port.device_id = 0x2030;
  port.class_code = 0x060400;
  port.revision = 4;
  port.vendor_name = "Intel Corporation";
  port.class_name = "PCI bridge";
  port.driver = "pcieport";
  port.numa_node = 0;
  port.local_cpus = cpus(0, 3);
  port.link_current = {16000, 16};
  port.link_max = {16000, 16};
  port.port_type = PciePortType::kRootPort;
  port.secondary_bus = 1;
  port.subordinate_bus = 2;
  port.sysfs_path = "sys/devices/pci0000:00/0000:00:01.0";
  port.pcie_root = "pci0000:00";
  const NodeIndex bridge = add(b, NodeKind::kPciBridge, "pci/0000:00:01.0", host, port);

  PciFunctionInfo gpu;
  gpu.address = {0, 1, 0, 0};
  gpu.vendor_id = 0x10de;
  gpu.device_id = 0x2335;
  gpu.subsystem_vendor_id = 0x10de;
  gpu.subsystem_device_id = 0x18be;
  gpu.class_code = 0x030200;
  gpu.revision = 0xa1;
  gpu.vendor_name = "NVIDIA Corporation";
  gpu.device_name = "H200 SXM 141GB";
  gpu.class_name = "3D controller";
  gpu.driver = "nvidia";
  gpu.numa_node = 0;
  gpu.local_cpus = cpus(0, 3);
  gpu.link_current = {8000, 16};
  gpu.link_max = {32000, 16};
  gpu.port_type = PciePortType::kEndpoint;
  gpu.sysfs_path = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
  gpu.pcie_root = "pci0000:00";
  gpu.sriov_total_vfs = 4;
  gpu.sriov_num_vfs = 1;
  const NodeIndex gpu_fn = add(b, NodeKind::kPciDevice, "pci/0000:01:00.0", bridge, gpu);

  PciFunctionInfo vf;
  vf.address = {0, 1, 0, 4};
  vf.vendor_id = 0x10de;
  vf.device_id = 0x2335;
  vf.class_code = 0x030200;
  vf.pcie_root = "pci0000:00";
  vf.sysfs_path = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.4";
  vf.is_virtual_function = true;
  vf.physical_function = PciAddress{0, 1, 0, 0};
  add(b, NodeKind::kPciDevice, "pci/0000:01:00.4", bridge, vf);

  PciFunctionInfo odd;  // no names, no NUMA node, no link: the minimal function
  odd.address = {0, 0, 0x1f, 7};
  odd.vendor_id = 0x1234;
  odd.device_id = 0xabcd;
  odd.class_code = 0xff0000;
  odd.pcie_root = "pci0000:00";
  odd.sysfs_path = "sys/devices/pci0000:00/0000:00:1f.7";
  add(b, NodeKind::kPciDevice, "pci/0000:00:1f.7", host, odd);

  AcceleratorInfo acc;
  acc.vendor = AcceleratorVendor::kNvidia;
  acc.product = "NVIDIA H200";
  acc.architecture = "hopper";
  acc.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  acc.memory_bytes = 150323855360;
  acc.driver_version = "550.54.15";
  acc.index = 0;
  acc.fabric_cluster_uuid = "cluster-1";
  acc.fabric_clique_id = 3;
  const NodeIndex accel = add(b, NodeKind::kAccelerator, "accel/0", gpu_fn, acc);
  AcceleratorInfo sw;
  sw.vendor = AcceleratorVendor::kNvidia;
  const NodeIndex nvswitch = add(b, NodeKind::kNvSwitch, "nvswitch/0", host, sw);

  NetDeviceInfo net;
  net.name = "ens1f0np0";
  net.mac = "02:00:00:00:00:01";
  net.mtu = 9000;
  net.speed_mbps = 400000;
  net.operstate = "up";
  net.driver = "mlx5_core";
  net.link_type = "ether";
  add(b, NodeKind::kNetDevice, "net/ens1f0np0", gpu_fn, net);
  RdmaDeviceInfo rdma;
  rdma.name = "mlx5_0";
  rdma.node_guid = "0000:0000:0000:0001";
  rdma.ports.push_back({1, "ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand", ""});
  add(b, NodeKind::kRdmaDevice, "rdma/mlx5_0", gpu_fn, rdma);

  b.add_link({LinkKind::kNumaDistance, numa0, numa0, 10, 0});
  b.add_link({LinkKind::kNumaDistance, numa0, numa1, 80, 0});
  b.add_link({LinkKind::kNumaDistance, numa1, numa1, 10, 0});  // 1 -> 0 unknown
  b.add_link({LinkKind::kNvLink, accel, nvswitch, 18, 900000});

  Sample s{std::move(b).freeze(), {}};
  s.reports.push_back({"cpu", ProbeStatus::kOk, {}, ""});
  s.reports.push_back({"pci",
                       ProbeStatus::kWarnings,
                       {"sys/devices/pci0000:00/0000:00:1f.7/numa_node: expected a NUMA node "
                        "number or -1, got 'x' (attribute ignored)"},
                       ""});
  s.reports.push_back({"nvml", ProbeStatus::kUnavailable, {}, "libnvidia-ml.so.1 not found"});
  s.reports.push_back({"kfd", ProbeStatus::kFailed, {}, "sys/class/kfd: permission denied"});
  return s;
}

const nlohmann::json* find_id(const nlohmann::json& node, const std::string& id) {
  if (node.at("id") == id) return &node;
  if (node.contains("children")) {
    for (const auto& c : node.at("children")) {
      if (const auto* f = find_id(c, id)) return f;
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// JSON model

TEST(JsonModel, MatchesTheGolden) {
  const Sample s = sample();
  EXPECT_EQ(
      test::compare_golden("exporters/sample-model.json", render_json_model(s.topology, s.reports)),
      "");
}

TEST(JsonModel, IsDeterministicAndEndsWithANewline) {
  const Sample a = sample();
  const Sample b = sample();
  const std::string ja = render_json_model(a.topology, a.reports);
  EXPECT_EQ(ja, render_json_model(b.topology, b.reports));
  ASSERT_FALSE(ja.empty());
  EXPECT_EQ(ja.back(), '\n');
}

// `topo dump --format json` streams the model; its bytes are the rendered document's, in order.
TEST(JsonModel, StreamedIsTheRenderedDocument) {
  const Sample s = sample();
  std::string streamed;
  std::size_t pieces = 0;
  write_json_model(s.topology, s.reports, [&](std::string_view piece) {
    streamed += piece;
    ++pieces;
  });
  EXPECT_EQ(streamed, render_json_model(s.topology, s.reports));
  EXPECT_EQ(pieces, 1U) << "a document under one chunk comes in one piece";
}

TEST(JsonModel, TopLevelFields) {
  const Sample s = sample();
  const nlohmann::json doc = nlohmann::json::parse(render_json_model(s.topology, s.reports));
  EXPECT_EQ(doc.at("schema_version"), kModelSchemaVersion);
  EXPECT_EQ(doc.at("machine").at("kind"), "machine");
  EXPECT_EQ(doc.at("links").size(), 4U);
  ASSERT_EQ(doc.at("probes").size(), 4U);
  EXPECT_EQ(doc.at("probes")[0], (nlohmann::json{{"name", "cpu"}, {"status", "ok"}}));
  EXPECT_EQ(doc.at("probes")[1].at("warnings").size(), 1U);
  EXPECT_EQ(doc.at("probes")[2].at("status"), "unavailable");
  EXPECT_EQ(doc.at("probes")[3].at("error"), "sys/class/kfd: permission denied");
}

TEST(JsonModel, LinksNameNodesById) {
  const Sample s = sample();
  const nlohmann::json doc = nlohmann::json::parse(render_json_model(s.topology, s.reports));
  bool nvlink = false;
  for (const auto& l : doc.at("links")) {
    if (l.at("kind") == "nvlink") {
      nvlink = true;
      EXPECT_EQ(l.at("from"), "accel/0");
      EXPECT_EQ(l.at("to"), "nvswitch/0");
      EXPECT_EQ(l.at("value"), 18);
      EXPECT_EQ(l.at("bandwidth_mbps"), 900000);
    } else {
      EXPECT_EQ(l.at("kind"), "numa_distance");
      EXPECT_FALSE(l.contains("bandwidth_mbps")) << "zero bandwidth is omitted";
    }
  }
  EXPECT_TRUE(nvlink);
}

TEST(JsonModel, OptionalFieldsAreOmittedNotNull) {
  const Sample s = sample();
  const nlohmann::json doc = nlohmann::json::parse(render_json_model(s.topology, s.reports));
  const nlohmann::json* odd = find_id(doc.at("machine"), "pci/0000:00:1f.7");
  ASSERT_NE(odd, nullptr);
  for (const char* absent : {"numa_node", "local_cpus", "link_current", "link_max", "port_type",
                             "secondary_bus", "driver", "vendor_name", "device_name", "class_name",
                             "virtual_function", "physical_function", "sriov_total_vfs"}) {
    EXPECT_FALSE(odd->contains(absent)) << absent;
  }
  EXPECT_EQ(odd->at("class"), "ff0000");
  EXPECT_EQ(odd->at("vendor_id"), "1234");
  EXPECT_EQ(odd->at("subsystem_vendor_id"), "0000");
  EXPECT_EQ(odd->at("address"), "0000:00:1f.7");
  EXPECT_EQ(odd->at("kind"), "pci_device");

  const nlohmann::json* gpu = find_id(doc.at("machine"), "pci/0000:01:00.0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->at("numa_node"), 0);
  EXPECT_EQ(gpu->at("link_current"),
            (nlohmann::json{{"speed_mts", 8000}, {"generation", 3}, {"width", 16}}));
  EXPECT_EQ(gpu->at("link_max").at("generation"), 5);
  EXPECT_EQ(gpu->at("sriov_num_vfs"), 1);
  const nlohmann::json* vf = find_id(doc.at("machine"), "pci/0000:01:00.4");
  ASSERT_NE(vf, nullptr);
  EXPECT_EQ(vf->at("virtual_function"), true);
  EXPECT_EQ(vf->at("physical_function"), "0000:01:00.0");

  const nlohmann::json* gpu_mem = find_id(doc.at("machine"), "numa/1");
  ASSERT_NE(gpu_mem, nullptr);
  EXPECT_EQ(gpu_mem->at("cpus"), "");
  EXPECT_EQ(gpu_mem->at("cpu_count"), 0);
  EXPECT_EQ(gpu_mem->at("device"), "0000:01:00.0");
  EXPECT_FALSE(find_id(doc.at("machine"), "numa/0")->contains("subtype"));
}

TEST(JsonModel, InvalidUtf8FromTheHostIsReplacedNotThrown) {
  TopologyBuilder b;
  b.node(b.root()).as<MachineInfo>().product_name = "Box \xff\xfe";
  const Topology t = std::move(b).freeze();
  std::string json;
  ASSERT_NO_THROW(json = render_json_model(t, {}));
  const nlohmann::json doc = nlohmann::json::parse(json);
  EXPECT_EQ(doc.at("machine").at("product_name"), "Box \xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(JsonModel, EmptyTopology) {
  const Topology t;
  const nlohmann::json doc = nlohmann::json::parse(render_json_model(t, {}));
  EXPECT_EQ(doc.at("machine").at("id"), "machine");
  EXPECT_FALSE(doc.at("machine").contains("children"));
  EXPECT_TRUE(doc.at("links").empty());
  EXPECT_TRUE(doc.at("probes").empty());
}

// ---------------------------------------------------------------------------------------------
// text tree

TEST(TextTree, MatchesTheGolden) {
  const Sample s = sample();
  EXPECT_EQ(
      test::compare_golden("exporters/sample-tree.txt", render_text_tree(s.topology, s.reports)),
      "");
}

TEST(TextTree, IndentsByDepthAndDescribesFunctions) {
  const Sample s = sample();
  const std::string text = render_text_tree(s.topology, s.reports);
  EXPECT_TRUE(text.starts_with("Machine x86_64 \"Test Box\" 65.5 GiB\n  Package 0: Xeon Test"))
      << text;
  EXPECT_NE(text.find("\n      Host bridge pci0000:00\n"), std::string::npos) << text;
  EXPECT_NE(text.find("        0000:00:01.0 PCI bridge (root_port) [bus 01-02]: Intel "
                      "Corporation [8086:2030] 16 GT/s x16 driver=pcieport numa=0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0000:01:00.0 3D controller: NVIDIA Corporation H200 SXM 141GB "
                      "[10de:2335] 8 GT/s x16 (max 32 GT/s x16) driver=nvidia numa=0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("0000:00:1f.7 class ff0000: [1234:abcd]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("0000:01:00.4 class 030200: [10de:2335] vf\n"), std::string::npos) << text;
  EXPECT_NE(text.find("NUMA node 1 (GPUMemory): 1.5 GiB, no CPUs, memory of 0000:01:00.0"),
            std::string::npos)
      << text;
}

TEST(TextTree, DistanceMatrixShowsUnknownEntries) {
  const Sample s = sample();
  const std::string text = render_text_tree(s.topology, s.reports);
  EXPECT_NE(text.find("\nNUMA distances:\n"
                      "           0     1\n"
                      "     0    10    80\n"
                      "     1     -    10\n"),
            std::string::npos)
      << text;
}

TEST(TextTree, ProbeSummaryListsOnlyUncleanProbes) {
  const Sample s = sample();
  const std::string text = render_text_tree(s.topology, s.reports);
  EXPECT_NE(text.find("\nProbes:\n  pci: warnings (1 warnings)\n    sys/devices/pci0000:00/"
                      "0000:00:1f.7/numa_node: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  nvml: unavailable: libnvidia-ml.so.1 not found\n"), std::string::npos);
  EXPECT_NE(text.find("  kfd: failed: sys/class/kfd: permission denied\n"), std::string::npos);
  EXPECT_EQ(text.find("  cpu:"), std::string::npos);

  const Topology empty;
  const std::vector<ProbeReport> clean{{"cpu", ProbeStatus::kOk, {}, ""}};
  EXPECT_EQ(render_text_tree(empty, clean), "Machine\n");
}

// NIC names in the matrix legend come from the root's net/ and infiniband/ directory names.
TEST(MatrixText, NamesFromTheRootReachNoTerminal) {
  DeviceMatrix m;
  MatrixDevice nic;
  nic.name = "NIC0";
  nic.kind = "nic";
  nic.rdma = "mlx5_\x1b]0;pwned\x07\x1b[2J\xc2\x9b\xff";
  m.devices.push_back(nic);
  m.cells.push_back({Relation{RelationClass::kSelf}});
  const std::string out = render_matrix_text(m);
  for (char c : out) {
    const auto u = static_cast<unsigned char>(c);
    ASSERT_TRUE(u >= 0x20 || c == '\n' || c == '\t') << "control byte " << int(u);
    ASSERT_NE(u, 0x7f);
  }
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << "C1 control (CSI)";
  EXPECT_NE(out.find("NIC0: mlx5_?]0;pwned?"), std::string::npos) << out;
}

TEST(FormatBytes, BinaryUnitsWithOneDecimal) {
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(536870912), "512 MiB");
  EXPECT_EQ(format_bytes(85899345920), "80 GiB");
  EXPECT_EQ(format_bytes(1649267441664), "1.5 TiB");
  EXPECT_EQ(format_bytes(49075843072), "45.7 GiB");
  EXPECT_EQ(format_bytes(2251799813685248ULL), "2 PiB");
  EXPECT_EQ(format_bytes(UINT64_MAX), "16384 PiB") << "no unit above PiB";
}

TEST(FormatBytes, RoundingUpCarriesIntoTheNextUnit) {
  EXPECT_EQ(format_bytes(1048575), "1 MiB");     // 1023.999 KiB
  EXPECT_EQ(format_bytes(1073741823), "1 GiB");  // 1023.999 MiB
  EXPECT_EQ(format_bytes(2047), "2 KiB");        // 1.999 KiB
  EXPECT_EQ(format_bytes(1024 * 1024 - 52), "1023.9 KiB") << "only a full carry changes unit";
}

}  // namespace
}  // namespace nodetopo::exporters
