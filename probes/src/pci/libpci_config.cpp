#include "pci/libpci_config.hpp"

#include <array>
#include <csetjmp>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>

#include "pci/libpci_library.hpp"

namespace nodetopo::probes {

namespace {

// libpci's callbacks carry no user pointer, so messages go to the decode active on this thread.
thread_local std::vector<std::string>* g_messages = nullptr;

void record(const char* format, va_list args) {
  std::array<char, 512> buf{};
  std::vsnprintf(buf.data(), buf.size(), format, args);
  if (g_messages != nullptr) g_messages->emplace_back(buf.data());
}

// Where libpci's error handler returns to: the guarded call active on this thread.
thread_local std::jmp_buf* g_jump = nullptr;

// Replaces libpci's default error handler, which calls exit(). libpci declares the handler
// noreturn (PCI_NONRET) and may rely on it not returning, so it records the message and jumps back
// to the guarded call (open(), decode()); the code between setjmp and the libpci calls creates no
// object with a destructor, so the jump skips none.
// The GNU attribute, not [[noreturn]]: libpci's field type carries it (PCI_NONRET), and clang
// treats it as part of the function type.
__attribute__((noreturn)) void on_error(char* format, ...) {
  va_list args;
  va_start(args, format);
  record(format, args);
  va_end(args);
  if (g_jump != nullptr) std::longjmp(*g_jump, 1);  // NOLINT(cert-err52-cpp): see above
  std::abort();  // a libpci call outside a guard: a bug here, not in the input
}

// Warnings may return.
void on_warning(char* format, ...) {
  va_list args;
  va_start(args, format);
  record(format, args);
  va_end(args);
}

// Sets g_jump for the lifetime of a guarded call.
class JumpScope {
 public:
  explicit JumpScope(std::jmp_buf* jump) : previous_(g_jump) { g_jump = jump; }
  ~JumpScope() { g_jump = previous_; }
  JumpScope(const JumpScope&) = delete;
  JumpScope& operator=(const JumpScope&) = delete;

 private:
  std::jmp_buf* previous_;
};

void on_debug(char* /*format*/, ...) {}

class MessageScope {
 public:
  explicit MessageScope(std::vector<std::string>* sink) : previous_(g_messages) {
    g_messages = sink;
  }
  ~MessageScope() { g_messages = previous_; }
  MessageScope(const MessageScope&) = delete;
  MessageScope& operator=(const MessageScope&) = delete;

