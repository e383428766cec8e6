#include "libpci_reader.hpp"

extern "C" {
#include <pci/pci.h>
}

#include <array>
#include <cstdarg>
#include <cstdio>
#include <utility>

namespace nodetopo::probes {

namespace {

// libpci's callbacks carry no user pointer, so messages go to the reader active on this thread.
thread_local std::vector<std::string>* g_messages = nullptr;

void record(const char* format, va_list args) {
  std::array<char, 512> buf{};
  std::vsnprintf(buf.data(), buf.size(), format, args);
  if (g_messages != nullptr) g_messages->emplace_back(buf.data());
}

// Replaces libpci's default error handler, which calls exit(). Returning is safe for the calls
// the probe makes (per-device reads of sysfs attributes); libpci then reports the value as absent.
void on_error(char* format, ...) {
  va_list args;
  va_start(args, format);
  record(format, args);
  va_end(args);
}

void on_warning(char* format, ...) {
  va_list args;
  va_start(args, format);
  record(format, args);
  va_end(args);
}

void on_debug(char* /*format*/, ...) {}

// Whether a libpci message is about the sysfs attribute `attr` of the device: libpci writes
// "Cannot open <path>: <reason>", "Error reading <path>: ..." and "Value in <path> too long".
// Matching "/<attr>" alone would also hit the "/devices/" directory of every path.
bool names_attribute(const std::string& msg, std::string_view attr) {
  const std::string needle = "/" + std::string(attr);
  for (std::size_t pos = msg.find(needle); pos != std::string::npos;
       pos = msg.find(needle, pos + 1)) {
    const std::size_t end = pos + needle.size();
    if (end == msg.size() || msg[end] == ':' || msg[end] == ' ') return true;
  }
  return false;
}

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

}  // namespace

Result<LibpciReader> LibpciReader::open(const std::string& sysfs_bus_pci) {
  pci_access* access = pci_alloc();
  if (access == nullptr) return make_error(ErrorCode::kIo, "libpci: pci_alloc failed");
  access->error = on_error;
  access->warning = on_warning;
  access->debug = on_debug;
  access->method = PCI_ACCESS_SYS_BUS_PCI;
  std::vector<std::string> messages;
  MessageScope scope(&messages);
  // pci_set_param copies the string.
  std::string path = sysfs_bus_pci;
  pci_set_param(access, const_cast<char*>("sysfs.path"), path.data());
  // Names come from pci.ids (and the project's own table) only, not from the udev hardware
  // database: its content depends on the machine running the tool, not on the root described,
  // and libpci 3.9 leaks a udev context on every lookup when that database is absent.
  std::string disable = "1";
  pci_set_param(access, const_cast<char*>("hwdb.disable"), disable.data());
  pci_init(access);
  if (!messages.empty()) {
    pci_cleanup(access);
    return make_error(ErrorCode::kIo, "libpci: " + messages.front(), sysfs_bus_pci);
  }
  return LibpciReader(access);
}

LibpciReader::~LibpciReader() {
  if (access_ != nullptr) pci_cleanup(access_);
}

LibpciReader::LibpciReader(LibpciReader&& other) noexcept
    : access_(std::exchange(other.access_, nullptr)) {}

LibpciReader& LibpciReader::operator=(LibpciReader&& other) noexcept {
  if (this != &other) {
    if (access_ != nullptr) pci_cleanup(access_);
    access_ = std::exchange(other.access_, nullptr);
  }
  return *this;
}

LibpciFunction LibpciReader::read(const PciAddress& address) {
  LibpciFunction out;
  MessageScope scope(&out.problems);
  pci_dev* dev = pci_get_dev(access_, static_cast<int>(address.domain), address.bus, address.device,
                             address.function);
  if (dev == nullptr) {
    out.problems.emplace_back("libpci could not allocate the device");
    return out;
  }

  // The standard header holds the header type and bus numbers; handing it to libpci as its
  // config cache makes the capability walk below start without re-reading it.
  std::array<u8, 64> header{};
  out.config_readable = pci_read_block(dev, 0, header.data(), header.size()) != 0;
  if (out.config_readable) pci_setup_cache(dev, header.data(), header.size());

  const std::size_t before = out.problems.size();
  pci_fill_info(dev, PCI_FILL_IDENT | PCI_FILL_CLASS | PCI_FILL_CLASS_EXT | PCI_FILL_SUBSYS |
                         (out.config_readable ? PCI_FILL_CAPS : 0));
  // libpci reports unreadable mandatory attributes through the error handler and leaves -1
  // (0xffff) in the field; tell those apart from real IDs by the messages.
  bool class_failed = false;
  bool ids_failed = false;
  for (std::size_t i = before; i < out.problems.size(); ++i) {
    const std::string& msg = out.problems[i];
    if (names_attribute(msg, "class")) class_failed = true;
    if (names_attribute(msg, "vendor") || names_attribute(msg, "device")) ids_failed = true;
  }
  out.ids_known = !ids_failed;
  if (!ids_failed) {
    out.vendor_id = dev->vendor_id;
    out.device_id = dev->device_id;
  }
  if (!class_failed) {
    out.class_code = (static_cast<std::uint32_t>(dev->device_class) << 8) |
                     static_cast<std::uint8_t>(dev->prog_if);
  }
  out.revision = static_cast<std::uint8_t>(dev->rev_id);
  if (dev->subsys_vendor_id != 0xffff) out.subsystem_vendor_id = dev->subsys_vendor_id;
  if (dev->subsys_id != 0xffff) out.subsystem_device_id = dev->subsys_id;

  if (out.config_readable) {
    const int type = header[PCI_HEADER_TYPE] & 0x7f;
    out.header_type = type;
    if (type == PCI_HEADER_TYPE_BRIDGE || type == PCI_HEADER_TYPE_CARDBUS) {
      out.secondary_bus = header[PCI_SECONDARY_BUS];
      out.subordinate_bus = header[PCI_SUBORDINATE_BUS];
    }
    if (pci_cap* cap = pci_find_cap(dev, PCI_CAP_ID_EXP, PCI_CAP_NORMAL)) {
      std::array<u8, 4> exp{};
      if (pci_read_block(dev, static_cast<int>(cap->addr), exp.data(), exp.size()) != 0) {
        const unsigned flags = exp[PCI_EXP_FLAGS] | (exp[PCI_EXP_FLAGS + 1] << 8);
        out.port_type = pcie_port_type_from_field((flags & PCI_EXP_FLAGS_TYPE) >> 4);
      }
    }
  }
  pci_free_dev(dev);
  return out;
}

}  // namespace nodetopo::probes
