// Pure conversions of NVML's answers into the model's values. No I/O, no NVML calls.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <nodetopo/base/error.hpp>
#include <nodetopo/nvml_abi.hpp>
#include <nodetopo/topology/pci.hpp>

namespace nodetopo::probes {

/// A NUL-terminated string from a fixed NVML buffer; stops at the buffer end if NVML forgot the
/// terminator.
std::string nvml_string(const char* buffer, std::size_t size);

/// The PCI address of an nvmlPciInfo_t. NVML writes busId with an 8-digit upper-case domain
/// ("00000000:1B:00.0"); the address is normalised to the model's form ("0000:1b:00.0"). Falls
/// back to the numeric domain/bus/device fields (function 0, as NVML's own format assumes) when
/// the string is empty. Errors quote the text.
Result<PciAddress> nvml_pci_address(const nvml_abi::nvmlPciInfo_t& info);

/// "hopper", "ampere", ...; empty for NVML_DEVICE_ARCH_UNKNOWN and values this build does not know.
std::string nvml_architecture_name(nvml_abi::nvmlDeviceArchitecture_t arch);

/// 16 bytes as canonical UUID text "6a0f4c1e-2b3d-4e5f-8a9b-0c1d2e3f4a5b"; empty when all zero
/// (NVML's way of saying no cluster).
std::string nvml_uuid_text(
    std::span<const unsigned char, nvml_abi::NVML_GPU_FABRIC_UUID_LEN> bytes);

/// Link numbers as a compact list, "0-3,7" (input sorted ascending, no duplicates).
std::string link_list(const std::vector<unsigned int>& links);

}  // namespace nodetopo::probes
