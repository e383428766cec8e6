// The builder: every shipped profile builds, the result is byte-identical across builds, its
// files follow the kernel's formats (compared with real captures where we have them), the NVML
// fixture follows docs/mock-nvml.md, and directories are created and removed safely.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/mock/profiles.hpp>

#include "captures.hpp"
#include "mock_fixture.hpp"
#include "test_support.hpp"

namespace nodetopo::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

std::string attr(const fs::path& root, const std::string& rel) {
  std::string text = read_file(root / rel);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::vector<std::string> key_order(const std::string& properties) {
  std::vector<std::string> keys;
  std::istringstream in(properties);
  std::string line;
  while (std::getline(in, line))
    keys.push_back(line.substr(0, line.find(' ')));
  return keys;
}

std::map<std::string, std::string> properties_map(const std::string& properties) {
  std::map<std::string, std::string> out;
  std::istringstream in(properties);
  std::string line;
  while (std::getline(in, line))
    out[line.substr(0, line.find(' '))] = line.substr(line.find(' ') + 1);
  return out;
}

class ShippedProfile : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedProfile, RendersByteIdenticallyTwice) {
  auto profile = mock::load_profile(GetParam());
  ASSERT_TRUE(profile.ok()) << profile.error().describe();
  auto a = mock::render_host(*profile);
  auto b = mock::render_host(*profile);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(a->files == b->files);
  EXPECT_TRUE(a->symlinks == b->symlinks);
  EXPECT_TRUE(a->dirs == b->dirs);
  EXPECT_GT(a->files.size(), 100U);
}

INSTANTIATE_TEST_SUITE_P(All, ShippedProfile, ::testing::ValuesIn(shipped_profile_names()),
                         [](const auto& p) {
                           std::string n = p.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Builder, TwoBuildsOnDiskAreByteIdentical) {
  auto profile = mock::load_profile("dgx-h100");
  ASSERT_TRUE(profile.ok());
  TempDir dir;
  ASSERT_TRUE(mock::build_host(*profile, dir.path() / "a").ok());
  ASSERT_TRUE(mock::build_host(*profile, dir.path() / "b").ok());
  const auto a = tree_entries(dir.path() / "a");
  const auto b = tree_entries(dir.path() / "b");
  EXPECT_GT(a.size(), 5000U);
  EXPECT_EQ(first_difference(a, b), "");
}

TEST(Builder, CpuFilesFollowTheKernelFormats) {
  const RenderedHost* host = rendered_host("dgx-h100");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->attr("sys/devices/system/cpu/online"), "0-223");
  EXPECT_EQ(host->attr("sys/devices/system/node/online"), "0-1");
  EXPECT_EQ(host->attr("sys/devices/system/node/node0/cpulist"), "0-55,112-167");
  // 224 possible CPUs: seven 32-bit words, most significant first.
  EXPECT_EQ(host->attr("sys/devices/system/node/node0/cpumap"),
            "00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff");
  EXPECT_EQ(host->attr("sys/devices/system/cpu/cpu112/topology/thread_siblings_list"), "0,112");
  EXPECT_EQ(host->attr("sys/devices/system/cpu/cpu57/topology/physical_package_id"), "1");
  EXPECT_THAT(host->attr("sys/devices/system/node/node1/meminfo"),
              HasSubstr("Node 1 MemTotal:       1073741824 kB\n"));
  EXPECT_THAT(host->attr("proc/meminfo"), HasSubstr("MemTotal:       2147483648 kB\n"));
  const std::string cpuinfo = host->attr("proc/cpuinfo");
  EXPECT_THAT(cpuinfo, HasSubstr("processor\t: 223\n"));
  EXPECT_THAT(cpuinfo, HasSubstr("model name\t: Intel(R) Xeon(R) Platinum 8480C\n"));
  EXPECT_EQ(host->attr("sys/devices/virtual/dmi/id/product_name"), "DGXH100");
  EXPECT_EQ(host->link("sys/bus/cpu/devices/cpu7"), "../../../devices/system/cpu/cpu7");
  // Caches where the profile gives them: hami-lab has a 32 MiB L3 per 4-core CCX.
  const RenderedHost* lab = rendered_host("hami-lab");
  ASSERT_NE(lab, nullptr);
  EXPECT_EQ(lab->attr("sys/devices/system/cpu/cpu0/cache/index3/size"), "32768K");
  EXPECT_EQ(lab->attr("sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list"), "0-3,16-19");
  EXPECT_EQ(lab->attr("sys/devices/system/cpu/cpu0/cache/index0/type"), "Data");
  EXPECT_EQ(host->image.dirs.count("sys/devices/system/cpu/cpu0/cache"), 0U);
}

