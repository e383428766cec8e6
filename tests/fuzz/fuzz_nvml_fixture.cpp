// The mock NVML library's JSON fixture parser (mock/nvml/fixture.cpp and its JSON reader): any
// input gives a fixture or a message, and every fixture it gives is whole (each device's links
// sorted and unique, as the library's lookups assume).
#include <cstdlib>

#include "fixture.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nodetopo::mock_nvml;
  Text error;
  Fixture* f = parse_fixture(reinterpret_cast<const char*>(data), size, error);
  if (f == nullptr) {
    if (error.size == 0) std::abort();  // a refusal always says why
  } else {
    for (const Device& d : f->devices) {
      for (std::uint32_t i = 1; i < d.nvlinks.size; ++i) {
        if (d.nvlinks.data[i - 1].number >= d.nvlinks.data[i].number) std::abort();
      }
      for (const NvLink& l : d.nvlinks) {
        if (d.find_link(l.number) != &l) std::abort();
      }
    }
  }
  free_fixture(f);
  error.free();
  return 0;
}
