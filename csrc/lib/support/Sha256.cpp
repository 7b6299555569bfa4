// SHA-256 with the x86 SHA extensions (SHA256RNDS2, SHA256MSG1, SHA256MSG2),
// else a portable implementation: the one SHA-256 of the project (the kernel
// cache's entry check, whose hit path runs without libLLVM: Note [Kernel shared
// objects] in KernelCache.cpp; Camel's `crypto` module). Written from FIPS 180-4 and Intel's instruction
// descriptions; the constants were checked against their definition (integer
// cube and square roots of the first primes), and the tests compare digests
// with Python's hashlib (tests/python/backend/test_disk_cache.py).
//
// The instructions keep the eight working variables in two registers,
// ABEF = (a, b, e, f) and CDGH = (c, d, g, h) (highest lane first), and do two
// rounds per SHA256RNDS2 with the two low lanes of a register of W[t] + K[t].
// The schedule is computed four words at a time: for the group M[g] =
// W[4g..4g+3], M[g] = MSG2(MSG1(M[g-4], M[g-3]) + (W[4g-7..4g-4]), M[g-1]),
// where MSG1 adds sigma0 of the following words and MSG2 adds sigma1 of
// W[t-2] (computing the group's own first two words first).
#include "xacc/support/Sha256.h"

#include <cstring>
#include <string>


#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace xacc::support {
namespace {

alignas(16) constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/// FIPS 180-4, section 6.2.2, one block at a time.
void compressPortable(uint32_t state[8], const uint8_t* p, size_t blocks) {
  for (; blocks > 0; --blocks, p += 64) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t)
      w[t] = uint32_t(p[4 * t]) << 24 | uint32_t(p[4 * t + 1]) << 16 | uint32_t(p[4 * t + 2]) << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; ++t) {
      uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4], f = state[5], g = state[6],
             h = state[7];
    for (int t = 0; t < 64; ++t) {
      uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[t] + w[t];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
  }
}

#if defined(__x86_64__)

bool hasShaExtensions() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 29)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.SHA[bit 29]
}

/// Compresses `blocks` 64-byte blocks at `p` into `state` (a..h).
__attribute__((target("sha,sse4.1,ssse3"))) void compressBlocks(uint32_t state[8], const uint8_t* p,
                                                                size_t blocks) {
  // Big-endian words: reverse the bytes of each 32-bit lane.
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
  __m128i dcba = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));      // lanes a b c d
  __m128i hgfe = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));  // lanes e f g h
  __m128i badc = _mm_shuffle_epi32(dcba, 0xB1);                                   // lanes b a d c
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);                                   // lanes h g f e
  __m128i abef = _mm_alignr_epi8(badc, efgh, 8);                                  // lanes f e b a
  __m128i cdgh = _mm_blend_epi16(efgh, badc, 0xF0);                               // lanes h g d c
  for (; blocks > 0; --blocks, p += 64) {
    __m128i abefStart = abef, cdghStart = cdgh;
    __m128i m[4];
    for (int g = 0; g < 16; ++g) {
      __m128i& cur = m[g % 4];
      if (g < 4)
        cur = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * g)), bswap);
      else
        cur = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(cur, m[(g + 1) % 4]),
                                                 _mm_alignr_epi8(m[(g + 3) % 4], m[(g + 2) % 4], 4)),
                                   m[(g + 3) % 4]);
      __m128i wk = _mm_add_epi32(cur, _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abefStart);
    cdgh = _mm_add_epi32(cdgh, cdghStart);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);  // lanes a b e f
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);  // lanes g h c d
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));         // a b c d
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));     // e f g h
}

#endif

using Compress = void (*)(uint32_t*, const uint8_t*, size_t);

std::array<uint8_t, 32> sha256With(Compress compressBlocks, const uint8_t* data, size_t size) {
  uint32_t state[8];
  std::memcpy(state, kInitial, sizeof state);
  compressBlocks(state, data, size / 64);
  // The tail, 0x80, zeros and the length in bits (big endian) fill one or two blocks.
  uint8_t last[128] = {};
  size_t rest = size % 64;
  if (rest) std::memcpy(last, data + size - rest, rest);
  last[rest] = 0x80;
  size_t n = rest + 9 <= 64 ? 64 : 128;
  uint64_t bits = static_cast<uint64_t>(size) * 8;
  for (int i = 0; i < 8; ++i) last[n - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  compressBlocks(state, last, n / 64);
  std::array<uint8_t, 32> out;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(state[i] >> (24 - 8 * j));
  return out;
}

}  // namespace

bool sha256Accelerated() {
#if defined(__x86_64__)
  static const bool on = hasShaExtensions();
  return on;
#else
  return false;
#endif
}

std::array<uint8_t, 32> sha256(const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (sha256Accelerated()) return sha256With(compressBlocks, bytes, size);
#endif
  return sha256With(compressPortable, bytes, size);
}

std::string sha256Hex(std::string_view data) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : sha256(data.data(), data.size())) {
    hex += digits[b >> 4];
    hex += digits[b & 15];
  }
  return hex;
}

}  // namespace xacc::support
