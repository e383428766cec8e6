#include "nvml_fake_host.hpp"

#include <cstdlib>
#include <stdexcept>
#include <system_error>

#include "fake_tree.hpp"

namespace nodetopo::test {

namespace fs = std::filesystem;

fs::path mock_nvml_library() {
  return build_dir() / "mock/nvml/libnvidia-ml.so.1";
}
fs::path mock_nvml_minimal_library() {
  return build_dir() / "mock/nvml/libnvidia-ml-minimal.so.1";
}

FakeHost::FakeHost() {
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.dir("sys/bus/pci/devices");
  w.dir("proc");
  // One package, one NUMA node, CPUs 0-3: the least hwloc's Linux backend accepts, so that the
  // CPU probe works too when a test runs the whole default probe list.
  const std::string cpu = "sys/devices/system/cpu";
  for (unsigned int c = 0; c < 4; ++c) {
    const std::string topo = cpu + "/cpu" + std::to_string(c) + "/topology";
    const std::string self_mask = std::to_string(1U << c);
    w.attr(topo + "/physical_package_id", "0");
    w.attr(topo + "/core_id", std::to_string(c));
    w.attr(topo + "/package_cpus", "f");
    w.attr(topo + "/package_cpus_list", "0-3");
    w.attr(topo + "/core_siblings", "f");
    w.attr(topo + "/core_cpus", self_mask);
    w.attr(topo + "/thread_siblings", self_mask);
  }
  w.attr(cpu + "/online", "0-3");
  w.attr(cpu + "/possible", "0-3");
  const std::string node0 = "sys/devices/system/node/node0";
  w.attr(node0 + "/cpumap", "f");
  w.attr(node0 + "/cpulist", "0-3");
  w.attr(node0 + "/distance", "10");
  w.attr(node0 + "/meminfo", "Node 0 MemTotal:       16384000 kB");
  w.attr("sys/devices/system/node/online", "0");
  write_tree(root(), image);
}

FakeHost::~FakeHost() {
  ::unsetenv("NODETOPO_MOCK_NVML_FIXTURE");
}

void FakeHost::add_pci_function(const std::string& bdf, std::uint16_t vendor, std::uint16_t device,
                                std::uint32_t class_code) {
  // "0000:1b:00.0" -> root bus "pci0000:1b".
  const std::string root_bus = "pci" + bdf.substr(0, bdf.rfind(':'));
  const std::string dir = "sys/devices/" + root_bus + "/" + bdf;
  mock::HostImage image;
  mock::ImageWriter w(image);
  w.attr(dir + "/vendor", mock::hex_id(vendor, 4));
  w.attr(dir + "/device", mock::hex_id(device, 4));
  w.attr(dir + "/subsystem_vendor", mock::hex_id(vendor, 4));
  w.attr(dir + "/subsystem_device", mock::hex_id(0x16c1, 4));
  w.attr(dir + "/class", mock::hex_id(class_code, 6));
  w.attr(dir + "/revision", "0xa1");
  // Standard type-0 header: ids, revision and class, subsystem ids at 0x2c.
  std::string config(64, '\0');
  auto put16 = [&](std::size_t at, unsigned v) {
    config[at] = static_cast<char>(v & 0xff);
    config[at + 1] = static_cast<char>((v >> 8) & 0xff);
  };
  put16(0x00, vendor);
  put16(0x02, device);
  config[0x08] = static_cast<char>(0xa1);
  config[0x09] = static_cast<char>(class_code & 0xff);
  config[0x0a] = static_cast<char>((class_code >> 8) & 0xff);
  config[0x0b] = static_cast<char>((class_code >> 16) & 0xff);
  put16(0x2c, vendor);
  put16(0x2e, 0x16c1);
  w.file(dir + "/config", config);
  w.link("sys/bus/pci/devices/" + bdf, dir);
  write_tree(root(), image);
}

void FakeHost::set_fixture(const nlohmann::json& fixture) {
  set_fixture_text(fixture.dump(2));
}

void FakeHost::set_fixture_text(const std::string& text) {
  // A test may replace the fixture; the old one is removed first, never written through.
  const fs::path path = root() / "nodetopo-mock/nvml.json";
  std::error_code ec;
  fs::remove(path, ec);
  mock::HostImage image;
  mock::ImageWriter(image).file("nodetopo-mock/nvml.json", text);
  write_tree(root(), image);
  if (::setenv("NODETOPO_MOCK_NVML_FIXTURE", path.c_str(), 1) != 0) {
    throw std::runtime_error("setenv failed");
  }
}

nlohmann::json fixture_gpu(unsigned int index, const std::string& bus_id) {
  return {
      {"index", index},
      {"pci_bus_id", bus_id},
      {"pci_device_id", "0x233010de"},
      {"pci_subsystem_id", "0x16c110de"},
      {"uuid", "GPU-3f1e7a52-0b4c-5d1e-9a7f-2c8b6e4d1a0" + std::to_string(index)},
      {"name", "NVIDIA H100 80GB HBM3"},
      {"serial", "165492200123" + std::to_string(index)},
      {"memory_total_bytes", 85520809984ULL},
      {"architecture", 9},
      {"nvlinks", nlohmann::json::array()},
  };
}

nlohmann::json active_link(unsigned int link, const std::string& remote, const char* type) {
  return {{"link", link}, {"active", true}, {"remote_pci_bus_id", remote}, {"remote_type", type}};
}

std::vector<std::string> hgx_gpus() {
  return {"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
          "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"};
}

std::vector<std::string> hgx_switches() {
  return {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"};
}

nlohmann::json hgx_h100(FakeHost& host) {
  for (const auto& bdf : hgx_gpus())
    host.add_gpu(bdf);
  for (const auto& bdf : hgx_switches())
    host.add_nvswitch(bdf);
  nlohmann::json devices = nlohmann::json::array();
  const auto gpus = hgx_gpus();
  const auto switches = hgx_switches();
  for (unsigned int i = 0; i < gpus.size(); ++i) {
    // NVML's own form for half of them (8-digit upper-case domain), the short form for the rest.
    std::string bus_id = gpus[i];
    if (i % 2 == 0) {
      bus_id = "0000" + bus_id;
      for (char& c : bus_id)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    nlohmann::json gpu = fixture_gpu(i, bus_id);
    for (unsigned int link = 0; link < 18; ++link) {
      const unsigned int sw = link < 5 ? 0 : link < 9 ? 1 : link < 13 ? 2 : 3;
      gpu["nvlinks"].push_back(active_link(link, switches[sw], "switch"));
    }
    gpu["fabric"] = {{"cluster_uuid", "6a0f4c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b"},
                     {"clique_id", 32766},
                     {"state", 3},
                     {"status", 0}};
    gpu["numa_node"] = i < 4 ? 0 : 1;
    devices.push_back(gpu);
  }
  return {{"driver_version", "550.54.15"}, {"cuda_driver_version", 12040}, {"devices", devices}};
}

}  // namespace nodetopo::test
