// Micro-benchmarks of nodetopo's hot paths (Google Benchmark). Discovery runs in process over mock
// hosts built once per size, so these numbers exclude process start-up, which the comparison
// driver (bench/compare.cpp) includes.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <nodetopo/exporters/json_model.hpp>
#include <nodetopo/exporters/matrix.hpp>
#include <nodetopo/exporters/resource_slices.hpp>
#include <nodetopo/mock/builder.hpp>
#include <nodetopo/probes/discovery.hpp>
#include <nodetopo/probes/environment.hpp>
#include <nodetopo/probes/nvml_probe.hpp>
#include <nodetopo/probes/parsers.hpp>
#include <nodetopo/probes/pci_ids.hpp>
#include <nodetopo/probes/pci_probe.hpp>
#include <nodetopo/topology/relations.hpp>

namespace {

using namespace nodetopo;

// A mock host per spec, built on first use and removed at exit; NVML through the mock library.
const mock::TempHost& host(const std::string& spec) {
  static std::map<std::string, std::unique_ptr<mock::TempHost>> hosts;
  auto& h = hosts[spec];
  if (!h) {
    auto built = mock::TempHost::create(spec);
    if (!built) {
      std::fprintf(stderr, "cannot build %s: %s\n", spec.c_str(), built.error().describe().c_str());
      std::exit(1);
    }
    h = std::make_unique<mock::TempHost>(std::move(built.value()));
  }
  return *h;
}

// The mock NVML library: where `topo` finds it ($NODETOPO_MOCK_NVML_LIBRARY, next to topo,
// installed), else in the build tree this benchmark belongs to (<build>/bench/.. ), so that the
// discovery benchmarks include NVML as `topo` does.
const std::string& mock_nvml_library() {
  static const std::string path = [] {
    std::string found = mock::nvml_library_path();
    if (!found.empty()) return found;
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path candidate =
        exe.parent_path().parent_path() / "mock/nvml/libnvidia-ml.so.1";
    if (!ec && std::filesystem::is_regular_file(candidate, ec)) return candidate.string();
    std::fprintf(stderr, "mock NVML library not found (set NODETOPO_MOCK_NVML_LIBRARY)\n");
    return std::string();
  }();
  return path;
}

probes::Discovery discover(const std::string& spec) {
  const mock::TempHost& h = host(spec);
  probes::ProbeOptions options;
  if (const std::string fixture = h.nvml_fixture(); !fixture.empty()) {
    options.nvml_library = mock_nvml_library();
    options.library_environment = {{std::string(mock::kNvmlFixtureEnv), fixture}};
  }
  auto root = probes::SysRoot::open(h.root(), probes::SysRoot::Liveness::kCapture);
  // As topo's main does, before the probes' threads: the environment the probes check.
  probes::write_process_environment(probes::discovery_environment(root.value(), options));
  return probes::discover(root.value(), options);
}

std::string synthetic(std::int64_t gpus) {
  return "synthetic:gpus=" + std::to_string(gpus) + ",nics=" + std::to_string(gpus) +
         ",switch_depth=2,nic_vfs=8";
}

void BM_ParseCpulist(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(probes::parse_cpulist("0-55,112-167"));
}
BENCHMARK(BM_ParseCpulist);

void BM_ParsePciAddress(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(probes::parse_pci_address("0000:1b:00.0"));
}
BENCHMARK(BM_ParsePciAddress);

void BM_ParseLinkSpeed(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(probes::parse_link_speed("32.0 GT/s PCIe"));
}
BENCHMARK(BM_ParseLinkSpeed);

// Maps the system's pci.ids and looks `queries` up in it, each iteration, as topo dump does.
void lookup_names(benchmark::State& state, const std::vector<probes::PciNameQuery>& queries) {
  if (!probes::PciIdsFile::open_system()) {
    state.SkipWithError("no pci.ids on this system");
    return;
  }
  for (auto _ : state) {
    const auto file = probes::PciIdsFile::open_system();
    benchmark::DoNotOptimize(probes::lookup_pci_names(*file, queries));
  }
}

// The pci.ids names of a small Intel node (the nine functions of hwloc's 2pa-pcidomain32bits
// capture) from the system's pci.ids, mapped and released as topo dump does: the scan skips
// the blocks of vendors not asked for (pci_ids.cpp).
void BM_PciIdsLookup(benchmark::State& state) {
  const std::vector<probes::PciNameQuery> queries = {
      {0x8086, 0x1237, 0x0600}, {0x8086, 0x7000, 0x0601}, {0x8086, 0x7010, 0x0101},
      {0x8086, 0x7020, 0x0c03}, {0x8086, 0x7113, 0x0680}, {0x1013, 0x00b8, 0x0300},
      {0x1af4, 0x1000, 0x0200}, {0x1af4, 0x1001, 0x0100}};
  lookup_names(state, queries);
}
BENCHMARK(BM_PciIdsLookup)->Unit(benchmark::kMicrosecond);

// The same for an Intel server with many chipset functions (the 26 distinct IDs of hwloc's
// 40intel64-2g2n4c+pcilocality capture): most of the time goes to Intel's block, 400 KB of
// devices whose IDs start with the digits asked for (2xxx, 3xxx) far more often than they match.
void BM_PciIdsLookupIntelServer(benchmark::State& state) {
  const std::vector<probes::PciNameQuery> queries = {
      {0x1000, 0x0079, 0x0104}, {0x102b, 0x0532, 0x0300}, {0x1077, 0x7322, 0x0c06},
      {0x14e4, 0x1639, 0x0200}, {0x8086, 0x244e, 0x0604}, {0x8086, 0x3407, 0x0600},
      {0x8086, 0x3408, 0x0604}, {0x8086, 0x340a, 0x0604}, {0x8086, 0x340c, 0x0604},
      {0x8086, 0x340d, 0x0604}, {0x8086, 0x340e, 0x0604}, {0x8086, 0x340f, 0x0604},
      {0x8086, 0x3410, 0x0604}, {0x8086, 0x3411, 0x0604}, {0x8086, 0x3422, 0x0800},
      {0x8086, 0x3423, 0x0800}, {0x8086, 0x342e, 0x0800}, {0x8086, 0x3a18, 0x0601},
      {0x8086, 0x3a20, 0x0101}, {0x8086, 0x3a34, 0x0c03}, {0x8086, 0x3a35, 0x0c03},
      {0x8086, 0x3a36, 0x0c03}, {0x8086, 0x3a37, 0x0c03}, {0x8086, 0x3a38, 0x0c03},
      {0x8086, 0x3a3a, 0x0c03}, {0x8086, 0x3a3c, 0x0c03}, {0x8086, 0x3a40, 0x0604}};
  lookup_names(state, queries);
}
BENCHMARK(BM_PciIdsLookupIntelServer)->Unit(benchmark::kMicrosecond);

// Resolving a device link through a warm SysRoot cache: no system call per lookup.
void BM_SysRootResolveCached(benchmark::State& state) {
  auto root = probes::SysRoot::open(host("dgx-h100").root(), probes::SysRoot::Liveness::kCapture);
  const auto names = root->list_dir("sys/bus/pci/devices").value();
  for (auto _ : state) {
    for (const std::string& n : names) {
      benchmark::DoNotOptimize(root->resolve("sys/bus/pci/devices/" + n));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(names.size()));
}
BENCHMARK(BM_SysRootResolveCached);

// Every probe over a mock host, in process; items = PCI functions.
void BM_Discover(benchmark::State& state) {
  const std::string spec = state.range(0) == 0 ? "dgx-h100" : synthetic(state.range(0));
  host(spec);
  std::size_t functions = 0;
  for (auto _ : state) {
    const probes::Discovery d = discover(spec);
    functions = d.topology.nodes_of_kind(NodeKind::kPciDevice).size() +
                d.topology.nodes_of_kind(NodeKind::kPciBridge).size();
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(functions));
  state.SetLabel(spec);
}
BENCHMARK(BM_Discover)->Arg(0)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);

// The NVML probe alone over the host's PCI tree (built once, copied untimed per iteration): the
// mock library's fixture parse in nvmlInit_v2, every NVML call and the probe's own work (18
// NVLinks per GPU). Items = GPUs.
void BM_NvmlProbe(benchmark::State& state) {
  const std::string spec = state.range(0) == 0 ? "dgx-h100" : synthetic(state.range(0));
  const mock::TempHost& h = host(spec);
  probes::ProbeOptions options;
  options.nvml_library = mock_nvml_library();
  ::setenv(std::string(mock::kNvmlFixtureEnv).c_str(), h.nvml_fixture().c_str(), 1);
  auto root = probes::SysRoot::open(h.root(), probes::SysRoot::Liveness::kCapture);
  TopologyBuilder pci_tree;
  probes::ProbeContext pci_ctx(root.value(), options, "pci");
  if (!probes::PciProbe().discover(pci_ctx, pci_tree)) {
    state.SkipWithError("PCI probe failed");
    return;
  }
  std::size_t gpus = 0;
  for (auto _ : state) {
    state.PauseTiming();
    TopologyBuilder builder = pci_tree;
    state.ResumeTiming();
    probes::ProbeContext ctx(root.value(), options, "nvml");
    if (auto done = probes::NvmlProbe().discover(ctx, builder); !done) {
      static std::string error;
      error = "NVML probe failed: " + done.error().describe();
      state.SkipWithError(error.c_str());
      return;
    }
    gpus = builder.nodes_of_kind(NodeKind::kAccelerator).size();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(gpus));
  state.SetLabel(spec);
}
BENCHMARK(BM_NvmlProbe)->Arg(0)->Arg(64)->Unit(benchmark::kMicrosecond);

// The full GPU+NIC relation matrix: N^2 pairs, each O(depth).
void BM_RelationMatrix(benchmark::State& state) {
  const probes::Discovery d = discover(synthetic(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(exporters::build_device_matrix(d.topology));
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_RelationMatrix)->RangeMultiplier(2)->Range(8, 64)->Unit(benchmark::kMicrosecond);

// The whole `topo dump --format json` model, relation matrix included; bytes = the document.
void BM_RenderJsonModel(benchmark::State& state) {
  const std::string spec = state.range(0) == 0 ? "dgx-h100" : synthetic(state.range(0));
  const probes::Discovery d = discover(spec);
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string json = exporters::render_json_model(d.topology, d.reports);
    bytes = json.size();
    benchmark::DoNotOptimize(json);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.SetLabel(spec);
}
BENCHMARK(BM_RenderJsonModel)->Arg(0)->Arg(64)->Unit(benchmark::kMicrosecond);

// The relation matrix as `topo matrix --format json` prints it (N^2 cells of N names).
void BM_RenderMatrixJson(benchmark::State& state) {
  const probes::Discovery d = discover(synthetic(state.range(0)));
  const exporters::DeviceMatrix matrix = exporters::build_device_matrix(d.topology);
  for (auto _ : state)
    benchmark::DoNotOptimize(exporters::render_matrix_json(matrix));
}
BENCHMARK(BM_RenderMatrixJson)->Arg(64)->Unit(benchmark::kMicrosecond);

// All pairs of one machine's GPUs and NICs through one RelationIndex (no matrix strings).
void BM_RelationIndexPairs(benchmark::State& state) {
  const probes::Discovery d = discover(synthetic(state.range(0)));
  std::vector<NodeIndex> devices = d.topology.nodes_of_kind(NodeKind::kAccelerator);
  for (const exporters::MatrixDevice& m : exporters::build_device_matrix(d.topology).devices) {
    if (m.kind == "nic") devices.push_back(m.node);
  }
  for (auto _ : state) {
    const RelationIndex index(d.topology);
    for (NodeIndex a : devices) {
      for (NodeIndex b : devices)
        benchmark::DoNotOptimize(index.between(a, b));
    }
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<std::int64_t>(devices.size() * devices.size()));
}
BENCHMARK(BM_RelationIndexPairs)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// A PCI function's local_cpus in the kernel's list form, as the model prints it per function.
void BM_CpuSetToList(benchmark::State& state) {
  CpuSet set;
  set.insert_range(0, 55);
  set.insert_range(112, 167);
  for (auto _ : state)
    benchmark::DoNotOptimize(set.to_list());
}
BENCHMARK(BM_CpuSetToList);

void BM_RenderResourceSlices(benchmark::State& state) {
  const probes::Discovery d = discover("dgx-h100");
  exporters::dra::SliceOptions options;
  options.node_name = "bench-node";
  for (auto _ : state) {
    auto slices = exporters::dra::build_resource_slices(d.topology, options);
    benchmark::DoNotOptimize(exporters::dra::render_slices_yaml(slices.value()));
  }
}
BENCHMARK(BM_RenderResourceSlices)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
