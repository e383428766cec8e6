// Profile parsing and validation: every malformed profile is refused with a message naming the
// line and the field; valid ones resolve their defaults; the loader finds shipped profiles,
// files and synthetic overrides.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nodetopo/mock/builder.hpp>
#include <nodetopo/mock/profiles.hpp>

#include "test_support.hpp"

namespace nodetopo::mock {
namespace {

using ::testing::HasSubstr;

// A valid two-socket host; cases append sections or replace it.
const std::string kBase = R"(version: 1
name: t
description: test host
cpu: {model_name: X, sockets: 2, cores_per_socket: 4, threads_per_core: 2}
numa:
  - {id: 0, socket: 0, memory: 1 GiB}
  - {id: 1, socket: 1, memory: 1 GiB}
)";

// One GPU behind a root port of bus 0x10 on NUMA 0.
const std::string kOneGpu = R"(pci:
  - bus: 0x10
    numa: 0
    ports:
      - {device: {model: h100-sxm5}}
)";

struct BadCase {
  const char* name;
  std::string yaml;
  const char* message;  // must appear in the error
};

std::ostream& operator<<(std::ostream& os, const BadCase& c) {
  return os << c.name;
}

const std::vector<BadCase>& bad_cases() {
  static const std::vector<BadCase> cases{
      {"syntax", "version: 1\nname: t\ndescription: x\n  bad: [\n", "not valid YAML"},
      {"not_a_mapping", "- 1\n- 2\n", "a profile is a YAML mapping"},
      {"unknown_top_key", kBase + "colour: red\n", "line 8: colour: unknown key"},
      {"unknown_nested_key",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, "
               "colour: red}}\n",
       "pci[0].ports[0].device.colour: unknown key"},
      {"duplicate_key", kBase + "seed: a\nseed: b\n", "seed: duplicate key"},
      {"missing_version", kBase.substr(kBase.find('\n') + 1), "version: required field is missing"},
      {"wrong_version", "version: 2\n" + kBase.substr(kBase.find('\n') + 1),
       "version: 2 is out of range"},
      {"bad_name", "version: 1\nname: DGX\n" + kBase.substr(kBase.find("description")),
       "name: 'DGX' must be lowercase"},
      {"string_expected", kBase + "seed: {a: 1}\n", "seed: expected a string, got a mapping"},
      {"list_expected", kBase + "pci: 3\n", "pci: expected a list"},
      {"missing_cpu", "version: 1\nname: t\ndescription: x\nnuma: []\n",
       "cpu: required field is missing"},
      // NUMA
      {"numa_ids_out_of_order",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 1, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 1, socket: 0, memory: 1 GiB}\n",
       "numa[0].id: NUMA ids must be 0, 1, 2, ... in order"},
      {"numa_socket_missing",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 1, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 3, memory: 1 GiB}\n",
       "numa[0].socket: socket 3 does not exist (cpu.sockets is 1)"},
      {"socket_without_numa",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 2, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB}\n",
       "cpu.sockets: socket 1 has no NUMA node"},
      {"cores_do_not_split",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 1, cores_per_socket: "
       "4, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB}\n  - {id: 1, "
       "socket: 0, memory: 1 GiB}\n  - {id: 2, socket: 0, memory: 1 GiB}\n",
       "numa[0].socket: the 4 cores of socket 0 do not split evenly over its 3 NUMA nodes"},
      {"memory_not_a_size",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 1, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GB}\n",
       "numa[0].memory: '1 GB' is not a size"},
      {"memory_not_pages",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 1, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1000}\n",
       "numa[0].memory: must be a positive multiple of the 4 KiB page size"},
      {"distances_some_missing",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 2, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB, distances: [10, "
       "21]}\n  - {id: 1, socket: 1, memory: 1 GiB}\n",
       "numa[1].distances: give distances for every NUMA node or for none"},
      {"distances_wrong_length",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 2, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB, distances: "
       "[10]}\n  - {id: 1, socket: 1, memory: 1 GiB, distances: [21, 10]}\n",
       "numa[0].distances: has 1 entries; expected 2"},
      {"distances_self",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 2, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB, distances: [11, "
       "21]}\n  - {id: 1, socket: 1, memory: 1 GiB, distances: [21, 10]}\n",
       "numa[0].distances[0]: the distance of a node to itself must be 10"},
      {"distances_asymmetric",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 2, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB, distances: [10, "
       "21]}\n  - {id: 1, socket: 1, memory: 1 GiB, distances: [31, 10]}\n",
       "numa[0].distances[1]: 21 differs from numa[1].distances[0] (31)"},
      // PCI tree: NUMA locality
      {"gpu_on_missing_numa",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: "
               "h100-sxm5, numa: 5}}\n",
       "line 12: pci[0].ports[0].device.numa: NUMA node 5 does not exist (nodes: 0-1)"},
      {"root_complex_on_missing_numa", kBase + "pci:\n  - bus: 0x10\n    numa: 7\n",
       "pci[0].numa: NUMA node 7 does not exist"},
      {"root_complex_on_memory_only_numa",
       "version: 1\nname: t\ndescription: x\ncpu: {model_name: X, sockets: 1, cores_per_socket: "
       "2, threads_per_core: 1}\nnuma:\n  - {id: 0, socket: 0, memory: 1 GiB}\n  - {id: 1, "
       "memory: 1 GiB}\npci:\n  - {bus: 0x10, numa: 1}\n",
       "pci[0].numa: NUMA node 1 has no CPUs"},
      // PCI tree: addresses and bus numbers
      {"duplicate_bus_address",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {address: \"01.0\", "
               "device: {model: t4}}\n      - {address: \"01.0\", device: {model: t4}}\n",
       "pci[0].ports[1].address: duplicate bus address 0000:10:01.0 (already used by "
       "pci[0].ports[0])"},
      {"integrated_device_on_port_address",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    devices:\n      - {address: \"01.0\", type: "
               "other, vendor: 0x8086, device: 0x1, class: 0x088000}\n    ports:\n      - "
               "{address: \"01.0\"}\n",
       "pci[0].ports[0].address: duplicate bus address 0000:10:01.0 (already used by "
       "pci[0].devices[0])"},
      {"duplicate_root_bus", kBase + "pci:\n  - {bus: 0x10, numa: 0}\n  - {bus: 0x10, numa: 1}\n",
       "pci[1].bus: root bus pci0000:10 is already pci[0]"},
      {"secondary_bus_not_above_primary",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {bus: 0x05, device: "
               "{model: t4}}\n",
       "pci[0].ports[0].bus: bus 0x05 must be above the bridge's own bus 0x10"},
      {"secondary_bus_reused",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {bus: 0x20, device: "
               "{model: t4}}\n      - {bus: 0x15, device: {model: t4}}\n",
       "pci[0].ports[1].bus: bus 0x15 is already used under pci[0]"},
      {"root_buses_overlap",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {bus: 0x20, device: "
               "{model: t4}}\n  - {bus: 0x18, numa: 1}\n",
       "pci[1].bus: root bus 0x18 lies inside buses 0x10-0x20 used by pci[0]"},
      {"out_of_bus_numbers",
       kBase + "pci:\n  - bus: 0xfe\n    numa: 0\n    ports:\n      - {device: {model: t4}}\n   "
               "   - {device: {model: t4}}\n",
       "pci[0].ports[1]: out of bus numbers"},
      {"bus_above_255", kBase + "pci:\n  - bus: 0x100\n    numa: 0\n",
       "pci[0].bus: 0x100 is out of range"},
      {"bad_address",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {address: \"20.0\"}\n",
       "pci[0].ports[0].address: '20.0' is not a device.function"},
      {"device_address_behind_port",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, "
               "address: \"01.0\"}}\n",
       "pci[0].ports[0].device.address: a device behind a port is always device 00"},
      {"integrated_device_without_address",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    devices:\n      - {type: other, vendor: "
               "0x8086, device: 0x1, class: 0x088000}\n",
       "pci[0].devices[0].address: required field is missing"},
      {"switch_and_device",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4}, "
               "switch: {ports: [{}]}}\n",
       "pci[0].ports[0].device: a port leads to a switch or a device, not both"},
      {"switch_without_ports",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {switch: {model: "
               "pex89000}}\n",
       "pci[0].ports[0].switch.ports: required field is missing"},
      {"unknown_switch_model",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {switch: {model: plx, "
               "ports: [{}]}}\n",
       "pci[0].ports[0].switch.model: unknown switch model 'plx'"},
      {"unknown_root_port_model", kBase + "pci:\n  - {bus: 0x10, numa: 0, port_model: via}\n",
       "pci[0].port_model: unknown root port model 'via'"},
      // Devices
      {"unknown_model",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: "
               "h900}}\n",
       "pci[0].ports[0].device.model: unknown model 'h900'"},
      {"type_model_mismatch",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {type: nic, "
               "model: h100-sxm5}}\n",
       "pci[0].ports[0].device.type: nic does not match model h100-sxm5 (a gpu)"},
      {"unknown_type",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {type: fpga}}\n",
       "pci[0].ports[0].device.type: 'fpga' is not a device type"},
      {"no_model_no_ids",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {type: other}}\n",
       "pci[0].ports[0].device.vendor: required field is missing (no model gives it)"},
      {"no_model_no_link",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {type: other, "
               "vendor: 0x1, device: 0x2, class: 0x0}}\n",
       "pci[0].ports[0].device.link: required field is missing"},
      {"gpu_without_memory",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {type: gpu, "
               "vendor: 0x10de, device: 0x2, class: 0x030200, link: gen4 x16}}\n",
       "pci[0].ports[0].device.memory: required field is missing"},
      {"bad_link",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, link: "
               "gen7 x16}}\n",
       "pci[0].ports[0].device.link: 'gen7 x16' is not a PCIe link"},
      {"bad_link_width",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, link: "
               "{speed: 8, width: 3}}}\n",
       "pci[0].ports[0].device.link.width: x3 is not a PCIe width"},
      {"current_link_too_fast",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, "
               "current_link: gen5 x16}}\n",
       "pci[0].ports[0].device.current_link: 32 GT/s x16 is more than both ends support (8 GT/s "
       "x16)"},
      {"duplicate_device_name",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, name: "
               "A}}\n      - {device: {model: t4, name: A}}\n",
       "pci[0].ports[1].device.name: 'A' is already the name of pci[0].ports[0].device"},
      {"automatic_name_collision",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, name: "
               "GPU1}}\n      - {device: {model: t4}}\n",
       "pci[0].ports[0].device.name: 'GPU1' is also the automatic name of the gpu at "
       "0000:12:00.0"},
      {"too_many_functions",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{}, {}, {}, {}, {}, {}, {}, {}, {}]}}\n",
       "pci[0].ports[0].device.ports: a PCI device has at most 8 functions"},
      // Network
      {"duplicate_netdev",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{netdev: eth0}, {netdev: eth0}]}}\n",
       "pci[0].ports[0].device.ports[1].netdev: interface name 'eth0' is already used by "
       "pci[0].ports[0].device.ports[0]"},
      {"netdev_is_loopback",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{netdev: lo}]}}\n",
       "interface name 'lo' is already used by the loopback interface"},
      {"netdev_too_long",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{netdev: a-very-long-interface}]}}\n",
       "pci[0].ports[0].device.ports[0].netdev: 'a-very-long-interface' must be 1 to 15 "
       "characters"},
      {"infiniband_rate",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{link_layer: InfiniBand, rate: 300}]}}\n",
       "pci[0].ports[0].device.ports[0].rate: 300 Gb/s is not an InfiniBand rate"},
      {"bad_link_layer",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{link_layer: fddi}]}}\n",
       "pci[0].ports[0].device.ports[0].link_layer: 'fddi' is not a link layer"},
      {"duplicate_rdma",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "ports: [{rdma: mlx5_0}, {rdma: mlx5_0}]}}\n",
       "pci[0].ports[0].device.ports[1].rdma: RDMA device name 'mlx5_0' is already used"},
      {"ports_on_nvme",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: pm9a3, "
               "ports: [{}]}}\n",
       "pci[0].ports[0].device.ports: only nics and accelerators have network ports"},
      {"sriov_more_than_total",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "sriov: {total_vfs: 8, num_vfs: 9}}}\n",
       "pci[0].ports[0].device.sriov.num_vfs: 9 is more than total_vfs (8)"},
      {"sriov_on_gpu",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, "
               "sriov: {total_vfs: 4}}}\n",
       "pci[0].ports[0].device.sriov: only nics have SR-IOV"},
      {"sharing_on_nic",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: cx7, "
               "sharing: {mode: fractional, replicas: 2}}}\n",
       "pci[0].ports[0].device.sharing: only gpus and accelerators are shared"},
      {"sharing_mode",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: t4, "
               "sharing: {mode: mig, replicas: 2}}}\n",
       "pci[0].ports[0].device.sharing.mode: 'mig' is not a sharing mode"},
      // Links
      {"dangling_link_reference",
       kBase + kOneGpu + "links:\n  - {kind: nvlink, from: GPU0, to: NVSWITCH9}\n",
       "line 14: links[0].to: no device named 'NVSWITCH9' (devices: GPU0)"},
      {"wildcard_matches_nothing",
       kBase + kOneGpu + "links:\n  - {kind: nvlink, from: \"NIC*\", to: GPU0}\n",
       "links[0].from: 'NIC*' matches no device"},
      {"unknown_link_kind", kBase + kOneGpu + "links:\n  - {kind: pcie, from: GPU0, to: GPU0}\n",
       "links[0].kind: 'pcie' is not a link kind"},
      {"link_to_itself", kBase + kOneGpu + "links:\n  - {kind: nvlink, from: GPU0, to: GPU0}\n",
       "links[0].to: 'GPU0' cannot be linked to itself"},
      {"nvlink_to_nic",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: "
               "h100-sxm5}}\n      - {device: {model: cx7}}\nlinks:\n  - {kind: nvlink, from: "
               "GPU0, to: NIC0}\n",
       "links[0].to: 'NIC0' is a nic; NVLink connects NVIDIA GPUs and NVSwitches"},
      {"xgmi_between_nvidia",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: "
               "h100-sxm5}}\n      - {device: {model: h100-sxm5}}\nlinks:\n  - {kind: xgmi, from: "
               "GPU0, to: GPU1}\n",
       "links[0].from: 'GPU0' is not an AMD GPU"},
      {"too_many_nvlinks",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: "
               "h100-sxm5}}\n      - {device: {model: nvswitch-gen3}}\n      - {device: {model: "
               "nvswitch-gen3}}\nlinks:\n  - {kind: nvlink, from: GPU0, to: NVSWITCH0, count: "
               "10}\n  - {kind: nvlink, from: GPU0, to: NVSWITCH1, count: 9}\n",
       "links[1].count: GPU0 would have 19 NVLinks; h100-sxm5 has 18"},
      {"already_linked",
       kBase + "pci:\n  - bus: 0x10\n    numa: 0\n    ports:\n      - {device: {model: "
               "h100-sxm5}}\n      - {device: {model: nvswitch-gen3}}\nlinks:\n  - {kind: nvlink, "
               "from: GPU0, to: NVSWITCH0}\n  - {kind: nvlink, from: NVSWITCH0, to: GPU0}\n",
       "links[1]: GPU0 and NVSWITCH0 are already linked by links[0]"},
      {"down_more_than_count",
       kBase + kOneGpu + "links:\n  - {kind: nvlink, from: GPU0, to: GPU0, count: 2, down: 3}\n",
       "links[0].down: 3 is more than count (2)"},
      // Synthetic
      {"synthetic_with_pci", kBase + "synthetic: {gpus: 2}\n" + kOneGpu,
       "cpu: a synthetic profile generates cpu, numa, pci and links"},
      {"synthetic_unknown_parameter",
       "version: 1\nname: s\ndescription: x\nsynthetic: {gpus: 2, tpus: 4}\n",
       "synthetic.tpus: unknown key"},
      {"synthetic_unknown_gpu_model",
       "version: 1\nname: s\ndescription: x\nsynthetic: {gpu_model: h900}\n",
       "synthetic.gpu_model: unknown GPU model 'h900'"},
      {"synthetic_nvlinks_need_switches",
       "version: 1\nname: s\ndescription: x\nsynthetic: {nvswitches: 0, nvlinks_per_gpu: 4}\n",
       "synthetic.nvlinks_per_gpu: NVLinks go to NVSwitches"},
  };
  return cases;
}

