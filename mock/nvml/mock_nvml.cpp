// A drop-in libnvidia-ml.so.1 for machines without an NVIDIA GPU: the NVML functions the NVML
// probe calls, answering from the JSON fixture named by NODETOPO_MOCK_NVML_FIXTURE
// (docs/mock-nvml.md), with the fixture's fault injection.
//
// It behaves like the vendor library where the probe could tell the difference: calls before
// nvmlInit_v2 answer UNINITIALIZED, init/shutdown are reference-counted, strings that do not fit
// answer INSUFFICIENT_SIZE, link indexes a GPU lacks answer INVALID_ARGUMENT, busId strings have
// NVML's upper-case 8-digit-domain form. Only the NVML symbols are visible (the linker version
// script of CMakeLists.txt). Like the vendor library it needs only libc: it is C++ compiled
// without exceptions and linked without the C++ runtime (docs/mock-nvml.md, "Linking").
//
// Every call is O(1) or O(log n) in the size of the fixture (handles are checked by address,
// links and injected faults found by binary search, remote PCI ids resolved when the fixture is
// loaded), so that a probe of a 64-GPU mock spends its time in the probe, not here.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodetopo/nvml_abi.hpp>

#include "fixture.hpp"
#include "memory.hpp"

using namespace nodetopo::nvml_abi;
using nodetopo::mock_nvml::BusId;
using nodetopo::mock_nvml::Device;
using nodetopo::mock_nvml::Fixture;
using nodetopo::mock_nvml::Str;
using nodetopo::mock_nvml::Text;

