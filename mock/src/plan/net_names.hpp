// Network naming rules of a Linux host: systemd's predictable interface names, the kernel's
// limits on interface names, IPoIB hardware addresses and InfiniBand rate strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nodetopo/topology/pci.hpp>

namespace nodetopo::mock::detail {

/// systemd's path-based name: "en" or "ib", "P<domain>" when not 0, "p<bus>s<slot>",
/// "f<function>" on multi-function devices, "d<dev_port>" for extra ports of one function,
/// "n<phys_port_name>" when the driver reports one (ConnectX Ethernet uplinks: "np0", "np1").
std::string predictable_name(const PciAddress& address, bool infiniband, bool multifunction,
                             std::optional<std::uint32_t> dev_port,
                             const std::string& phys_port_name);

/// Why `name` cannot be an interface name ("" when it can): 1-15 bytes, no '/', ':' or spaces.
std::string netdev_name_problem(const std::string& name);

/// The 20-byte IPoIB hardware address: QPN flags + link-local GID of the port GUID.
std::string ipoib_address(std::uint64_t port_guid);

/// "4X NDR" for 400 Gb/s and the other InfiniBand rates; "" when `gbps` is none of them.
std::string infiniband_rate_name(std::uint32_t gbps);
/// The accepted InfiniBand rates, for messages ("25, 40, 50, 56, 100, 200, 400, 800").
std::string infiniband_rates();
/// The `rate` attribute of an RDMA port: "400 Gb/sec (4X NDR)" or "10 Gb/sec".
std::string rate_text(std::uint32_t gbps);

}  // namespace nodetopo::mock::detail
