#include <nodetopo/base/cpu_features.hpp>

#if defined(__x86_64__) && __has_include(<sys/platform/x86.h>)
#define NODETOPO_GLIBC_X86_FEATURES 1
// glibc declares the header's inline functions with C's _Bool: GCC takes it in C++, clang not.
#if defined(__clang__)
#define _Bool bool  // NOLINT(bugprone-reserved-identifier)
#endif
#include <sys/platform/x86.h>
#if defined(__clang__)
#undef _Bool
#endif
#endif

namespace nodetopo {

bool cpu_has_avx2() {
#if NODETOPO_GLIBC_X86_FEATURES
  return CPU_FEATURE_ACTIVE(AVX2);
#else
  return false;
#endif
}

bool cpu_has_sha256_extensions() {
#if NODETOPO_GLIBC_X86_FEATURES
  return CPU_FEATURE_ACTIVE(SHA) && CPU_FEATURE_ACTIVE(SSSE3) && CPU_FEATURE_ACTIVE(SSE4_1);
#else
  return false;
#endif
}

}  // namespace nodetopo
