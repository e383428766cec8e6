// The dynamic loader's last message, for the libraries the probes open with dlopen (NVML, libpci).
#pragma once

#include <string>

#include <dlfcn.h>

namespace nodetopo::probes::detail {

/// dlerror()'s message (which also clears it), or a fixed text when the loader has none.
inline std::string last_dl_error() {
  const char* text = ::dlerror();
  return text != nullptr ? std::string(text) : std::string("unknown dynamic loader error");
}

}  // namespace nodetopo::probes::detail
