// SHA-256 (FIPS 180-4) of a byte range, for the kernel disk cache's entry
// check. On x86-64 hosts with the SHA extensions it runs on them (about ten
// times the portable code it otherwise runs): a cache load
// hashes every byte of the object, and the check must stay a small part of
// the load (benchmarks/backend/cache_verify.py).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xacc::support {

std::array<uint8_t, 32> sha256(const void* data, size_t size);

/// True when sha256 uses the CPU's SHA instructions.
bool sha256Accelerated();

/// Lowercase hex digest of `data`.
std::string sha256Hex(std::string_view data);

}  // namespace xacc::support