namespace {

// No C++ runtime (docs/mock-nvml.md, "Linking"): a pthread mutex, not std::mutex (whose lock()
// reports errors through libstdc++), and a State that is constant-initialised, so that no
// constructor, guard or destructor runs at load, at first use or at exit.
struct State {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  int refcount = 0;
  Fixture* fixture = nullptr;
  // Why the last nvmlInit_v2 failed, and the code it returned: nvmlErrorString(code) answers
  // this text, so that the reason (the fixture's path, errno, the refused file type or size, the
  // field) reaches the probe's message through the call the real library's errors go through.
  nvmlReturn_t init_error = NVML_SUCCESS;
  Text init_error_text;
};

constinit State g_state;

class Lock {
 public:
  Lock() { pthread_mutex_lock(&g_state.mutex); }
  ~Lock() { pthread_mutex_unlock(&g_state.mutex); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

// NODETOPO_MOCK_NVML_DEBUG=1 prints why a fixture was refused; by default the mock is silent,
// like a host whose driver is missing.
void debug(const char* message) {
  const char* flag = std::getenv("NODETOPO_MOCK_NVML_DEBUG");
  if (flag != nullptr && *flag != '\0' && std::strcmp(flag, "0") != 0) {
    std::fprintf(stderr, "mock nvml: %s\n", message);
  }
}

// The largest fixture read: a DGX fixture is some 15 KiB.
constexpr std::size_t kMaxFixtureBytes = std::size_t{16} << 20;

// Why a fixture could not be used: the nvmlReturn_t nvmlInit_v2 answers and the reason.
struct Refusal {
  nvmlReturn_t code = NVML_ERROR_UNKNOWN;
  Text reason;
};

// The whole file in one buffer (one allocation, read() straight into it). Only a regular file of
// bounded size: a FIFO would block every NVML call, a /dev/zero-like node grow without bound.
// A file that cannot be opened for want of permission answers NO_PERMISSION, as the vendor
// library does for /dev/nvidia*; any other unreadable fixture DRIVER_NOT_LOADED (the fixture is
// the mock's driver). False with `why` set, or true with the text in `out`.
bool read_file(const char* path, Text& out, Refusal& why) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    why.code =
        (err == EACCES || err == EPERM) ? NVML_ERROR_NO_PERMISSION : NVML_ERROR_DRIVER_NOT_LOADED;
    why.reason.append("cannot open it: ");
    why.reason.append(std::strerror(err));
    return false;
  }
  why.code = NVML_ERROR_DRIVER_NOT_LOADED;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    why.reason.append("cannot stat it: ");
    why.reason.append(std::strerror(errno));
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    const char* type = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                                              : "not a regular file";
    why.reason.append("not read: ");
    why.reason.append(type);
    why.reason.append(", not a regular file");
    ::close(fd);
    return false;
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxFixtureBytes) {
    why.reason.append("not read: ");
    why.reason.append_signed(st.st_size);
    why.reason.append(" bytes, larger than 16 MiB");
    ::close(fd);
    return false;
  }
  // One byte more than the size, so that a file that grew is noticed by the first read().
  if (!out.reserve(static_cast<std::size_t>(st.st_size) + 1)) {
    why.reason.append("not read: out of memory");
    ::close(fd);
    return false;
  }
  while (out.size <= kMaxFixtureBytes) {
    if (out.size + 1 >= out.capacity && !out.reserve(out.capacity)) {
      why.reason.append("not read: out of memory");
      ::close(fd);
      return false;
    }
    const ssize_t n = ::read(fd, out.data + out.size, out.capacity - 1 - out.size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      why.reason.append("cannot read it: ");
      why.reason.append(std::strerror(errno));
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.size += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (out.size > kMaxFixtureBytes) {
    why.reason.append("not read: grew beyond 16 MiB while being read");
    return false;
  }
  out.data[out.size] = '\0';
  return true;
}

// The fixture, or nullptr with `why` set ("mock NVML fixture PATH: REASON").
Fixture* load_fixture(Refusal& why) {
  const char* path = std::getenv("NODETOPO_MOCK_NVML_FIXTURE");
  if (path == nullptr || *path == '\0') {
    // Like a host without a driver: nothing to point at.
    why.code = NVML_ERROR_LIBRARY_NOT_FOUND;
    why.reason.append(
        "mock NVML: NODETOPO_MOCK_NVML_FIXTURE is not set, no fixture to answer from");
    return nullptr;
  }
  why.reason.append("mock NVML fixture ");
  why.reason.append(path);
  why.reason.append(": ");
  Text text;
  if (!read_file(path, text, why)) {
    text.free();
    return nullptr;
  }
  Text error;
  Fixture* fixture = nodetopo::mock_nvml::parse_fixture(text.data, text.size, error);
  text.free();
  if (fixture == nullptr) {
    why.code = NVML_ERROR_UNKNOWN;
    why.reason.append(error.view());
  }
  error.free();
  return fixture;
}

std::optional<nvmlReturn_t> injected(const nodetopo::mock_nvml::FailMap& fail, const char* fn) {
  if (const int* code = fail.find(fn)) return static_cast<nvmlReturn_t>(*code);
  return std::nullopt;
}

// NVML's own text for a code (nvmlErrorString's answers).
const char* code_text(nvmlReturn_t result) noexcept {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Argument version mismatch";
    case NVML_ERROR_DEPRECATED:
      return "Deprecated";
    default:
      return "Unknown Error";
  }
}

// The device a handle points to, or nullptr when it is not one of this fixture's: a handle is
// the address of its Device in the fixture's vector.
const Device* device_of(const Fixture& f, nvmlDevice_t handle) {
  const auto address = reinterpret_cast<std::uintptr_t>(handle);
  const auto base = reinterpret_cast<std::uintptr_t>(f.devices.data);
  if (address < base) return nullptr;
  const std::uintptr_t offset = address - base;
  if (offset % sizeof(Device) != 0 || offset / sizeof(Device) >= f.devices.size) return nullptr;
  return &f.devices.data[offset / sizeof(Device)];
}

// Runs `body` under the lock for an initialised library, after the top-level fault injection.
template <class Body>
nvmlReturn_t with_fixture(const char* fn, Body&& body) noexcept {
  const Lock lock;
  if (g_state.refcount == 0 || g_state.fixture == nullptr) return NVML_ERROR_UNINITIALIZED;
  if (auto code = injected(g_state.fixture->fail, fn)) return *code;
  return body(*g_state.fixture);
}

// As with_fixture, for a call on one device handle (validated, then the device's own faults).
template <class Body>
nvmlReturn_t with_device(const char* fn, nvmlDevice_t handle, Body&& body) noexcept {
  return with_fixture(fn, [&](Fixture& f) -> nvmlReturn_t {
    const Device* device = device_of(f, handle);
    if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (auto code = injected(device->fail, fn)) return *code;
    return body(f, *device);
  });
}

nvmlReturn_t copy_string(const std::optional<Str>& value, char* out, unsigned int length) {
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < value->size + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value->data, value->size + 1);  // the parser's strings are NUL-terminated
  return NVML_SUCCESS;
}

