#include "pci/pci_config_sparse.hpp"

extern "C" {
#include <pci/pci.h>
}

#include "pci/libpci_config.hpp"

namespace nodetopo::probes {

bool SparseConfig::fetch(const ConfigReadAt& read_at, std::size_t at, std::size_t length) {
  // A register past the standard space is left unread: the decoder then reports it past the
  // buffer and the caller reads the whole file, as it does after a short whole read.
  if (at + length > bytes_.size()) return true;
  const std::optional<std::size_t> got = read_at(at, std::span(bytes_).subspan(at, length));
  if (!got || *got != length) return false;
  for (std::size_t i = at; i < at + length; ++i)
    known_.set(i);
  return true;
}

std::optional<SparseConfig> SparseConfig::read(const ConfigReadAt& read_at) {
  SparseConfig c;
  // The last byte of the header first: a whole read shorter than 64 bytes is refused with a
  // warning, which the caller's whole read gives.
  if (!c.fetch(read_at, kPciConfigHeaderSize - 1, 1)) return std::nullopt;
  // One access each, as the decoder reads them: status (capability-list bit), revision, header
  // type.
  if (!c.fetch(read_at, PCI_STATUS, 2) || !c.fetch(read_at, PCI_REVISION_ID, 1) ||
      !c.fetch(read_at, PCI_HEADER_TYPE, 1)) {
    return std::nullopt;
  }
  const auto header_type = static_cast<std::uint8_t>(c.bytes_[PCI_HEADER_TYPE] & 0x7f);
  if (header_type == PCI_HEADER_TYPE_NORMAL) {
    // Subsystem vendor and device: one dword.
    if (!c.fetch(read_at, PCI_SUBSYSTEM_VENDOR_ID, 4)) return std::nullopt;
  } else if (header_type == PCI_HEADER_TYPE_BRIDGE || header_type == PCI_HEADER_TYPE_CARDBUS) {
    // Primary, secondary and subordinate bus numbers: one dword.
    if (!c.fetch(read_at, PCI_PRIMARY_BUS, 4)) return std::nullopt;
  }
  c.size_ = kPciConfigHeaderSize;
  const unsigned status = c.bytes_[PCI_STATUS] | (c.bytes_[PCI_STATUS + 1] << 8);
  if ((status & PCI_STATUS_CAP_LIST) == 0) return c;  // no capability: the header says it all
  // Whether the standard space can be read at all (without CAP_SYS_ADMIN the kernel serves the
  // header only): its last byte.
  std::uint8_t last = 0;
  const std::optional<std::size_t> got =
      read_at(kPciConfigStandardSize - 1, std::span<std::uint8_t>(&last, 1));
  if (!got) return std::nullopt;
  if (*got == 0) return c;
  c.bytes_[kPciConfigStandardSize - 1] = last;
  c.known_.set(kPciConfigStandardSize - 1);
  c.size_ = kPciConfigStandardSize;
  if (!c.walk_capabilities(read_at, header_type)) return std::nullopt;
  return c;
}

// libpci 3.9's pci_scan_trad_caps(): the pointer at 0x34 (also for CardBus bridges), each
// capability's id and next pointer with the low two bits cleared, stop at a pointer of zero, a
// capability seen before or an id of 0xff. Each header is read as a dword, which brings the
// PCI Express capability's flags with it.
bool SparseConfig::walk_capabilities(const ConfigReadAt& read_at, std::uint8_t header_type) {
  if (!fetch(read_at, PCI_CAPABILITY_LIST, 1)) return false;
  std::bitset<256> seen;
  unsigned where = bytes_[PCI_CAPABILITY_LIST] & ~3U;
  while (where != 0 && !seen[where]) {
    seen.set(where);
    if (!fetch(read_at, where, 4)) return false;
    const std::uint8_t id = bytes_[where + PCI_CAP_LIST_ID];
    if (id == 0xff) break;
    if (id == PCI_CAP_ID_EXP) {
      // Link Capabilities (a dword) and Link Status (a word).
      if (!fetch(read_at, where + PCI_EXP_LNKCAP, 4) ||
          !fetch(read_at, where + PCI_EXP_LNKSTA, 2)) {
        return false;
      }
    } else if (id == PCI_CAP_ID_SSVID && header_type != PCI_HEADER_TYPE_NORMAL) {
      if (!fetch(read_at, where + PCI_SSVID_VENDOR, 4)) return false;
    }
    where = bytes_[where + PCI_CAP_LIST_NEXT] & ~3U;
  }
  return true;
}

std::vector<std::uint8_t> SparseConfig::bytes(std::uint8_t fill) const {
  std::vector<std::uint8_t> out(size_, fill);
  for (std::size_t i = 0; i < size_; ++i) {
    if (known_[i]) out[i] = bytes_[i];
  }
  return out;
}

}  // namespace nodetopo::probes
