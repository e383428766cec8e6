// NvmlLibrary: the NVML shared library opened with dlopen, its symbols resolved with dlsym.
//
// nodetopo has no link-time dependency on NVIDIA: the binary must start where no driver is
// installed, and tests load the mock library (mock/nvml/) through this very code by path.
#pragma once

#include <memory>
#include <string>

#include <nodetopo/base/error.hpp>
#include <nodetopo/nvml_abi.hpp>

namespace nodetopo::probes {

// Every NVML function the probe calls: X(name, required). A required symbol missing means the
// library is not NVML (or is very old) and the probe reports it unavailable; an optional one
// missing only drops what it would have told (older drivers lack NUMA ids and fabric info).
// nvml_symbols() and the Api struct are both generated from this one list.
#define NODETOPO_NVML_SYMBOLS(X)                \
  X(nvmlInit_v2, true)                          \
  X(nvmlShutdown, true)                         \
  X(nvmlDeviceGetCount_v2, true)                \
  X(nvmlDeviceGetHandleByIndex_v2, true)        \
  X(nvmlDeviceGetPciInfo_v3, true)              \
  X(nvmlErrorString, false)                     \
  X(nvmlSystemGetDriverVersion, false)          \
  X(nvmlSystemGetCudaDriverVersion_v2, false)   \
  X(nvmlDeviceGetName, false)                   \
  X(nvmlDeviceGetUUID, false)                   \
  X(nvmlDeviceGetSerial, false)                 \
  X(nvmlDeviceGetMemoryInfo, false)             \
  X(nvmlDeviceGetArchitecture, false)           \
  X(nvmlDeviceGetNumaNodeId, false)             \
  X(nvmlDeviceGetGpuFabricInfo, false)          \
  X(nvmlDeviceGetGpuFabricInfoV, false)         \
  X(nvmlDeviceGetNvLinkState, false)            \
  X(nvmlDeviceGetNvLinkRemotePciInfo_v2, false) \
  X(nvmlDeviceGetNvLinkRemoteDeviceType, false)

class NvmlLibrary {
 public:
  /// Function pointers; optional ones are nullptr when the library lacks them.
  struct Api {
#define NODETOPO_NVML_API_FIELD(name, required) nvml_abi::name##_fn name = nullptr;
    NODETOPO_NVML_SYMBOLS(NODETOPO_NVML_API_FIELD)
#undef NODETOPO_NVML_API_FIELD
  };

  /// dlopens `path` (a file path, or a soname searched the way the dynamic linker does) and
  /// resolves the symbols. Errors are kUnavailable and say which library and what was wrong.
  static Result<NvmlLibrary> open(const std::string& path);

  [[nodiscard]] const Api& api() const {
    return api_;
  }
  [[nodiscard]] const std::string& path() const {
    return path_;
  }

  /// "Driver Not Loaded (NVML error 9)": the library's own text when it has nvmlErrorString.
  [[nodiscard]] std::string describe(nvml_abi::nvmlReturn_t rc) const;

 private:
  struct Handle;  // owns the dlopen handle; dlclose on destruction
  NvmlLibrary(std::string path, std::shared_ptr<Handle> handle, Api api)
      : path_(std::move(path)), handle_(std::move(handle)), api_(api) {}

  std::string path_;
  std::shared_ptr<Handle> handle_;
  Api api_;
};

/// nvmlInit_v2 on construction (see ok()), nvmlShutdown on destruction: NVML reference-counts
/// initialisations, so every successful init is paired with exactly one shutdown.
class NvmlSession {
 public:
  explicit NvmlSession(const NvmlLibrary& library);
  ~NvmlSession();
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  [[nodiscard]] nvml_abi::nvmlReturn_t init_result() const { return init_; }
  [[nodiscard]] bool ok() const { return init_ == nvml_abi::NVML_SUCCESS; }

 private:
  const NvmlLibrary& library_;
  nvml_abi::nvmlReturn_t init_;
};

}  // namespace nodetopo::probes
