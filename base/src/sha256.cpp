// SHA-256, written by hand (FIPS 180-4) rather than taken from a library: base links nothing but
// spdlog, yaml-cpp and nlohmann, and `topo dump`, which hashes a few kilobytes, would load the
// library at every start (an empty program linked with libcrypto runs 0.72 ms longer on the
// benchmark VM, with libgcrypt 0.09 ms). Where the CPU has the SHA extensions (x86-64 since
// Goldmont, Zen and Ice Lake) the blocks are compressed with them: the agent hashes the whole
// model and every document it serves at each change, megabytes on a large node, and the portable
// code does some 200 MB/s against 1.3 GB/s. The FIPS vectors, sha256sum at the padding
// boundaries and a comparison of both paths on every length are its tests (tests/unit/base).
#include <algorithm>
#include <array>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NODETOPO_SHA256_SHANI 1
#include <immintrin.h>
#endif

#include <nodetopo/base/cpu_features.hpp>
#include <nodetopo/base/hex.hpp>
#include <nodetopo/base/sha256.hpp>

#include "sha256_impl.hpp"

namespace nodetopo {

namespace {

// ---------------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4).

constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

using State = std::array<std::uint32_t, 8>;

void compress(State& h, const unsigned char* block) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{block[4 * i]} << 24) | (std::uint32_t{block[4 * i + 1]} << 16) |
           (std::uint32_t{block[4 * i + 2]} << 8) | std::uint32_t{block[4 * i + 3]};
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = k + s1 + ch + kRound[i] + w[i];
    const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = s0 + maj;
    k = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += k;
}

void compress_portable(State& h, const unsigned char* blocks, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    compress(h, blocks + 64 * i);
}

#if NODETOPO_SHA256_SHANI
#define NODETOPO_SHANI __attribute__((target("sha,sse4.1,ssse3")))

// The SHA extensions keep the eight working variables in two registers, {A, B, E, F} and
// {C, D, G, H} from the highest dword down (Intel SDM, SHA256RNDS2), where State holds a..h.
// Each SHA256RNDS2 does two rounds with W+K of its third operand's low two dwords and returns the
// new {A, B, E, F}; the old one is the new {C, D, G, H}. SHA256MSG1 and SHA256MSG2 compute the
// message schedule four words at a time.
NODETOPO_SHANI void compress_shani(State& h, const unsigned char* blocks, std::size_t count) {
  // NOLINTBEGIN(cppcoreguidelines-pro-type-reinterpret-cast): the intrinsics' pointer types
  const __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h.data()));
  const __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h.data() + 4));
  const __m128i badc = _mm_shuffle_epi32(abcd, 0xb1);
  const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1b);
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xf0);
  // Each dword of a block is big-endian.
  const __m128i swap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  for (std::size_t b = 0; b < count; ++b) {
    const unsigned char* block = blocks + 64 * b;
    const __m128i abef_in = abef;
    const __m128i cdgh_in = cdgh;
    // Words 4g..4g+3 of group g, in w[g % 4]. A C array: std::array drops the vector type's
    // alignment attribute (-Wignored-attributes).
    __m128i w[4];  // NOLINT(cppcoreguidelines-avoid-c-arrays,modernize-avoid-c-arrays)
    for (std::size_t g = 0; g < 4; ++g) {
      w[g] =
          _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * g)), swap);
    }
#pragma GCC unroll 16
    for (std::size_t g = 0; g < 16; ++g) {
      __m128i& m = w[g % 4];
      if (g >= 4) {
        // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], for t = 4g..4g+3.
        const __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(m, w[(g + 1) % 4]),
                                        _mm_alignr_epi8(w[(g + 3) % 4], w[(g + 2) % 4], 4));
        m = _mm_sha256msg2_epu32(t, w[(g + 3) % 4]);
      }
      __m128i wk =
          _mm_add_epi32(m, _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kRound[4 * g])));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);  // rounds 4g, 4g+1: cdgh is the new abef
      wk = _mm_shuffle_epi32(wk, 0x0e);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, wk);  // rounds 4g+2, 4g+3
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  const __m128i abfe = _mm_shuffle_epi32(abef, 0x1b);  // {a, b, e, f} from the lowest dword
  const __m128i ghcd = _mm_shuffle_epi32(cdgh, 0xb1);  // {g, h, c, d}
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h.data()), _mm_blend_epi16(abfe, ghcd, 0xf0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h.data() + 4), _mm_alignr_epi8(ghcd, abfe, 8));
  // NOLINTEND(cppcoreguidelines-pro-type-reinterpret-cast)
}
#undef NODETOPO_SHANI
#endif

using Compress = void (*)(State&, const unsigned char*, std::size_t);

Compress compress_for(detail::Sha256Impl impl) {
#if NODETOPO_SHA256_SHANI
  if (impl == detail::Sha256Impl::kShaNi && cpu_has_sha256_extensions()) return compress_shani;
#else
  (void)impl;
#endif
  return compress_portable;
}

}  // namespace

std::string detail::sha256_hex(std::string_view data, Sha256Impl impl) {
  const Compress compress_blocks = compress_for(impl);
  State h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
             0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  const std::size_t full = data.size() / 64;
  compress_blocks(h, bytes, full);
  // Padding: 0x80, zeros, then the bit length as a 64-bit big-endian number.
  std::array<unsigned char, 128> tail{};
  const std::size_t rest = data.size() - full * 64;
  std::copy(bytes + full * 64, bytes + data.size(), tail.begin());
  tail[rest] = 0x80;
  const std::size_t tail_len = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[tail_len - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  }
  compress_blocks(h, tail.data(), tail_len / 64);
  // write_hex, not snprintf: the first printf call faults in some 200 KiB of libc.
  std::string out(64, '0');
  for (std::size_t i = 0; i < h.size(); ++i)
    write_hex(out.data() + 8 * i, h[i], 8);
  return out;
}

std::string sha256_hex(std::string_view data) {
  return detail::sha256_hex(data, detail::Sha256Impl::kShaNi);
}

}  // namespace nodetopo
