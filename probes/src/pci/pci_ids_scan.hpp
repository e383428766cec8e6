// The pci.ids scan with its line finder chosen by the caller, so that the tests compare the
// vector finder and the portable one on every build (pci_ids.cpp; the public lookup_pci_names()
// takes the fastest the build has).
#pragma once

#include <span>
#include <string_view>

#include <nodetopo/probes/pci_ids.hpp>

namespace nodetopo::probes::detail {

/// How the scan finds the next line it has to look at (a newline not followed by the TAB, or
/// the two TABs, of a line it would skip). kVector is SSE2 on builds that have it (every
/// x86-64) and falls back to kPortable elsewhere; kPortable reads eight bytes at a time and
/// compiles everywhere (arm64, big-endian). Both give exactly the same names.
enum class PciIdsScan { kVector, kPortable };

/// lookup_pci_names(ids_text, queries) with the given line finder.
PciNames lookup_pci_names(std::string_view ids_text, std::span<const PciNameQuery> queries,
                          PciIdsScan scan);

}  // namespace nodetopo::probes::detail
