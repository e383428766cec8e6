// The pci.ids scan with its line finder chosen by the caller, so that the tests compare the
// vector finders and the portable one on every build (pci_ids.cpp; the public
// lookup_pci_names() takes the fastest the build and the CPU have).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include <nodetopo/probes/pci_ids.hpp>

namespace nodetopo::probes::detail {

/// How the scan finds the next line it has to look at (a newline not followed by the TAB, or
/// the two TABs, of a line it would skip). Each falls back to the next where the build or the
/// CPU lacks it: kAvx2 (x86-64 CPUs that have it, chosen at run time), kSse2 (every x86-64),
/// kPortable (one memchr() per line, compiles everywhere: arm64, big-endian). All give exactly
/// the same names.
enum class PciIdsScan { kAvx2, kSse2, kPortable };

/// lookup_pci_names(ids_text, queries) with the given line finder.
PciNames lookup_pci_names(std::string_view ids_text, std::span<const PciNameQuery> queries,
                          PciIdsScan scan);

/// The size from which lookup_pci_names(const PciIdsFile&) searches the file in its order
/// (lookup_sorted_pci_names()) before it scans: below it a scan costs little, and a small file is
/// more likely hand-written than the database its maintainers keep sorted.
inline constexpr std::size_t kSortedSearchFrom = std::size_t{128} << 10;

/// The names lookup_pci_names(ids_text, queries) finds, looked up by binary search over the
/// vendors of a pci.ids laid out as its maintainers keep it (vendors in increasing order of ID,
/// then the class section): nullopt where the search meets a line that layout does not allow,
/// the caller then scans. On such a file, the same names as the scan.
std::optional<PciNames> lookup_sorted_pci_names(std::string_view ids_text,
                                                std::span<const PciNameQuery> queries);

}  // namespace nodetopo::probes::detail