// `digits` upper-case hex digits of `value` (its low bits), then `separator` unless it is '\0'.
char* put_hex(char* out, std::uint32_t value, int digits, char separator) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int i = digits - 1; i >= 0; --i) {
    out[i] = kHex[value & 0xfU];
    value >>= 4;
  }
  out += digits;
  if (separator != '\0') *out++ = separator;
  return out;
}

// "DDDDDDDD:BB:DD.F" ("%08X:%02X:%02X.%X") in busId and "DDDD:BB:DD.F" in busIdLegacy, as NVML
// writes them. The fixture parser bounds bus (2 digits), device (0x1f) and function (7), so the
// fixed widths hold every value.
void fill_pci(const BusId& id, std::uint32_t device_id, std::uint32_t subsystem_id,
              nvmlPciInfo_t* out) {
  *out = nvmlPciInfo_t{};
  out->domain = id.domain;
  out->bus = id.bus;
  out->device = id.device;
  out->pciDeviceId = device_id;
  out->pciSubSystemId = subsystem_id;
  auto format = [&](char* text, int domain_digits) {
    char* p = put_hex(text, id.domain, domain_digits, ':');
    p = put_hex(p, id.bus, 2, ':');
    p = put_hex(p, id.device, 2, '.');
    put_hex(p, id.function, 1, '\0');  // the terminator is there: *out was zeroed
  };
  format(out->busId, 8);
  format(out->busIdLegacy, 4);  // the low 16 bits of the domain
}

// The fixture's link entry, or nullptr for a link index this GPU does not have.
const nodetopo::mock_nvml::NvLink* find_link(const Device& d, unsigned int link) {
  return d.find_link(link);
}

template <class Versioned>
void fill_fabric(const nodetopo::mock_nvml::Fabric& f, Versioned* out) {
  std::memcpy(out->clusterUuid, f.cluster_uuid.data(), f.cluster_uuid.size());
  out->status = static_cast<nvmlReturn_t>(f.status);
  out->cliqueId = f.clique_id;
  out->state = f.state;
}

}  // namespace

#define NODETOPO_MOCK_EXPORT extern "C" __attribute__((visibility("default")))

// ---- Initialisation
// ------------------------------------------------------------------------------

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlInit_v2() noexcept {
  const Lock lock;
  State& s = g_state;
  if (s.refcount > 0) {
    if (auto code = injected(s.fixture->fail, "nvmlInit_v2")) return *code;
    ++s.refcount;
    return NVML_SUCCESS;
  }
  Refusal why;
  Fixture* fixture = load_fixture(why);
  if (fixture == nullptr) {
    debug(why.reason.c_str());
    s.init_error = why.code;
    s.init_error_text.clear();
    s.init_error_text.append(code_text(why.code));
    s.init_error_text.append(": ");
    s.init_error_text.append(why.reason.view());
    why.reason.free();
    return why.code;
  }
  why.reason.free();
  s.init_error = NVML_SUCCESS;
  s.init_error_text.clear();
  if (auto code = injected(fixture->fail, "nvmlInit_v2")) {
    nodetopo::mock_nvml::free_fixture(fixture);
    return *code;
  }
  s.fixture = fixture;
  s.refcount = 1;
  return NVML_SUCCESS;
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlShutdown() noexcept {
  const Lock lock;
  State& s = g_state;
  if (s.refcount == 0) return NVML_ERROR_UNINITIALIZED;
  // An injected failure is answered, but the reference is still released so that the next
  // nvmlInit_v2 of the same process reads the fixture afresh.
  const auto code = injected(s.fixture->fail, "nvmlShutdown");
  if (--s.refcount == 0) {
    nodetopo::mock_nvml::free_fixture(s.fixture);
    s.fixture = nullptr;
  }
  return code.value_or(NVML_SUCCESS);
}

NODETOPO_MOCK_EXPORT const char* nvmlErrorString(nvmlReturn_t result) noexcept {
  // The code the last nvmlInit_v2 failed with reads as its reason: the probe calls this right
  // after the failed init. The text lives until the next init fails.
  const Lock lock;
  if (result != NVML_SUCCESS && result == g_state.init_error && g_state.init_error_text.size != 0) {
    return g_state.init_error_text.c_str();
  }
  return code_text(result);
}

// ---- System
// --------------------------------------------------------------------------------------

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version,
                                                             unsigned int length) noexcept {
  return with_fixture("nvmlSystemGetDriverVersion",
                      [&](Fixture& f) { return copy_string(f.driver_version, version, length); });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) noexcept {
  return with_fixture("nvmlSystemGetCudaDriverVersion_v2", [&](Fixture& f) {
    if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!f.cuda_driver_version) return NVML_ERROR_NOT_SUPPORTED;
    *version = *f.cuda_driver_version;
    return NVML_SUCCESS;
  });
}

