// Why `topo` fills in some of its pages ahead of use. A short run such as `topo dump` of a small
// host takes about 140 page faults, and on some virtual machines each one traps to the
// hypervisor: on the 2-vCPU AMD EPYC VMs of docs/performance.md (round 26) a fault costs 10-15
// us, while MADV_POPULATE_WRITE fills in pages at about 5 us each, in one system call. The pages
// filled here are ones the run writes anyway, so resident memory stays the same; where a fault
// is cheap (bare metal) the two ways cost about the same.
//
// Filled: the zero-initialised data (.bss), which the static constructors of the C++ runtime
// (iostreams, std::locale), CLI11, yaml-cpp and spdlog write before main() — from .preinit_array,
// which the dynamic linker runs after relocating every object and before any constructor; and the
// rest of the heap's first block, from main(), once the constructors have created it. Not
// filled: what the dynamic linker writes while relocating (.data.rel.ro, the GOT, the libraries'
// data), which happens before any code of topo runs, and the stack, whose pages a dump touched
// too few of for a fill to pay (measured, round 26).
#include "prefault.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

// Defined by the linker (GNU ld, gold and lld alike): the start of .bss and the end of the
// executable's data.
extern "C" char __bss_start[];
extern "C" char _end[];

namespace nodetopo::prefault {

namespace {

// Cleared by fill_bss() when switched off. Initialised to true so that it lives in .data, on a
// page relocation has already written, not on a .bss page it would fault in before the fill.
bool enabled = true;

// The heap's first block is 132 KiB (glibc's default top pad plus what the constructors asked
// for); a small dump writes about 56 KiB of what is left. The cap keeps a large MALLOC_TOP_PAD_
// from turning into resident memory the run never uses.
constexpr std::uintptr_t kHeapCap = 64 * 1024;

std::uintptr_t page_up(std::uintptr_t address, std::uintptr_t page) {
  return (address + page - 1) & ~(page - 1);
}

// Errors are ignored on purpose: EINVAL before Linux 5.14, ENOMEM past the end of a mapping. The
// pages are then faulted in one by one, as without this file.
void populate(std::uintptr_t from, std::uintptr_t to) {
  if (from < to) madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
}

bool switched_off(char** envp) {
  const std::size_t length = std::strlen(kSwitch);
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    if (std::strncmp(*envp, kSwitch, length) == 0 && (*envp)[length] == '=')
      return std::strcmp(*envp + length + 1, "0") == 0;
  }
  return false;
}

// Runs before every constructor, with the arguments the dynamic linker passes: std::getenv
// cannot be trusted yet, envp can.
void fill_bss(int /*argc*/, char** /*argv*/, char** envp) {
  enabled = !switched_off(envp);
  if (!enabled) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // The page .bss starts in holds the end of .data, which relocation has written already.
  populate(page_up(reinterpret_cast<std::uintptr_t>(__bss_start), page),
           page_up(reinterpret_cast<std::uintptr_t>(_end), page));
}

[[gnu::section(".preinit_array"), gnu::used]] void (*const kFillBss)(int, char**,
                                                                     char**) = fill_bss;

}  // namespace

void fill_heap() noexcept {
  if (!enabled) return;
  // keepcost is the free block at the top of the main arena; with a heap grown by brk (glibc's
  // way unless brk fails) that block ends at the program break. Otherwise the range below the
  // break is the gap before the heap (unmapped: madvise fails) or the .bss filled above.
  const struct mallinfo2 info = mallinfo2();
  const auto end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  if (info.keepcost == 0 || info.keepcost > end) return;
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const std::uintptr_t from = page_up(end - info.keepcost, page);
  populate(from, std::min(end, from + kHeapCap));
}

}  // namespace nodetopo::prefault
