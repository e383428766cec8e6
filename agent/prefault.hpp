// The start-up pages of `topo`, filled in ahead of use instead of one page fault at a time
// (prefault.cpp says why and which pages).
#pragma once

namespace nodetopo::prefault {

/// The environment variable that turns both fills off when set to "0" (for measuring them).
inline constexpr const char* kSwitch = "NODETOPO_PREFAULT";

/// Fills in what is left of the heap's first block, up to 64 KiB: the pages the run's first
/// allocations land in. Call once, first thing in main(), after the static constructors.
/// Does nothing when NODETOPO_PREFAULT=0, when the kernel cannot (before Linux 5.14), or when
/// the heap does not end at the program break.
void fill_heap() noexcept;

}  // namespace nodetopo::prefault