TEST(Builder, CpumaskMatchesTheRealCaptureForm) {
  // The real capture 32intel64-2p8co2t+8ve has 112 possible CPUs and prints a 16-bit top word.
  const fs::path capture = capture_root("32intel64-2p8co2t+8ve");
  ASSERT_TRUE(fs::exists(capture)) << "captures not unpacked";
  EXPECT_EQ(attr(capture, "sys/devices/system/node/node0/cpumap"),
            "0000,00000000,00000000,00ff00ff");
  EXPECT_EQ(attr(capture, "sys/bus/pci/devices/0000:17:00.0/max_link_speed"), "8 GT/s");
  // A 112-CPU mock prints the same shape.
  const RenderedHost* odd =
      rendered_host("synthetic:sockets=2,cores_per_socket=28,threads_per_core=2,gpus=1,nics=1");
  ASSERT_NE(odd, nullptr);
  EXPECT_EQ(odd->attr("sys/devices/system/node/node0/cpumap"), "0000,000fffff,ff000000,0fffffff");
  // hami-lab has 32 CPUs: exactly one word.
  const RenderedHost* host = rendered_host("hami-lab");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->attr("sys/devices/system/node/node0/cpumap"), "ffffffff");
  // The PCI attributes keep the capture's shape: "0x%04x" ids, "0x%06x" class; modern
  // kernels print link speeds as "8.0 GT/s PCIe".
  const std::string gpu = "sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0";
  EXPECT_EQ(host->attr(gpu + "/vendor"), "0x10de");
  EXPECT_EQ(host->attr(gpu + "/class"), "0x030200");
  EXPECT_EQ(host->attr(gpu + "/current_link_speed"), "8.0 GT/s PCIe");
  EXPECT_EQ(host->link(gpu + "/driver"), "../../../../bus/pci/drivers/nvidia");
  EXPECT_EQ(host->link("sys/bus/pci/devices/0000:01:00.0"),
            "../../../devices/pci0000:00/0000:00:01.1/0000:01:00.0");
}