class BadProfile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadProfile, IsRejectedWithTheField) {
  const BadCase& c = GetParam();
  auto profile = parse_profile(c.yaml, "case.yaml");
  ASSERT_FALSE(profile.ok()) << "accepted:\n" << c.yaml;
  EXPECT_EQ(profile.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(profile.error().path, "case.yaml");
  EXPECT_THAT(profile.error().message, HasSubstr(c.message)) << c.yaml;
}

INSTANTIATE_TEST_SUITE_P(Cases, BadProfile, ::testing::ValuesIn(bad_cases()),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(Profile, ValidBaseParsesWithDefaults) {
  auto profile = parse_profile(kBase + kOneGpu, "ok.yaml");
  ASSERT_TRUE(profile.ok()) << profile.error().describe();
  EXPECT_EQ(profile->name, "t");
  EXPECT_EQ(profile->seed, "t");  // the seed defaults to the name
  EXPECT_EQ(profile->cpu.vendor, "GenuineIntel");
  ASSERT_EQ(profile->pci.size(), 1U);
  ASSERT_TRUE(profile->pci[0].ports[0].device.has_value());
  EXPECT_EQ(profile->pci[0].ports[0].device->type, DeviceType::kGpu);
}

TEST(Profile, DefaultDistancesFollowTheCpuVendor) {
  auto intel = parse_profile(kBase, "intel.yaml");
  ASSERT_TRUE(intel.ok()) << intel.error().describe();
  auto image = render_host(*intel);
  ASSERT_TRUE(image.ok()) << image.error().describe();
  EXPECT_EQ(image->files.at("sys/devices/system/node/node0/distance"), "10 21\n");
  std::string amd_text = kBase;
  amd_text.replace(amd_text.find("cpu: {"), 6, "cpu: {vendor: AuthenticAMD, ");
  auto amd = parse_profile(amd_text, "amd.yaml");
  ASSERT_TRUE(amd.ok()) << amd.error().describe();
  auto amd_image = render_host(*amd);
  ASSERT_TRUE(amd_image.ok());
  EXPECT_EQ(amd_image->files.at("sys/devices/system/node/node1/distance"), "32 10\n");
}

TEST(Profile, IdentitiesDependOnTheSeedOnly) {
  auto a = parse_profile(kBase + "seed: one\n" + kOneGpu, "a.yaml");
  auto b = parse_profile(kBase + "seed: one\n" + kOneGpu, "b.yaml");
  auto c = parse_profile(kBase + "seed: two\n" + kOneGpu, "c.yaml");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const std::string nvml = std::string(kNvmlFixtureFile);
  const std::string fa = render_host(*a)->files.at(nvml);
  const std::string fb = render_host(*b)->files.at(nvml);
  const std::string fc = render_host(*c)->files.at(nvml);
  EXPECT_EQ(fa, fb);
  EXPECT_NE(fa, fc);  // UUIDs and serials differ
}

TEST(LoadProfile, ShippedProfilesAreExactlyTheIssueList) {
  std::vector<std::string> names;
  for (const ShippedProfile& p : shipped_profiles())
    names.emplace_back(p.name);
  EXPECT_THAT(names, ::testing::ElementsAre("cpu-only", "dgx-h100", "gaudi3", "hami-lab",
                                            "hgx-a100", "mi300x", "synthetic"));
  auto summaries = list_profiles();
  ASSERT_TRUE(summaries.ok()) << summaries.error().describe();
  for (const ProfileSummary& s : *summaries) {
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_LE(s.description.size(), 100U) << s.name;
  }
}

TEST(LoadProfile, UnknownNameListsTheShippedOnes) {
  auto p = load_profile("dgx-h200");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().path, "dgx-h200");
  EXPECT_THAT(p.error().message, HasSubstr("unknown profile (shipped: cpu-only, dgx-h100"));
}

TEST(LoadProfile, MissingFileIsNamed) {
  auto p = load_profile("/nonexistent/host.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(p.error().path, "/nonexistent/host.yaml");
}

TEST(LoadProfile, ReadsAFileAndNamesItInErrors) {
  test::TempDir dir;
  const auto good = dir.path() / "good.yaml";
  test::write_file(good, kBase + kOneGpu);
  auto p = load_profile(good.string());
  ASSERT_TRUE(p.ok()) << p.error().describe();
  EXPECT_EQ(p->source, good.string());
  const auto bad = dir.path() / "bad.yaml";
  test::write_file(bad, kBase + "colour: red\n");
  auto q = load_profile(bad.string());
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().path, bad.string());
  EXPECT_THAT(q.error().describe(), HasSubstr("bad.yaml: line 8: colour: unknown key"));
}

TEST(LoadProfile, SyntheticOverrides) {
  auto p = load_profile("synthetic:gpus=16,nics=4,switch_depth=2");
  ASSERT_TRUE(p.ok()) << p.error().describe();
  ASSERT_TRUE(p->synthetic.has_value());
  EXPECT_EQ(p->synthetic->gpus, 16U);
  EXPECT_EQ(p->synthetic->nics, 4U);
  EXPECT_EQ(p->synthetic->switch_depth, 2U);
  EXPECT_EQ(p->synthetic->sockets, 2U);  // not overridden: the profile's value
}

TEST(LoadProfile, BadOverridesAreNamed) {
  auto unknown = load_profile("synthetic:tpus=4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("synthetic.tpus: unknown parameter"));
  auto value = load_profile("synthetic:gpus=many");
  ASSERT_FALSE(value.ok());
  EXPECT_THAT(value.error().message, HasSubstr("synthetic.gpus: 'many' is not a whole number"));
  auto form = load_profile("synthetic:gpus=4,nics");
  ASSERT_FALSE(form.ok());
  EXPECT_THAT(form.error().message, HasSubstr("override 'nics' is not key=value"));
  auto not_synthetic = load_profile("dgx-h100:gpus=4");
  ASSERT_FALSE(not_synthetic.ok());
  EXPECT_THAT(not_synthetic.error().message, HasSubstr("only synthetic profiles take parameters"));
  auto too_many = load_profile("synthetic:gpus=129");
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.error().message, HasSubstr("synthetic.gpus: 129 is out of range"));
}

}  // namespace
}  // namespace nodetopo::mock
