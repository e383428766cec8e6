#include "pci/libpci_library.hpp"

#include <string>
#include <type_traits>

#include <dlfcn.h>

namespace nodetopo::probes {

namespace {

std::string last_dl_error() {
  const char* text = ::dlerror();
  return text != nullptr ? std::string(text) : std::string("unknown dynamic loader error");
}

}  // namespace

namespace detail {

Result<LibpciApi> load_libpci(const char* soname) {
  ::dlerror();  // clear a stale message
  // RTLD_LOCAL: libpci's symbols stay out of the global namespace, where a linked copy in a test
  // (libpci as the oracle of pci.ids) would meet them. RTLD_NOW: fail here, not mid-decode.
  void* dl = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (dl == nullptr) {
    return make_error(ErrorCode::kUnavailable,
                      std::string(soname) +
                          " cannot be loaded (Debian package libpci3), so PCI configuration "
                          "space cannot be decoded: " +
                          last_dl_error());
  }
  LibpciApi api;
  std::string missing;
  auto resolve = [&](auto& field, const char* name, const char* version) {
    void* sym = ::dlvsym(dl, name, version);
    if (sym == nullptr) {
      missing += (missing.empty() ? "" : ", ") + std::string(name) + "@" + version;
      return;
    }
    // POSIX guarantees that object and function pointers convert through dlsym's void*.
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(sym);
  };
  // The versions a link against pciutils 3.8's header binds (objdump -T on such a binary).
  resolve(api.alloc, "pci_alloc", "LIBPCI_3.0");
  resolve(api.init, "pci_init", "LIBPCI_3.5");
  resolve(api.cleanup, "pci_cleanup", "LIBPCI_3.0");
  resolve(api.set_param, "pci_set_param", "LIBPCI_3.0");
  resolve(api.get_dev, "pci_get_dev", "LIBPCI_3.0");
  resolve(api.free_dev, "pci_free_dev", "LIBPCI_3.0");
  resolve(api.setup_cache, "pci_setup_cache", "LIBPCI_3.0");
  resolve(api.fill_info, "pci_fill_info", "LIBPCI_3.8");
  resolve(api.find_cap, "pci_find_cap", "LIBPCI_3.1");
  resolve(api.read_byte, "pci_read_byte", "LIBPCI_3.0");
  resolve(api.read_word, "pci_read_word", "LIBPCI_3.0");
  resolve(api.read_long, "pci_read_long", "LIBPCI_3.0");
  if (!missing.empty()) {
    ::dlclose(dl);
    return make_error(
        ErrorCode::kUnavailable,
        std::string(soname) + " lacks " + missing +
            ": not libpci, or one older than the pciutils 3.8 nodetopo was built for");
  }
  return api;  // the handle stays open until the process ends, as a linked library would
}

}  // namespace detail

Result<const LibpciApi*> libpci_api() {
  // Once per process, thread-safe (a function-local static): the readers of one discovery may
  // open their decoders on several threads.
  static const Result<LibpciApi> loaded = detail::load_libpci(kLibpciSoname);
  if (!loaded) return loaded.error();
  return &loaded.value();
}

}  // namespace nodetopo::probes