TEST(Builder, NvmlFixtureFollowsTheContract) {
  const RenderedHost* host = rendered_host("dgx-h100");
  ASSERT_NE(host, nullptr);
  const Json doc = Json::parse(host->attr(std::string(mock::kNvmlFixtureFile)));
  const std::set<std::string> top_keys{"driver_version", "cuda_driver_version", "fail", "devices"};
  const std::set<std::string> device_keys{
      "index",  "pci_bus_id",         "pci_device_id", "pci_subsystem_id", "uuid",   "name",
      "serial", "memory_total_bytes", "architecture",  "numa_node",        "fabric", "nvlinks",
      "fail"};
  for (const auto& [key, value] : doc.items())
    EXPECT_TRUE(top_keys.count(key)) << key;
  EXPECT_EQ(doc["driver_version"], "550.54.15");
  ASSERT_EQ(doc["devices"].size(), 8U);
  std::string previous_bus;
  for (std::size_t i = 0; i < 8; ++i) {
    const Json& d = doc["devices"][i];
    for (const auto& [key, value] : d.items())
      EXPECT_TRUE(device_keys.count(key)) << key;
    EXPECT_EQ(d["index"], i);
    const std::string bus = d["pci_bus_id"];
    EXPECT_LT(previous_bus, bus);  // indices follow PCI order
    previous_bus = bus;
    EXPECT_EQ(d["pci_device_id"], "0x233010de");
    EXPECT_EQ(d["pci_subsystem_id"], "0x16c110de");
    EXPECT_EQ(d["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(d["architecture"], 9);
    EXPECT_EQ(d["memory_total_bytes"], 85520809984ULL);
    EXPECT_EQ(d["numa_node"], i < 4 ? 0 : 1);
    EXPECT_THAT(d["uuid"].get<std::string>(),
                ::testing::MatchesRegex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-"
                                        "[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
    EXPECT_EQ(d["serial"].get<std::string>().size(), 13U);
    ASSERT_EQ(d["nvlinks"].size(), 18U);
    std::map<std::string, int> per_switch;
    for (std::size_t l = 0; l < 18; ++l) {
      const Json& link = d["nvlinks"][l];
      EXPECT_EQ(link["link"], l);
      EXPECT_EQ(link["active"], true);
      EXPECT_EQ(link["remote_type"], "switch");
      ++per_switch[link["remote_pci_bus_id"]];
    }
    // The DGX H100 split: 5, 4, 4, 5 links to the NVSwitches at 05..08:00.0.
    EXPECT_EQ(
        per_switch,
        (std::map<std::string, int>{
            {"0000:05:00.0", 5}, {"0000:06:00.0", 4}, {"0000:07:00.0", 4}, {"0000:08:00.0", 5}}));
    // The remote end is an NVSwitch function of this host.
    for (const auto& [remote, n] : per_switch) {
      const std::string dir = host->resolve("sys/bus/pci/devices/" + remote);
      EXPECT_EQ(host->attr(dir + "/device"), "0x22a3");
      EXPECT_EQ(host->attr(dir + "/class"), "0x068000");
    }
  }
}

TEST(Builder, NvmlFixtureOnlyWhereThereAreNvidiaGpus) {
  for (const char* name : {"cpu-only", "mi300x", "gaudi3"}) {
    const RenderedHost* host = rendered_host(name);
    ASSERT_NE(host, nullptr);
    EXPECT_EQ(host->image.files.count(std::string(mock::kNvmlFixtureFile)), 0U) << name;
    EXPECT_FALSE(host->summary.nvml_fixture) << name;
  }
  const RenderedHost* lab = rendered_host("hami-lab");
  ASSERT_NE(lab, nullptr);
  EXPECT_TRUE(lab->summary.nvml_fixture);
  const Json doc = Json::parse(lab->attr(std::string(mock::kNvmlFixtureFile)));
  ASSERT_EQ(doc["devices"].size(), 2U);
  EXPECT_EQ(doc["devices"][0]["name"], "Tesla T4");
  EXPECT_TRUE(doc["devices"][0]["nvlinks"].empty());  // T4 has no NVLink
}

TEST(Builder, KfdTopologyMatchesTheRealCapturesFormat) {
  const RenderedHost* host = rendered_host("mi300x");
  ASSERT_NE(host, nullptr);
  const std::string topo = host->resolve("sys/class/kfd/kfd/topology");
  ASSERT_EQ(topo, "sys/devices/virtual/kfd/kfd/topology");
  const fs::path real = captures_dir() / "kfd/topology-parsing-mi308/topology";
  ASSERT_TRUE(fs::exists(real)) << "captures not unpacked";
  // Same keys, same order, as the real CPU node, GPU node and io_link properties.
  EXPECT_EQ(key_order(host->attr(topo + "/nodes/0/properties")),
            key_order(read_file(real / "nodes/0/properties")));
  EXPECT_EQ(key_order(host->attr(topo + "/nodes/2/properties")),
            key_order(read_file(real / "nodes/2/properties")));
  EXPECT_EQ(key_order(host->attr(topo + "/nodes/2/io_links/0/properties")),
            key_order(read_file(real / "nodes/2/io_links/0/properties")));
  EXPECT_EQ(key_order(host->attr(topo + "/nodes/2/mem_banks/0/properties")),
            key_order(read_file(real / "nodes/2/mem_banks/0/properties")));
  // Two CPU nodes, then eight GPU nodes in PCI order.
  std::vector<std::string> gpu_buses;
  for (const Json& d : host->manifest["devices"]) {
    if (d["type"] == "gpu") gpu_buses.push_back(d["pci"]);
  }
  ASSERT_EQ(gpu_buses.size(), 8U);
  for (int n = 0; n < 10; ++n) {
    const auto props =
        properties_map(host->attr(topo + "/nodes/" + std::to_string(n) + "/properties"));
    const bool gpu = n >= 2;
    EXPECT_EQ(props.at("simd_count") != "0", gpu) << n;
    EXPECT_EQ(props.at("cpu_cores_count"), gpu ? "0" : "192") << n;
    std::set<std::string> xgmi_peers;
    int pcie = 0;
    const int links = std::stoi(props.at("io_links_count"));
    for (int l = 0; l < links; ++l) {
      const auto link = properties_map(host->attr(
          topo + "/nodes/" + std::to_string(n) + "/io_links/" + std::to_string(l) + "/properties"));
      EXPECT_EQ(link.at("node_from"), std::to_string(n));
      if (link.at("type") == "11") xgmi_peers.insert(link.at("node_to"));
      if (link.at("type") == "2") ++pcie;
    }
    if (!gpu) continue;
    EXPECT_EQ(pcie, 1) << n;
    EXPECT_EQ(xgmi_peers.size(), 7U) << n;  // all-to-all
    EXPECT_FALSE(xgmi_peers.count(std::to_string(n))) << n;
    // location_id = bus << 8 | devfn of the GPU's PCI function; vendor/device as decimals.
    const std::string& pci = gpu_buses[static_cast<std::size_t>(n - 2)];
    const auto bus = static_cast<unsigned>(std::stoul(pci.substr(5, 2), nullptr, 16));
    const auto dev = static_cast<unsigned>(std::stoul(pci.substr(8, 2), nullptr, 16));
    const auto fn = static_cast<unsigned>(std::stoul(pci.substr(11, 1)));
    EXPECT_EQ(props.at("location_id"), std::to_string((bus << 8) | (dev << 3) | fn)) << n;
    EXPECT_EQ(props.at("vendor_id"), "4098");
    EXPECT_EQ(props.at("device_id"), "29857");
    EXPECT_EQ(props.at("drm_render_minor"), std::to_string(128 + n - 2));
    EXPECT_NE(host->attr(topo + "/nodes/" + std::to_string(n) + "/gpu_id"), "0");
    // The DRM card of the same GPU.
    EXPECT_EQ(host->resolve("sys/class/drm/card" + std::to_string(n - 2) + "/device"),
              host->resolve("sys/bus/pci/devices/" + pci));
  }
}

TEST(Builder, NetworkAndRdmaDevicesHangOffTheirFunctions) {
  const RenderedHost* host = rendered_host("dgx-h100");
  ASSERT_NE(host, nullptr);
  // Compute NIC 0: InfiniBand, NDR, predictable name, first RDMA device.
  EXPECT_EQ(host->attr(host->resolve("sys/class/net/ibp24s0/type")), "32");
  EXPECT_EQ(host->attr(host->resolve("sys/class/net/ibp24s0/speed")), "400000");
  EXPECT_EQ(host->resolve("sys/class/net/ibp24s0/device"),
            host->resolve("sys/bus/pci/devices/0000:18:00.0"));
  EXPECT_EQ(host->attr(host->resolve("sys/class/infiniband/mlx5_0/ports/1/rate")),
            "400 Gb/sec (4X NDR)");
  EXPECT_EQ(host->attr(host->resolve("sys/class/infiniband/mlx5_0/ports/1/state")), "4: ACTIVE");
  EXPECT_EQ(host->attr(host->resolve("sys/class/infiniband/mlx5_0/ports/1/link_layer")),
            "InfiniBand");
  EXPECT_EQ(host->resolve("sys/class/infiniband/mlx5_0/device"),
            host->resolve("sys/bus/pci/devices/0000:18:00.0"));
  // The IPoIB address ends with the port GUID, which is the node GUID of a one-port function.
  const std::string guid = host->attr(host->resolve("sys/class/infiniband/mlx5_0/node_guid"));
  std::string guid_bytes;
  for (char c : guid) {
    if (c != ':') guid_bytes += c;
  }
  std::string address = host->attr(host->resolve("sys/class/net/ibp24s0/address"));
  address.erase(std::remove(address.begin(), address.end(), ':'), address.end());
  EXPECT_TRUE(address.ends_with(guid_bytes)) << address << " vs " << guid;
  // Storage NICs: RoCE, the netdev named in gid_attrs, as on a DGX H100 (mlx5_1, mlx5_2).
  EXPECT_EQ(host->attr(host->resolve("sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0")),
            "enp39s0f0np0");
  EXPECT_EQ(host->attr(host->resolve("sys/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0")),
            "enp39s0f1np1");
  EXPECT_EQ(host->attr(host->resolve("sys/class/net/enp39s0f1np1/mtu")), "9000");
  EXPECT_EQ(host->attr(host->resolve("sys/class/net/lo/type")), "772");
  // Compute NICs are mlx5_0,3,4,5,6,9,10,11 as a DGX H100 prints in its NIC legend.
  std::vector<std::string> compute;
  for (const Json& d : host->manifest["devices"]) {
    if (d["type"] != "nic" || d["ports"][0]["link_layer"] != "InfiniBand") continue;
    compute.push_back(d["ports"][0]["rdma"]);
  }
  EXPECT_THAT(compute, ::testing::ElementsAre("mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6",
                                              "mlx5_9", "mlx5_10", "mlx5_11"));
}

TEST(Builder, GaudiScaleOutPortsAreNetdevsOfTheAccelerator) {
  const RenderedHost* host = rendered_host("gaudi3");
  ASSERT_NE(host, nullptr);
  std::size_t accelerators = 0;
  for (const Json& d : host->manifest["devices"]) {
    if (d["type"] != "accelerator") continue;
    ++accelerators;
    EXPECT_EQ(d["vendor"], "1da3");
    EXPECT_EQ(d["device"], "1060");
    ASSERT_EQ(d["ports"].size(), 3U);
    for (const Json& port : d["ports"]) {
      EXPECT_EQ(port["pci"], d["pci"]);  // one function, three interfaces
      EXPECT_EQ(port["rdma"], d["ports"][0]["rdma"]);
      EXPECT_EQ(port["rate_gbps"], 200);
      EXPECT_EQ(host->resolve("sys/class/net/" + port["netdev"].get<std::string>() + "/device"),
                host->resolve("sys/bus/pci/devices/" + d["pci"].get<std::string>()));
    }
    const std::string accel = "sys/class/accel/accel" + std::to_string(d["ordinal"].get<int>());
    EXPECT_EQ(host->attr(host->resolve(accel + "/pci_addr")), d["pci"]);
  }
  EXPECT_EQ(accelerators, 8U);
}

TEST(Builder, SharingIsCarriedIntoTheManifest) {
  const RenderedHost* host = rendered_host("hami-lab");
  ASSERT_NE(host, nullptr);
  std::size_t shared = 0;
  for (const Json& d : host->manifest["devices"]) {
    if (d["type"] != "gpu") continue;
    EXPECT_EQ(d["sharing"]["mode"], "fractional");
    EXPECT_EQ(d["sharing"]["replicas"], 10);
    ++shared;
  }
  EXPECT_EQ(shared, 2U);
  EXPECT_EQ(host->manifest["sockets"], 1);
  EXPECT_EQ(host->resolve("sys/class/net/cni0"), "sys/devices/virtual/net/cni0");
}

TEST(Builder, SyntheticScalesTo64GpusAndOver1000Functions) {
  const std::string spec = "synthetic:gpus=64,nics=64,switch_depth=2,nic_vfs=8";
  const RenderedHost* rendered = rendered_host(spec);
  ASSERT_NE(rendered, nullptr);
  const BuiltHost* host = built_host(spec);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->summary.gpus, 64U);
  EXPECT_EQ(host->summary.nics, 64U);
  EXPECT_GT(host->summary.pci_functions, 1000U);
  std::cout << "synthetic 64 GPUs: " << host->summary.pci_functions << " PCI functions, "
            << host->summary.entries << " entries; rendered in " << rendered->seconds
            << " s, built on disk in " << host->seconds << " s\n";
  // Generous bounds for sanitizer builds on a loaded machine: rendering takes well under a
  // second in a release build; writing is bound by the file system (~35k small files).
  EXPECT_LT(rendered->seconds, 5.0);
  EXPECT_LT(host->seconds, 60.0);
  // More than one PCI domain: 256 buses are not enough for this many switches.
  EXPECT_TRUE(fs::exists(host->root / "sys/devices/pci0001:00"));
  const Json nvml = Json::parse(read_file(host->root / std::string(mock::kNvmlFixtureFile)));
  EXPECT_EQ(nvml["devices"].size(), 64U);
  // SR-IOV: the PF lists its VFs, each VF points back at the PF.
  const std::string pf = host->manifest["devices"][1]["pci"];
  const fs::path pf_dir = host->root / "sys/bus/pci/devices" / pf;
  EXPECT_EQ(attr(pf_dir, "sriov_totalvfs"), "8");
  EXPECT_EQ(attr(pf_dir, "sriov_numvfs"), "8");
  EXPECT_EQ(fs::canonical(pf_dir / "virtfn0" / "physfn"), fs::canonical(pf_dir));
  EXPECT_EQ(attr(pf_dir / "virtfn7", "device"), "0x101e");
  // lspci sees every function.
  const std::string listing = run_lspci(host->root, {"-D"});
  EXPECT_EQ(static_cast<std::size_t>(std::count(listing.begin(), listing.end(), '\n')),
            host->summary.pci_functions);
}

TEST(Builder, SyntheticAmdGpusFormAnXgmiHive) {
  // NVSwitch parameters of the profile's defaults do not apply to AMD GPUs.
  const RenderedHost* host = rendered_host("synthetic:gpu_model=mi300x,gpus=4,nics=2");
  ASSERT_NE(host, nullptr);
  std::size_t xgmi = 0;
  for (const Json& link : host->manifest["links"]) {
    EXPECT_EQ(link["kind"], "xgmi");
    ++xgmi;
  }
  EXPECT_EQ(xgmi, 6U);  // 4 GPUs all-to-all
  EXPECT_FALSE(host->summary.nvml_fixture);
  // Two CPU nodes + 4 GPU nodes, each GPU with 3 xGMI peers besides its PCIe link.
  EXPECT_EQ(
      host->attr("sys/devices/virtual/kfd/kfd/topology/nodes/5/io_links/3/properties").substr(0, 8),
      "type 11\n");
  EXPECT_EQ(host->image.files.count("sys/devices/virtual/kfd/kfd/topology/nodes/6/properties"), 0U);
}

TEST(Builder, SyntheticCapsNvlinksAtTheModel) {
  const RenderedHost* host = rendered_host("synthetic:gpu_model=a100-sxm4-80gb,nvswitches=6");
  ASSERT_NE(host, nullptr);
  const Json nvml = Json::parse(host->attr(std::string(mock::kNvmlFixtureFile)));
  ASSERT_EQ(nvml["devices"].size(), 8U);
  for (const Json& d : nvml["devices"]) {
    ASSERT_EQ(d["nvlinks"].size(), 12U);
    for (const Json& l : d["nvlinks"])
      EXPECT_EQ(l["active"], true);
  }
}

TEST(Builder, RefusesANonEmptyDirectory) {
  auto profile = mock::load_profile("hami-lab");
  ASSERT_TRUE(profile.ok());
  TempDir dir;
  write_file(dir.path() / "host/keep.txt", "mine");
  auto built = mock::build_host(*profile, dir.path() / "host");
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.error().message, HasSubstr("not empty"));
  EXPECT_EQ(built.error().path, (dir.path() / "host").string());
  // Even with replace_existing: a directory that holds no mock host is never deleted.
  mock::BuildOptions force;
  force.replace_existing = true;
  built = mock::build_host(*profile, dir.path() / "host", force);
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.error().message, HasSubstr("holds no mock host"));
  EXPECT_EQ(read_file(dir.path() / "host/keep.txt"), "mine");
  // Nothing is left behind next to it.
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 1U);
}