// ---- Devices
// -------------------------------------------------------------------------------------

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) noexcept {
  return with_fixture("nvmlDeviceGetCount_v2", [&](Fixture& f) {
    if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *count = f.devices.size;
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                nvmlDevice_t* device) noexcept {
  return with_fixture("nvmlDeviceGetHandleByIndex_v2", [&](Fixture& f) {
    if (device == nullptr || index >= f.devices.size) return NVML_ERROR_INVALID_ARGUMENT;
    if (auto code = injected(f.devices.data[index].fail, "nvmlDeviceGetHandleByIndex_v2")) {
      return *code;
    }
    *device = reinterpret_cast<nvmlDevice_t>(&f.devices.data[index]);
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                          nvmlPciInfo_t* pci) noexcept {
  return with_device("nvmlDeviceGetPciInfo_v3", device, [&](Fixture&, const Device& d) {
    if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    fill_pci(d.bus_id, d.pci_device_id, d.pci_subsystem_id, pci);
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                    unsigned int length) noexcept {
  return with_device("nvmlDeviceGetName", device,
                     [&](Fixture&, const Device& d) { return copy_string(d.name, name, length); });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                    unsigned int length) noexcept {
  return with_device("nvmlDeviceGetUUID", device,
                     [&](Fixture&, const Device& d) { return copy_string(d.uuid, uuid, length); });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial,
                                                      unsigned int length) noexcept {
  return with_device("nvmlDeviceGetSerial", device, [&](Fixture&, const Device& d) {
    return copy_string(d.serial, serial, length);
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                          nvmlMemory_t* memory) noexcept {
  return with_device("nvmlDeviceGetMemoryInfo", device, [&](Fixture&, const Device& d) {
    if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.memory_total_bytes) return NVML_ERROR_NOT_SUPPORTED;
    memory->total = *d.memory_total_bytes;
    memory->free = *d.memory_total_bytes;
    memory->used = 0;
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t
nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t* arch) noexcept {
  return with_device("nvmlDeviceGetArchitecture", device, [&](Fixture&, const Device& d) {
    if (arch == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.architecture) return NVML_ERROR_NOT_SUPPORTED;
    *arch = *d.architecture;
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device,
                                                          unsigned int* node) noexcept {
  return with_device("nvmlDeviceGetNumaNodeId", device, [&](Fixture&, const Device& d) {
    if (node == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.numa_node) return NVML_ERROR_NOT_SUPPORTED;
    *node = *d.numa_node;
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device,
                                                             nvmlGpuFabricInfo_t* info) noexcept {
  return with_device("nvmlDeviceGetGpuFabricInfo", device, [&](Fixture&, const Device& d) {
    if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d.fabric) return NVML_ERROR_NOT_SUPPORTED;
    *info = nvmlGpuFabricInfo_t{};
    fill_fabric(*d.fabric, info);
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device,
                                                              void* info) noexcept {
  return with_device("nvmlDeviceGetGpuFabricInfoV", device, [&](Fixture&, const Device& d) {
    if (info == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned int version = 0;
    std::memcpy(&version, info, sizeof version);
    if (version != nvmlGpuFabricInfo_v2 && version != nvmlGpuFabricInfo_v3) {
      return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    if (!d.fabric) return NVML_ERROR_NOT_SUPPORTED;
    if (version == nvmlGpuFabricInfo_v3) {
      auto* v3 = static_cast<nvmlGpuFabricInfo_v3_t*>(info);
      *v3 = nvmlGpuFabricInfo_v3_t{};
      v3->version = version;
      fill_fabric(*d.fabric, v3);
    } else {
      auto* v2 = static_cast<nvmlGpuFabricInfo_v2_t*>(info);
      *v2 = nvmlGpuFabricInfo_v2_t{};
      v2->version = version;
      fill_fabric(*d.fabric, v2);
    }
    return NVML_SUCCESS;
  });
}

// ---- NVLink
// --------------------------------------------------------------------------------------

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                                           nvmlEnableState_t* active) noexcept {
  return with_device("nvmlDeviceGetNvLinkState", device, [&](Fixture&, const Device& d) {
    const auto* l = find_link(d, link);
    if (l == nullptr || active == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    *active = l->active ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device,
                                                                      unsigned int link,
                                                                      nvmlPciInfo_t* pci) noexcept {
  return with_device("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, [&](Fixture&, const Device& d) {
    const auto* l = find_link(d, link);
    if (l == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    // The fixture only describes the far end of active links.
    if (!l->active || !l->remote) return NVML_ERROR_NOT_FOUND;
    fill_pci(*l->remote, l->remote_pci_device_id, l->remote_pci_subsystem_id, pci);
    return NVML_SUCCESS;
  });
}

NODETOPO_MOCK_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(
    nvmlDevice_t device, unsigned int link, nvmlIntNvLinkDeviceType_t* type) noexcept {
  return with_device("nvmlDeviceGetNvLinkRemoteDeviceType", device, [&](Fixture&, const Device& d) {
    const auto* l = find_link(d, link);
    if (l == nullptr || type == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
    if (!l->active || !l->remote_type) return NVML_ERROR_NOT_FOUND;
    *type = static_cast<nvmlIntNvLinkDeviceType_t>(*l->remote_type);
    return NVML_SUCCESS;
  });
}

// The exported functions must have exactly the types the probe calls them through (noexcept
// function pointers convert to the plain ones; nothing else does).
#define NODETOPO_MOCK_CHECK(name) \
  static_assert(std::is_convertible_v<decltype(&name), name##_fn>, #name " signature")
NODETOPO_MOCK_CHECK(nvmlInit_v2);
NODETOPO_MOCK_CHECK(nvmlShutdown);
NODETOPO_MOCK_CHECK(nvmlErrorString);
NODETOPO_MOCK_CHECK(nvmlSystemGetDriverVersion);
NODETOPO_MOCK_CHECK(nvmlSystemGetCudaDriverVersion_v2);
NODETOPO_MOCK_CHECK(nvmlDeviceGetCount_v2);
NODETOPO_MOCK_CHECK(nvmlDeviceGetHandleByIndex_v2);
NODETOPO_MOCK_CHECK(nvmlDeviceGetPciInfo_v3);
NODETOPO_MOCK_CHECK(nvmlDeviceGetName);
NODETOPO_MOCK_CHECK(nvmlDeviceGetUUID);
NODETOPO_MOCK_CHECK(nvmlDeviceGetSerial);
NODETOPO_MOCK_CHECK(nvmlDeviceGetMemoryInfo);
NODETOPO_MOCK_CHECK(nvmlDeviceGetArchitecture);
NODETOPO_MOCK_CHECK(nvmlDeviceGetNumaNodeId);
NODETOPO_MOCK_CHECK(nvmlDeviceGetGpuFabricInfo);
NODETOPO_MOCK_CHECK(nvmlDeviceGetGpuFabricInfoV);
NODETOPO_MOCK_CHECK(nvmlDeviceGetNvLinkState);
NODETOPO_MOCK_CHECK(nvmlDeviceGetNvLinkRemotePciInfo_v2);
NODETOPO_MOCK_CHECK(nvmlDeviceGetNvLinkRemoteDeviceType);
