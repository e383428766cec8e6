// Which of the instruction-set extensions the vectorised code paths use the CPU has (and the
// kernel enables), for choosing a path at run time.
//
// Asked of glibc (<sys/platform/x86.h>, glibc 2.33), which read CPUID once at start-up anyway,
// not of __builtin_cpu_supports(): libgcc's constructor behind the builtin runs CPUID a dozen
// more times, and in a virtual machine every CPUID is a trap to the hypervisor (15 us each on
// the benchmark VM). The glibc header stays in one source file: its inline functions are written
// with C's _Bool, which clang does not take in C++.
#pragma once

namespace nodetopo {

/// AVX2 usable (x86-64). False elsewhere.
[[nodiscard]] bool cpu_has_avx2();

/// The SHA extensions usable, with the SSSE3 and SSE4.1 shuffles their SHA-256 code needs
/// (x86-64 since Goldmont, Zen and Ice Lake). False elsewhere.
[[nodiscard]] bool cpu_has_sha256_extensions();

}  // namespace nodetopo
