// libpci, opened with dlopen on first use instead of linked.
//
// Linked, libpci and the libz it needs are mapped and relocated at every start of topo, 0.17 ms
// on this project's 2-vCPU VM, 6-8 % of a dump of a capture without a PCI bus, which never calls
// it. Opened on the first decode, a root without PCI functions (a container's, a CPU-only
// capture) does not pay for it, and one with them pays the same as before.
#pragma once

extern "C" {
#include <pci/pci.h>
}

#include <nodetopo/base/error.hpp>

namespace nodetopo::probes {

/// The libpci functions LibpciConfig calls, typed by the header the build compiled against.
struct LibpciApi {
  decltype(&::pci_alloc) alloc = nullptr;
  decltype(&::pci_init) init = nullptr;
  decltype(&::pci_cleanup) cleanup = nullptr;
  decltype(&::pci_set_param) set_param = nullptr;
  decltype(&::pci_get_dev) get_dev = nullptr;
  decltype(&::pci_free_dev) free_dev = nullptr;
  decltype(&::pci_setup_cache) setup_cache = nullptr;
  decltype(&::pci_fill_info) fill_info = nullptr;
  decltype(&::pci_find_cap) find_cap = nullptr;
  decltype(&::pci_read_byte) read_byte = nullptr;
  decltype(&::pci_read_word) read_word = nullptr;
  decltype(&::pci_read_long) read_long = nullptr;
};

/// The soname opened: libpci's ABI has been 3 since pciutils 3.0 (2008).
inline constexpr const char* kLibpciSoname = "libpci.so.3";

/// libpci's functions, loaded by the first call in the process (thread-safe; never unloaded, as
/// a linked library would not be). Each symbol is looked up at the version a link against the
/// same header binds (dlvsym), so a newer libpci with a changed default version of a function
/// serves the one this code was compiled for. The error (kUnavailable) names the soname and says
/// what the dynamic loader said; it is the same on every later call.
Result<const LibpciApi*> libpci_api();

namespace detail {
/// What libpci_api() does once, for the library `soname` (a test gives another): dlopen, then
/// every function by name and version. Errors (kUnavailable) name `soname`; a library that lacks
/// functions is closed again and the error lists them.
Result<LibpciApi> load_libpci(const char* soname);
}  // namespace detail

}  // namespace nodetopo::probes
