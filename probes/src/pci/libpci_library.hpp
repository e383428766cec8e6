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

/// The libpci functions LibpciConfig calls, each with the version a link against pciutils 3.8's
/// header binds (objdump -T on such a binary): X(name, version).
#define NODETOPO_LIBPCI_FUNCTIONS(X) \
  X(pci_alloc, "LIBPCI_3.0")         \
  X(pci_init, "LIBPCI_3.5")          \
  X(pci_cleanup, "LIBPCI_3.0")       \
  X(pci_set_param, "LIBPCI_3.0")     \
  X(pci_get_dev, "LIBPCI_3.0")       \
  X(pci_free_dev, "LIBPCI_3.0")      \
  X(pci_setup_cache, "LIBPCI_3.0")   \
  X(pci_fill_info, "LIBPCI_3.8")     \
  X(pci_find_cap, "LIBPCI_3.1")      \
  X(pci_read_byte, "LIBPCI_3.0")     \
  X(pci_read_word, "LIBPCI_3.0")     \
  X(pci_read_long, "LIBPCI_3.0")

/// Those functions, typed by the header the build compiled against; named as in libpci.
struct LibpciApi {
#define NODETOPO_LIBPCI_FIELD(name, version) decltype(&::name) name = nullptr;
  NODETOPO_LIBPCI_FUNCTIONS(NODETOPO_LIBPCI_FIELD)
#undef NODETOPO_LIBPCI_FIELD
};

/// The soname opened: libpci's ABI has been 3 since pciutils 3.0 (2008).
inline constexpr const char* kLibpciSoname = "libpci.so.3";

/// libpci's functions, loaded by the first call in the process (thread-safe; never unloaded, as
/// a linked library would not be). Each symbol is looked up at the version a link against the
/// same header binds (dlvsym), so a newer libpci with a changed default version of a function
/// serves the one this code was compiled for. The error names the soname and says what the
/// dynamic loader said; it is the same on every later call. It is kIo, not kUnavailable: libpci is
/// no optional facility, and a root with PCI functions whose configuration space cannot be
/// decoded is a failed PCI probe (a degraded discovery), never one reported as having no PCI bus.
Result<const LibpciApi*> libpci_api();

namespace detail {
/// What libpci_api() does once, for the library `soname` (a test gives another): dlopen, then
/// every function by name and version. Errors (kIo) name `soname`; a library that lacks
/// functions is closed again and the error lists them.
Result<LibpciApi> load_libpci(const char* soname);
}  // namespace detail

}  // namespace nodetopo::probes
