#include "nvml/nvml_library.hpp"

#include <array>
#include <string>
#include <type_traits>

#include <dlfcn.h>

#include <nodetopo/probes/nvml_probe.hpp>

#include "dl_error.hpp"

namespace nodetopo::probes {

using nvml_abi::nvmlReturn_t;

struct NvmlLibrary::Handle {
  void* dl = nullptr;
  explicit Handle(void* handle) : dl(handle) {}
  ~Handle() {
    // Unloading is safe: the session has shut NVML down before the last copy of the library
    // goes away, and the agent reopens it on every refresh.
    if (dl != nullptr) ::dlclose(dl);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

namespace {

constexpr std::array kSymbolNames = {
#define NODETOPO_NVML_NAME(name, required) std::string_view(#name),
    NODETOPO_NVML_SYMBOLS(NODETOPO_NVML_NAME)
#undef NODETOPO_NVML_NAME
};

}  // namespace

std::span<const std::string_view> nvml_symbols() {
  return kSymbolNames;
}

Result<NvmlLibrary> NvmlLibrary::open(const std::string& path) {
  ::dlerror();  // clear a stale message
  // RTLD_LOCAL: NVML's symbols must not leak into the global namespace of the process (a mock and
  // a real library could otherwise shadow each other). RTLD_NOW: fail here, not mid-probe.
  void* dl = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (dl == nullptr) {
    return make_error(
        ErrorCode::kUnavailable,
        "NVML library '" + path +
            "' cannot be loaded (no NVIDIA driver installed here?): " + detail::last_dl_error());
  }
  auto handle = std::make_shared<Handle>(dl);
  Api api;
  std::string missing;
  auto resolve = [&](auto& field, const char* name, bool required) {
    ::dlerror();
    void* sym = ::dlsym(dl, name);
    if (sym == nullptr) {
      if (required) missing += missing.empty() ? name : std::string(", ") + name;
      return;
    }
    // POSIX guarantees that object and function pointers convert through dlsym's void*.
    field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(sym);
  };
#define NODETOPO_NVML_RESOLVE(name, required) resolve(api.name, #name, required);
  NODETOPO_NVML_SYMBOLS(NODETOPO_NVML_RESOLVE)
#undef NODETOPO_NVML_RESOLVE
  if (!missing.empty()) {
    return make_error(ErrorCode::kUnavailable,
                      "NVML library '" + path + "' lacks required symbols (" + missing +
                          "): not an NVML library, or an NVIDIA driver too old for nodetopo");
  }
  return NvmlLibrary(path, std::move(handle), api);
}

std::string NvmlLibrary::describe(nvmlReturn_t rc) const {
  std::string text;
  if (api_.nvmlErrorString != nullptr) {
    if (const char* s = api_.nvmlErrorString(rc); s != nullptr) text = s;
  }
  const std::string code = "NVML error " + std::to_string(static_cast<int>(rc));
  return text.empty() ? code : text + " (" + code + ")";
}

NvmlSession::NvmlSession(const NvmlLibrary& library)
    : library_(library), init_(library.api().nvmlInit_v2()) {}

NvmlSession::~NvmlSession() {
  if (ok()) library_.api().nvmlShutdown();
}

}  // namespace nodetopo::probes
