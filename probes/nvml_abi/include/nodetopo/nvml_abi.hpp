// The subset of the NVML C ABI (libnvidia-ml.so.1) that nodetopo calls, declared from NVIDIA's
// public NVML API reference (docs.nvidia.com/deploy/nvml-api), not copied from nvml.h.
//
// Only what the NVML probe uses is here. The layouts must match the vendor library byte for byte:
// the probe passes these structs to the real driver, so every struct carries static_asserts on its
// size and field offsets as documented for x86-64 and aarch64 Linux (LP64, 4-byte unsigned int and
// enums). This header is self-contained (no nodetopo includes): the mock library in mock/nvml/
// defines its exported functions against the same declarations, so a signature drift between the
// probe and the mock fails to compile.
#pragma once

#include <cstddef>

namespace nodetopo::nvml_abi {

// ---- Return codes (nvmlReturn_t, a C enum: 4 bytes)
// ----------------------------------------------
enum nvmlReturn_t : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999,
};
static_assert(sizeof(nvmlReturn_t) == 4);

// ---- Handles and small enums -------------------------------------------------------------------
/// Opaque device handle (a pointer to a driver-private struct).
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;

/// nvmlEnableState_t (C enum): the answer of nvmlDeviceGetNvLinkState.
enum nvmlEnableState_t : int { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
static_assert(sizeof(nvmlEnableState_t) == 4);

/// nvmlIntNvLinkDeviceType_t (C enum): what sits at the far end of an NVLink.
enum nvmlIntNvLinkDeviceType_t : int {
  NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
  NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
  NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
  NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
};
static_assert(sizeof(nvmlIntNvLinkDeviceType_t) == 4);

/// nvmlDeviceArchitecture_t is a typedef of unsigned int.
using nvmlDeviceArchitecture_t = unsigned int;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_KEPLER = 2;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_MAXWELL = 3;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_PASCAL = 4;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_VOLTA = 5;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_TURING = 6;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_AMPERE = 7;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_ADA = 8;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_HOPPER = 9;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_BLACKWELL = 10;
inline constexpr nvmlDeviceArchitecture_t NVML_DEVICE_ARCH_UNKNOWN = 0xffffffffU;

// ---- Buffer sizes ------------------------------------------------------------------------------
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_SERIAL_BUFFER_SIZE = 30;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
/// Link indexes run 0 .. NVML_NVLINK_MAX_LINKS-1 (12 before R525, 18 since: Hopper has 18).
inline constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;
inline constexpr unsigned int NVML_GPU_FABRIC_UUID_LEN = 16;

// ---- nvmlPciInfo_t (filled by nvmlDeviceGetPciInfo_v3, nvmlDeviceGetNvLinkRemotePciInfo_v2) ----
struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];  ///< "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;     ///< device id << 16 | vendor id
  unsigned int pciSubSystemId;  ///< subsystem device id << 16 | subsystem vendor id
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  ///< "%08X:%02X:%02X.0"
};
static_assert(offsetof(nvmlPciInfo_t, domain) == 16);
static_assert(offsetof(nvmlPciInfo_t, pciSubSystemId) == 32);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlPciInfo_t) == 68);

// ---- nvmlMemory_t (nvmlDeviceGetMemoryInfo, the unversioned v1) --------------------------------
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_t) == 24);

// ---- GPU fabric (NVLink domain) information ----------------------------------------------------
/// nvmlGpuFabricState_t is a typedef of unsigned char.
using nvmlGpuFabricState_t = unsigned char;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_NOT_SUPPORTED = 0;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_NOT_STARTED = 1;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_IN_PROGRESS = 2;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_COMPLETED = 3;

/// nvmlGpuFabricInfo_t: the unversioned struct of nvmlDeviceGetGpuFabricInfo (R525+, deprecated
/// in CUDA 13.0 and announced for removal in 14.0).
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;  ///< meaningful only when state is COMPLETED
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
};
static_assert(offsetof(nvmlGpuFabricInfo_t, status) == 16);
static_assert(offsetof(nvmlGpuFabricInfo_t, cliqueId) == 20);
static_assert(offsetof(nvmlGpuFabricInfo_t, state) == 24);
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28);

/// nvmlGpuFabricInfo_v2_t (R550+): a leading version word and a trailing health mask.
struct nvmlGpuFabricInfo_v2_t {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
};
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, clusterUuid) == 4);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, status) == 20);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, cliqueId) == 24);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, state) == 28);
static_assert(offsetof(nvmlGpuFabricInfo_v2_t, healthMask) == 32);
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36);

/// nvmlGpuFabricInfo_v3_t (R570+): v2 plus a health summary byte.
struct nvmlGpuFabricInfo_v3_t {
  unsigned int version;
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
  unsigned int healthMask;
  unsigned char healthSummary;
};
static_assert(offsetof(nvmlGpuFabricInfo_v3_t, healthMask) == 32);
static_assert(offsetof(nvmlGpuFabricInfo_v3_t, healthSummary) == 36);
static_assert(sizeof(nvmlGpuFabricInfo_v3_t) == 40);

/// NVML_STRUCT_VERSION(data, ver): the struct size in the low bits, the version in the top byte.
constexpr unsigned int nvml_struct_version(std::size_t size, unsigned int version) {
  return static_cast<unsigned int>(size) | (version << 24U);
}
inline constexpr unsigned int nvmlGpuFabricInfo_v2 =
    nvml_struct_version(sizeof(nvmlGpuFabricInfo_v2_t), 2);
inline constexpr unsigned int nvmlGpuFabricInfo_v3 =
    nvml_struct_version(sizeof(nvmlGpuFabricInfo_v3_t), 3);

// ---- Function types (all C linkage, default calling convention) --------------------------------
extern "C" {
using nvmlInit_v2_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetDriverVersion_fn = nvmlReturn_t (*)(char*, unsigned int);
using nvmlSystemGetCudaDriverVersion_v2_fn = nvmlReturn_t (*)(int*);
using nvmlDeviceGetCount_v2_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_v2_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetPciInfo_v3_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using nvmlDeviceGetName_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetUUID_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetSerial_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetArchitecture_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDeviceArchitecture_t*);
using nvmlDeviceGetNumaNodeId_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetGpuFabricInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpuFabricInfo_t*);
/// Takes a pointer to a versioned struct (nvmlGpuFabricInfo_v2_t or _v3_t) whose `version` word
/// the caller has set; the driver answers NVML_ERROR_ARGUMENT_VERSION_MISMATCH to versions it does
/// not know. Declared with void* because the pointee type depends on that word.
using nvmlDeviceGetGpuFabricInfoV_fn = nvmlReturn_t (*)(nvmlDevice_t, void*);
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                     nvmlEnableState_t*);
using nvmlDeviceGetNvLinkRemotePciInfo_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                nvmlPciInfo_t*);
using nvmlDeviceGetNvLinkRemoteDeviceType_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                nvmlIntNvLinkDeviceType_t*);
}

}  // namespace nodetopo::nvml_abi
