#include "plan/config_space.hpp"

#include <cstdint>

namespace nodetopo::mock::detail {

namespace {

class Bytes {
 public:
  Bytes() : data_(kConfigSize, '\0') {}
  void u8(std::size_t off, unsigned v) { data_[off] = static_cast<char>(v & 0xff); }
  void u16(std::size_t off, unsigned v) {
    u8(off, v);
    u8(off + 1, v >> 8);
  }
  void u32(std::size_t off, std::uint32_t v) {
    u16(off, v & 0xffff);
    u16(off + 2, v >> 16);
  }
  std::string take() { return std::move(data_); }

 private:
  std::string data_;
};

// Device/port type field of the PCI Express Capabilities register.
unsigned port_type(FunctionRole role) {
  switch (role) {
    case FunctionRole::kRootPort:
      return 0x4;
    case FunctionRole::kUpstreamPort:
      return 0x5;
    case FunctionRole::kDownstreamPort:
      return 0x6;
    case FunctionRole::kIntegratedEndpoint:
      return 0x9;
    case FunctionRole::kEndpoint:
    case FunctionRole::kVirtualFunction:
      return 0x0;
  }
  return 0x0;
}

constexpr std::size_t kPmCap = 0x80;
constexpr std::size_t kSsvidCap = 0x88;
constexpr std::size_t kExtStart = 0x100;

void write_pcie_capability(Bytes& b, const PlanFunction& f, std::size_t next) {
  const std::size_t c = kPcieCapOffset;
  const bool port = f.role == FunctionRole::kRootPort || f.role == FunctionRole::kDownstreamPort;
  const bool has_link =
      f.role != FunctionRole::kIntegratedEndpoint && f.role != FunctionRole::kVirtualFunction;
  const bool slot = port && f.physical_slot.has_value();
  b.u8(c, 0x10);  // capability ID: PCI Express
  b.u8(c + 1, static_cast<unsigned>(next));
  b.u16(c + 2, 0x2 | (port_type(f.role) << 4) | (slot ? 0x100U : 0U));
  // Device Capabilities: max payload 256 B (512 B on bridges), extended tags, role-based error
  // reporting; endpoints add acceptable latencies and function-level reset.
  std::uint32_t devcap = (f.bridge ? 0x2U : 0x1U) | (1U << 5) | (1U << 15);
  if (!f.bridge) devcap |= (7U << 6) | (7U << 9) | (1U << 28);
  b.u32(c + 0x04, devcap);
  // Device Control: relaxed ordering, max payload 256 B, extended tags, max read request 512 B.
  b.u16(c + 0x08, (1U << 4) | (1U << 5) | (1U << 8) | (2U << 12));
  if (has_link) {
    std::uint32_t lnkcap = speed_code(f.cap.speed_mts) | (f.cap.width << 4) |
                           (0x2U << 10)    // ASPM L1 supported
                           | (0x4U << 15)  // L1 exit latency 8-16 us
                           | (std::uint32_t{f.port_number} << 24);
    if (port) lnkcap |= (1U << 20) | (1U << 21);  // DLL link active reporting, bandwidth notif.
    b.u32(c + 0x0c, lnkcap);
    // Link Control: common clock; root ports also read completion boundary 128 B.
    b.u16(c + 0x10, (1U << 6) | (f.role == FunctionRole::kRootPort ? (1U << 3) : 0U));
    unsigned lnksta = speed_code(f.current.speed_mts) | (f.current.width << 4) | (1U << 12);
    if (port && f.link_up) lnksta |= 1U << 13;  // data link layer active
    b.u16(c + 0x12, lnksta);
  }
  if (slot) {
    b.u32(c + 0x14, (*f.physical_slot & 0x1fffU) << 19);
    b.u16(c + 0x1a, f.link_up ? (1U << 6) : 0U);  // presence detect state
  }
  // Device Capabilities 2: completion timeout ranges A-D and disable; ports forward ARI.
  b.u32(c + 0x24, 0x1fU | (port ? (1U << 5) : 0U));
  if (has_link) {
    const unsigned max_code = speed_code(f.cap.speed_mts);
    b.u32(c + 0x2c, max_code == 0 ? 0U : ((1U << max_code) - 1U) << 1);  // supported speeds
    b.u16(c + 0x30, max_code);                                           // target link speed
  }
}

// Extended capability header: ID, version 1, next offset.
void ext_header(Bytes& b, std::size_t off, unsigned id, unsigned version, std::size_t next) {
  b.u32(off, id | (version << 16) | (static_cast<std::uint32_t>(next) << 20));
}

void write_extended(Bytes& b, const PlanFunction& f) {
  const bool sriov = f.total_vfs != 0;
  std::size_t off = kExtStart;
  if (f.dsn != 0) {
    const std::size_t next = sriov ? off + 0x10 : 0;
    ext_header(b, off, 0x0003, 1, next);  // Device Serial Number
    b.u32(off + 4, static_cast<std::uint32_t>(f.dsn & 0xffffffffU));
    b.u32(off + 8, static_cast<std::uint32_t>(f.dsn >> 32));
    off = next;
  }
  if (sriov) {
    ext_header(b, off, 0x000e, 1, off + 0x10);  // ARI: VFs live at device numbers > 0
    off += 0x10;
    ext_header(b, off, 0x0010, 1, 0);  // SR-IOV
    b.u32(off + 0x04, 0x2);            // ARI capable hierarchy preserved
    b.u16(off + 0x08, f.num_vfs != 0 ? (0x1U | 0x8U | 0x10U) : 0x10U);  // VF enable, MSE, ARI
    b.u16(off + 0x0c, f.total_vfs);                                     // InitialVFs
    b.u16(off + 0x0e, f.total_vfs);                                     // TotalVFs
    b.u16(off + 0x10, f.num_vfs);                                       // NumVFs
    b.u8(off + 0x12, f.function_index);
    b.u16(off + 0x14, f.vf_offset);
    b.u16(off + 0x16, f.vf_stride);
    b.u16(off + 0x1a, f.vf_device);
    b.u32(off + 0x1c, 0x553);  // supported page sizes
    b.u32(off + 0x20, 0x1);    // system page size 4 KiB
  }
}

}  // namespace

unsigned speed_code(std::uint32_t mts) {
  switch (mts) {
    case 2500:
      return 1;
    case 5000:
      return 2;
    case 8000:
      return 3;
    case 16000:
      return 4;
    case 32000:
      return 5;
    case 64000:
      return 6;
    default:
      return 0;
  }
}

std::string config_space(const PlanFunction& f) {
  Bytes b;
  b.u16(0x00, f.vendor);
  b.u16(0x02, f.device);
  const bool vf = f.role == FunctionRole::kVirtualFunction;
  // Command: I/O (bridges), memory, bus master; endpoints mask INTx (they use MSI-X).
  b.u16(0x04, vf ? 0x0U : (f.bridge ? 0x0407U : 0x0406U));
  b.u16(0x06, 0x0010);  // status: capabilities list
  b.u8(0x08, f.revision);
  b.u8(0x09, f.class_code & 0xff);
  b.u8(0x0a, (f.class_code >> 8) & 0xff);
  b.u8(0x0b, (f.class_code >> 16) & 0xff);
  b.u8(0x0c, 0x10);  // cache line 64 bytes
  b.u8(0x0e, (f.bridge ? 0x01U : 0x00U) | (f.multifunction ? 0x80U : 0x00U));
  b.u8(0x34, kPcieCapOffset);
  if (f.bridge) {
    b.u8(0x18, f.primary);
    b.u8(0x19, f.secondary);
    b.u8(0x1a, f.subordinate);
    // Windows closed (base above limit): the mock assigns no address space.
    b.u8(0x1c, 0xf0);
    b.u8(0x1d, 0x00);
    b.u16(0x20, 0xfff0);
    b.u16(0x22, 0x0000);
    b.u16(0x24, 0xfff1);
    b.u16(0x26, 0x0001);
    b.u8(0x3c, 0xff);
    b.u8(0x3d, 0x01);
  } else {
    b.u16(0x2c, f.subsystem_vendor);
    b.u16(0x2e, f.subsystem_device);
    b.u8(0x3c, 0xff);
    b.u8(0x3d, vf ? 0x00 : 0x01);
  }
  write_pcie_capability(b, f, kPmCap);
  // Power management v3, D0.
  b.u8(kPmCap, 0x01);
  b.u8(kPmCap + 1, f.bridge ? kSsvidCap : 0x00);
  b.u16(kPmCap + 2, 0x0003);
  b.u16(kPmCap + 4, 0x0008);
  if (f.bridge) {
    // Bridges carry their subsystem IDs in a capability (type 1 headers have no field for them).
    b.u8(kSsvidCap, 0x0d);
    b.u8(kSsvidCap + 1, 0x00);
    b.u16(kSsvidCap + 4, f.subsystem_vendor);
    b.u16(kSsvidCap + 6, f.subsystem_device);
  }
  write_extended(b, f);
  return b.take();
}

}  // namespace nodetopo::mock::detail