TEST(Builder, ReplacesAPreviousMockHostWhenAsked) {
  TempDir dir;
  auto first = mock::load_profile("hami-lab");
  auto second = mock::load_profile("cpu-only");
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_TRUE(mock::build_host(*first, dir.path() / "host").ok());
  ASSERT_FALSE(mock::build_host(*second, dir.path() / "host").ok());
  mock::BuildOptions force;
  force.replace_existing = true;
  auto built = mock::build_host(*second, dir.path() / "host", force);
  ASSERT_TRUE(built.ok()) << built.error().describe();
  const Json manifest =
      Json::parse(read_file(dir.path() / "host" / std::string(mock::kManifestFile)));
  EXPECT_EQ(manifest["profile"], "cpu-only");
  EXPECT_FALSE(fs::exists(dir.path() / "host" / std::string(mock::kNvmlFixtureFile)));
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path()))
    ++entries;
  EXPECT_EQ(entries, 1U);  // no staging or old copies left
}

TEST(Builder, BuildsIntoAnEmptyExistingDirectory) {
  TempDir dir;
  fs::create_directories(dir.path() / "empty");
  auto profile = mock::load_profile("hami-lab");
  ASSERT_TRUE(profile.ok());
  auto built = mock::build_host(*profile, dir.path() / "empty");
  ASSERT_TRUE(built.ok()) << built.error().describe();
  EXPECT_TRUE(fs::exists(dir.path() / "empty/sys/bus/pci/devices"));
  struct stat st {};
  ASSERT_EQ(::stat((dir.path() / "empty").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0055, 0U);  // not left with the staging directory's private mode
}

TEST(Builder, FailsCleanlyWhenTheParentIsAFile) {
  TempDir dir;
  write_file(dir.path() / "file", "x");
  auto profile = mock::load_profile("hami-lab");
  ASSERT_TRUE(profile.ok());
  auto built = mock::build_host(*profile, dir.path() / "file/host");
  ASSERT_FALSE(built.ok());
  EXPECT_THAT(built.error().describe(), HasSubstr("file"));
}

TEST(TempHost, RemovesItsDirectoryAndRespectsTmpdir) {
  TempDir tmp;
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  fs::path root;
  {
    auto host = mock::TempHost::create("hami-lab");
    ASSERT_TRUE(host.ok()) << host.error().describe();
    root = host->root();
    EXPECT_EQ(root.parent_path(), tmp.path());
    EXPECT_TRUE(root.filename().string().starts_with("nodetopo-mock-"));
    struct stat st {};
    ASSERT_EQ(::stat(root.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700U);  // private
    EXPECT_EQ(host->nvml_fixture(), (root / "nodetopo-mock/nvml.json").string());
    EXPECT_TRUE(fs::exists(host->nvml_fixture()));
    mock::TempHost moved = std::move(*host);
    EXPECT_EQ(moved.root(), root);
  }
  EXPECT_FALSE(fs::exists(root));
  // A profile error leaves nothing behind either.
  EXPECT_FALSE(mock::TempHost::create("no-such-profile").ok());
  EXPECT_TRUE(fs::is_empty(tmp.path()));
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

TEST(NvmlLibraryPath, EnvironmentOverrideWins) {
  ::setenv("NODETOPO_MOCK_NVML_LIBRARY", "/opt/x/libnvidia-ml.so.1", 1);
  EXPECT_EQ(mock::nvml_library_path(), "/opt/x/libnvidia-ml.so.1");
  ::unsetenv("NODETOPO_MOCK_NVML_LIBRARY");
  // The test binary lives in <build>/tests, where no mock library is installed next to it.
  const std::string found = mock::nvml_library_path();
  if (!found.empty()) {
    EXPECT_TRUE(fs::exists(found)) << found;
  }
}

}  // namespace
}  // namespace nodetopo::test
