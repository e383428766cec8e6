// Config space read register by register, for a live root.
//
// On the machine itself a PCI function's `config` is not a file but the kernel's config accessor:
// each dword read is a configuration cycle (an MMIO read of the ECAM window, and under a
// hypervisor a VM exit: about 36 us each on the project's Firecracker VM, 2.3 ms per 256-byte
// read), taken under the kernel's global pci_lock. LibpciConfig::decode() looks at about a dozen
// of the 64 dwords of the standard space: a GPU endpoint with four capabilities takes 13 cycles
// read this way. A
// capture's `config` is a plain file: there one read of the whole is cheaper (PciFunctionReader).
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

namespace nodetopo::probes {

/// Reads up to `out.size()` bytes of config space at `offset`: the count read (fewer at the end
/// of what the file lets this process read), nullopt on an error.
using ConfigReadAt =
    std::function<std::optional<std::size_t>(std::size_t offset, std::span<std::uint8_t> out)>;

/// The registers of the standard configuration space that LibpciConfig::decode() reads, at their
/// offsets, and the length a read of the whole 256 bytes would have returned (64 when only the
/// header is readable, as for a process without CAP_SYS_ADMIN).
class SparseConfig {
 public:
  /// Reads the header registers the decoder uses, then walks the capability list the way
  /// libpci's pci_scan_trad_caps() does, reading each capability's header and the registers of
  /// the PCI Express and bridge subsystem (SSVID) capabilities. nullopt when a read fails or
  /// fewer than the header's 64 bytes can be read: the caller then reads the file whole, which
  /// words the problem.
  static std::optional<SparseConfig> read(const ConfigReadAt& read_at);

  /// `size()` bytes: what was read at its offsets, every other byte `fill`. A decoder that gives
  /// the same result with fill 0x00 and 0xff looked at nothing that was not read.
  [[nodiscard]] std::vector<std::uint8_t> bytes(std::uint8_t fill) const;
  /// 256, or 64 when the capability area cannot be read (or need not be: no capability list).
  [[nodiscard]] std::size_t size() const { return size_; }
  /// Bytes read, for tests and benchmarks.
  [[nodiscard]] std::size_t bytes_read() const { return known_.count(); }

 private:
  // Reads `length` bytes at `at` into bytes_; false on an error or a short read.
  bool fetch(const ConfigReadAt& read_at, std::size_t at, std::size_t length);
  // Walks the capability list (the standard space must be readable).
  bool walk_capabilities(const ConfigReadAt& read_at, std::uint8_t header_type);

  std::array<std::uint8_t, 256> bytes_{};
  std::bitset<256> known_;
  std::size_t size_ = 0;
};

}  // namespace nodetopo::probes
