#include "pci/libpci_library.hpp"

#include <string>
#include <type_traits>

#include <dlfcn.h>

#include "dl_error.hpp"

namespace nodetopo::probes {

namespace detail {

Result<LibpciApi> load_libpci(const char* soname) {
  ::dlerror();  // clear a stale message
  // RTLD_LOCAL: libpci's symbols stay out of the global scope, where a library loaded later would
  // bind to them. RTLD_NOW: fail here, not mid-decode.
  void* dl = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (dl == nullptr) {
    return make_error(ErrorCode::kIo,
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
#define NODETOPO_LIBPCI_RESOLVE(name, version) resolve(api.name, #name, version);
  NODETOPO_LIBPCI_FUNCTIONS(NODETOPO_LIBPCI_RESOLVE)
#undef NODETOPO_LIBPCI_RESOLVE
  if (!missing.empty()) {
    ::dlclose(dl);
    return make_error(
        ErrorCode::kIo,
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
