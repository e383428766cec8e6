// libpci as the decoder of PCI configuration space that the PCI probe read itself.
//
// The probe reads every sysfs file through SysRoot (so nothing leaves a captured root and no file
// is read twice) and hands the bytes of `config` to libpci as the device's config cache: libpci
// then walks the capability list without opening any file. Its fatal error handler is replaced by
// one that records messages instead of exiting the process.
//
// A header alone (the 64 bytes an unprivileged reader gets, what most captures hold) has no
// capability list to walk: its few fields lie at offsets the PCI specification fixes, and are read
// here without libpci. The library (libpci_library.hpp) and a handle of it are opened by the first
// decode that walks capabilities: a dump of such a capture does not load libpci and libz at all
// (0.13-0.17 ms of the PCI walk on this project's VM, docs/performance.md round 21).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/topology/pci.hpp>

struct pci_access;

namespace nodetopo::probes {

struct LibpciApi;

/// What the configuration header and capabilities say about one function.
struct DecodedConfig {
  int header_type = 0;  ///< 0 device, 1 PCI-to-PCI bridge, 2 CardBus bridge
  std::uint8_t revision = 0;
  std::uint16_t subsystem_vendor_id = 0;  ///< type-0 header only
  std::uint16_t subsystem_device_id = 0;
  std::optional<std::uint8_t> secondary_bus;    ///< bridges
  std::optional<std::uint8_t> subordinate_bus;  ///< bridges
  /// From the PCI Express capability; needs the capability area (256 bytes): unprivileged reads
  /// of `config` return only the 64-byte header.
  std::optional<PciePortType> port_type;
  /// Whether the function has a PCI Express capability: known when the capability area was
  /// decoded, or when the header's status register says there is no capability list; nullopt
  /// from a bare header that has one.
  std::optional<bool> pcie;
  /// Link Status and Link Capabilities of the PCI Express capability: the registers behind
  /// sysfs' current_link_* and max_link_* attributes. Unknown (zero) without the capability.
  PcieLink link_current;
  PcieLink link_max;
  /// Whether the subsystem ids were found (type-0 header, or a bridge's SSVID capability).
  bool subsystem_known = false;
  /// A capability's registers lie past the end of the buffer decoded (a capability placed at the
  /// very end of the standard space, in a damaged capture): a caller that read only part of the
  /// file decodes the whole of it again, so that reading less never changes what is decoded.
  bool past_buffer = false;
  std::vector<std::string> problems;  ///< libpci's own messages, if any

  bool operator==(const DecodedConfig&) const = default;
};

class LibpciConfig {
 public:
  /// A decoder whose libpci handle is opened by the first decode that needs it (open_error()).
  LibpciConfig() = default;
  /// A decoder with its libpci handle opened now; fails when libpci cannot be loaded
  /// (libpci_api()'s error), or with libpci's message when pci_init() reports an error.
  static Result<LibpciConfig> open();
  ~LibpciConfig();
  LibpciConfig(LibpciConfig&& other) noexcept;
  LibpciConfig& operator=(LibpciConfig&& other) noexcept;
  LibpciConfig(const LibpciConfig&) = delete;
  LibpciConfig& operator=(const LibpciConfig&) = delete;

  /// Decodes `config` (at least the 64-byte header; the caller checks). Capabilities are walked,
  /// by libpci, only when the 256-byte standard configuration space is present; a shorter buffer
  /// is decoded without libpci (decode_header()). When libpci is needed and cannot be opened, the
  /// header's fields are returned and open_error() says why.
  [[nodiscard]] DecodedConfig decode(const PciAddress& address,
                                     std::span<const std::uint8_t> config);

  /// Why libpci could not be opened for a decode that needed it; nullopt while every decode got
  /// what it needed. The PCI probe fails with it: a function whose capabilities cannot be
  /// walked is not reported as one without them.
  [[nodiscard]] const std::optional<Error>& open_error() const { return open_error_; }

 private:
  LibpciConfig(const LibpciApi* api, pci_access* access) : api_(api), access_(access) {}
  // The handle, opened on first use: false (open_error_ set) when it cannot be.
  bool ensure_open();
  const LibpciApi* api_ = nullptr;  ///< libpci_api()'s, which lives until the process ends
  pci_access* access_ = nullptr;
  std::optional<Error> open_error_;
};

/// What the 64-byte header alone says (header type, revision, the type-0 header's subsystem ids,
/// a bridge's bus numbers, no PCI Express capability when there is no capability list): the
/// fields libpci reads at the same fixed offsets. `config` holds at least the header.
[[nodiscard]] DecodedConfig decode_header(std::span<const std::uint8_t> config);

/// Bytes of the standard header: below this, `config` is truncated.
inline constexpr std::size_t kPciConfigHeaderSize = 64;
/// Bytes of the standard configuration space, where the capability list lives.
inline constexpr std::size_t kPciConfigStandardSize = 256;
/// Bytes of a PCI Express function's whole configuration space (the extended capabilities).
inline constexpr std::size_t kPciConfigExtendedSize = 4096;

}  // namespace nodetopo::probes
