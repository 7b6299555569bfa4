// Module `crypto` (spec 15.7): SHA-256 (FIPS 180-4) through the project's one
// implementation, xacc/support/Sha256.h (no OpenSSL). `sha256_rounds` hashes the previous
// round's lowercase hex text; like the `sim` kernels it is registered as
// effectful so that it is never folded at compile time.
#include <array>
#include <cstring>

#include "StdlibImpl.h"
#include "xacc/support/Sha256.h"

namespace xacc::camel::stdlib {

/// Lowercase hex SHA-256 digest of `data` (the project's one SHA-256, support/Sha256.cpp).
std::string sha256Hex(std::string_view data) { return support::sha256Hex(data); }

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