 private:
  std::vector<std::string>* previous_;
};

// Link speed field of Link Capabilities/Status: 1 = 2.5 GT/s ... 6 = 64 GT/s (PCIe 1 to 6).
std::uint32_t link_speed_mts(unsigned field) {
  switch (field) {
    case 1:
      return 2500;
    case 2:
      return 5000;
    case 3:
      return 8000;
    case 4:
      return 16000;
    case 5:
      return 32000;
    case 6:
      return 64000;
    default:
      return 0;
  }
}

std::uint16_t word(std::span<const std::uint8_t> b, std::size_t at) {
  return static_cast<std::uint16_t>(b[at] | (b[at + 1] << 8));
}

}  // namespace

Result<LibpciConfig> LibpciConfig::open() {
  auto loaded = libpci_api();
  if (!loaded) return loaded.error();
  const LibpciApi& api = *loaded.value();
  pci_access* access = api.pci_alloc();
  if (access == nullptr) return make_error(ErrorCode::kIo, "libpci: pci_alloc failed");
  access->error = on_error;
  access->warning = on_warning;
  access->debug = on_debug;
  // Every read is served from the config cache the probe supplies; a read outside it would go to
  // this non-existent directory and fail, never to a file of the machine running the tool.
  access->method = PCI_ACCESS_SYS_BUS_PCI;
  std::string nowhere = "/nonexistent/nodetopo-config-cache-only";
  api.pci_set_param(access, const_cast<char*>("sysfs.path"), nowhere.data());
  // On the heap: automatic objects changed between setjmp and longjmp would be indeterminate.
  const auto messages = std::make_unique<std::vector<std::string>>();
  MessageScope scope(messages.get());
  std::jmp_buf jump;
  JumpScope guard(&jump);
  if (setjmp(jump) == 0) api.pci_init(access);  // NOLINT(cert-err52-cpp): see on_error()
  if (!messages->empty()) {
    api.pci_cleanup(access);
    return make_error(ErrorCode::kIo, "libpci: " + messages->front());
  }
  return LibpciConfig(&api, access);
}

LibpciConfig::~LibpciConfig() {
  if (access_ != nullptr) api_->pci_cleanup(access_);
}

LibpciConfig::LibpciConfig(LibpciConfig&& other) noexcept
    : api_(other.api_),
      access_(std::exchange(other.access_, nullptr)),
      open_error_(std::move(other.open_error_)) {}

LibpciConfig& LibpciConfig::operator=(LibpciConfig&& other) noexcept {
  if (this != &other) {
    if (access_ != nullptr) api_->pci_cleanup(access_);
    api_ = other.api_;
    access_ = std::exchange(other.access_, nullptr);
    open_error_ = std::move(other.open_error_);
  }
  return *this;
}

DecodedConfig decode_header(std::span<const std::uint8_t> config) {
  DecodedConfig out;
  out.header_type = config[PCI_HEADER_TYPE] & 0x7f;  // bit 7: a multi-function device
  out.revision = config[PCI_REVISION_ID];
  if (out.header_type == PCI_HEADER_TYPE_NORMAL) {
    out.subsystem_vendor_id = word(config, PCI_SUBSYSTEM_VENDOR_ID);
    out.subsystem_device_id = word(config, PCI_SUBSYSTEM_ID);
    out.subsystem_known = true;
  } else if (out.header_type == PCI_HEADER_TYPE_BRIDGE ||
             out.header_type == PCI_HEADER_TYPE_CARDBUS) {
    out.secondary_bus = config[PCI_SECONDARY_BUS];
    out.subordinate_bus = config[PCI_SUBORDINATE_BUS];
  }
  // Without the status register's capability-list bit there is no capability at all, so no
  // PCI Express capability: known from the header alone.
  if ((word(config, PCI_STATUS) & PCI_STATUS_CAP_LIST) == 0) out.pcie = false;
  return out;
}

bool LibpciConfig::ensure_open() {
  if (access_ != nullptr) return true;
  if (open_error_) return false;
  auto opened = open();
  if (!opened) {
    open_error_ = opened.error();
    return false;
  }
  api_ = opened->api_;
  access_ = std::exchange(opened->access_, nullptr);
  return true;
}

DecodedConfig LibpciConfig::decode(const PciAddress& address,
                                   std::span<const std::uint8_t> config) {
  if (config.size() < kPciConfigStandardSize || !ensure_open()) return decode_header(config);
  // On the heap: automatic objects changed between setjmp and longjmp would be indeterminate.
  const auto result = std::make_unique<DecodedConfig>(decode_header(config));
  DecodedConfig& out = *result;
  MessageScope scope(&out.problems);
  pci_dev* dev = api_->pci_get_dev(access_, static_cast<int>(address.domain), address.bus,
                                   address.device, address.function);
  if (dev == nullptr) {
    out.problems.emplace_back("libpci could not allocate the device");
    return std::move(out);
  }
  // libpci keeps the pointer: the copy lives until pci_free_dev below.
  std::vector<u8> cache(config.begin(), config.end());
  api_->pci_setup_cache(dev, cache.data(), static_cast<int>(cache.size()));
  std::jmp_buf jump;
  JumpScope guard(&jump);
  if (setjmp(jump) != 0) {  // NOLINT(cert-err52-cpp): libpci reported an error (on_error)
    api_->pci_free_dev(dev);
    return std::move(out);
  }

  api_->pci_fill_info(dev, PCI_FILL_CAPS);
  out.pcie = false;
  if (pci_cap* cap = api_->pci_find_cap(dev, PCI_CAP_ID_EXP, PCI_CAP_NORMAL)) {
    out.pcie = true;
    const int at = static_cast<int>(cap->addr);
    if (static_cast<std::size_t>(at + PCI_EXP_LNKSTA + 2) > config.size()) out.past_buffer = true;
    const unsigned flags = api_->pci_read_word(dev, at + PCI_EXP_FLAGS);
    out.port_type = pcie_port_type_from_field((flags & PCI_EXP_FLAGS_TYPE) >> 4);
    const u32 lnkcap = api_->pci_read_long(dev, at + PCI_EXP_LNKCAP);
    const unsigned lnksta = api_->pci_read_word(dev, at + PCI_EXP_LNKSTA);
    out.link_max = {link_speed_mts(lnkcap & PCI_EXP_LNKCAP_SPEED), (lnkcap >> 4) & 0x3f};
    out.link_current = {link_speed_mts(lnksta & PCI_EXP_LNKSTA_SPEED), (lnksta >> 4) & 0x3f};
  }
  if (out.header_type != PCI_HEADER_TYPE_NORMAL) {
    // Bridges carry their subsystem ids in the SSVID capability, where the kernel reads them.
    if (pci_cap* cap = api_->pci_find_cap(dev, PCI_CAP_ID_SSVID, PCI_CAP_NORMAL)) {
      if (static_cast<std::size_t>(cap->addr + PCI_SSVID_DEVICE + 2) > config.size()) {
        out.past_buffer = true;
      }
      out.subsystem_vendor_id =
          api_->pci_read_word(dev, static_cast<int>(cap->addr) + PCI_SSVID_VENDOR);
      out.subsystem_device_id =
          api_->pci_read_word(dev, static_cast<int>(cap->addr) + PCI_SSVID_DEVICE);
      out.subsystem_known = true;
    }
  }
  api_->pci_free_dev(dev);
  return std::move(out);
}

}  // namespace nodetopo::probes
