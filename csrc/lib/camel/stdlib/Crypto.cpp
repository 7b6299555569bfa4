// Module `crypto` (spec 15.7): SHA-256 as FIPS 180-4 describes it, written out
// here (no OpenSSL). The round constants and initial hash value are computed
// from their definition (the first 32 fractional bits of the cube roots of the
// first 64 primes and of the square roots of the first 8) with exact integer
// roots, so there is no table to mistype. `sha256_rounds` hashes the previous
// round's lowercase hex text; like the `sim` kernels it is registered as
// effectful so that it is never folded at compile time.
#include <array>
#include <cstring>

#include "StdlibImpl.h"

namespace xacc::camel::stdlib {

namespace {

using u32 = uint32_t;
using u128 = unsigned __int128;

/// Largest x with x^k <= v (k = 2 or 3), by bisection on exact integers.
uint64_t integerRoot(u128 v, int k) {
  uint64_t lo = 0, hi = uint64_t(1) << 40;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    u128 p = u128(mid) * mid;
    if (k == 3) p *= mid;
    if (p <= v)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

struct Constants {
  std::array<u32, 64> k{};
  std::array<u32, 8> h0{};
  Constants() {
    int found = 0;
    for (u32 p = 2; found < 64; ++p) {
      bool prime = true;
      for (u32 d = 2; d * d <= p; ++d) prime &= p % d != 0;
      if (!prime) continue;
      // frac(cbrt(p)) * 2^32 = cbrt(p * 2^96) mod 2^32; likewise sqrt with 2^64.
      k[found] = u32(integerRoot(u128(p) << 96, 3));
      if (found < 8) h0[found] = u32(integerRoot(u128(p) << 64, 2));
      ++found;
    }
  }
};

const Constants& constants() {
  static const Constants c;
  return c;
}

inline u32 rotr(u32 x, int n) { return (x >> n) | (x << (32 - n)); }

void compress(std::array<u32, 8>& h, const unsigned char* block) {
  const auto& K = constants().k;
  u32 w[64];
  for (int t = 0; t < 16; ++t)
    w[t] = u32(block[4 * t]) << 24 | u32(block[4 * t + 1]) << 16 | u32(block[4 * t + 2]) << 8 |
           u32(block[4 * t + 3]);
  for (int t = 16; t < 64; ++t) {
    u32 s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    u32 s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = s1 + w[t - 7] + s0 + w[t - 16];
  }
  u32 a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int t = 0; t < 64; ++t) {
    u32 t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t] + w[t];
    u32 t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
}

}  // namespace

/// Lowercase hex SHA-256 digest of `data`.
std::string sha256Hex(std::string_view data) {
  std::array<u32, 8> h = constants().h0;
  size_t full = data.size() / 64;
  for (size_t i = 0; i < full; ++i)
    compress(h, reinterpret_cast<const unsigned char*>(data.data()) + 64 * i);
  // Padding: 0x80, zeros to 56 mod 64, then the bit length as 64-bit big endian.
  unsigned char tail[128] = {};
  size_t rest = data.size() - 64 * full;
  std::memcpy(tail, data.data() + 64 * full, rest);
  tail[rest] = 0x80;
  size_t blocks = rest + 1 + 8 <= 64 ? 1 : 2;
  uint64_t bits = uint64_t(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[64 * blocks - 1 - i] = (unsigned char)(bits >> (8 * i));
  for (size_t i = 0; i < blocks; ++i) compress(h, tail + 64 * i);
  static const char* hex = "0123456789abcdef";
  std::string out(64, '0');
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) out[8 * i + j] = hex[(h[i] >> (28 - 4 * j)) & 0xf];
  return out;
}

void registerCrypto() {
  define({.module = "crypto",
          .name = "sha256",
          .gir = "crypto::sha256",
          .params = 1,
          .signature = "(s: string): string",
          .summary = "lowercase hex SHA-256 of the bytes of s",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the argument", "a string", err)) return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* s;
                if (!getStr(I, n, "crypto::sha256", a[0], s)) return false;
                r.push_back(Datum::string(sha256Hex(*s)));
                return true;
              }});
  define({.module = "crypto",
          .name = "sha256_rounds",
          .gir = "crypto::sha256_rounds",
          .params = 2,
          .signature = "(s: string, n: int): string",
          .effectful = true,  // a benchmark kernel: see Note [Stdlib effects]
          .summary = "sha256 applied n times, each round hashing the previous hex text",
          .infer =
              [](const Types& a, Types& r, std::string& err) {
                if (!want(strLike(a[0]), a, 0, "the text", "a string", err) ||
                    !want(intLike(a[1]), a, 1, "the round count", "an int", err))
                  return false;
                r = {Type::string()};
                return true;
              },
          .fn =
              [](Interpreter& I, const Node& n, Datums& a, Datums& r) {
                const std::string* s;
                int64_t rounds;
                if (!getStr(I, n, "crypto::sha256_rounds", a[0], s) ||
                    !getInt(I, n, "crypto::sha256_rounds", a[1], rounds))
                  return false;
                if (rounds < 0)
                  return fail(
                      I, n, RuntimeDiag::InvalidArgument,
                      {"crypto::sha256_rounds", "negative round count " + std::to_string(rounds)});
                std::string text = *s;
                for (int64_t i = 0; i < rounds; ++i) text = sha256Hex(text);
                r.push_back(Datum::string(std::move(text)));
                return true;
              }});
}

}  // namespace xacc::camel::stdlib
