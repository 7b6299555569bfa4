// The kernel disk cache: object files of compiled kernels, one file per cache
// key (`<dir>/<key>.o`), shared by every process that uses the directory.
// See Note [Kernel disk cache entries] in DiskCache.cpp for the file format and
// the guarantees (verified loads, atomic writes, degrade on write failure,
// LRU eviction). No MLIR types here; the payload is the raw object file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace llvm {
class MemoryBuffer;
}

namespace xacc::backend::mlir {

/// The object stored under `key` in `dir`, after every check of the entry's
/// header passed; null when there is no entry. An entry that fails a check is
/// reported on the `cache` log channel and deleted, and null is returned so
/// the caller compiles the kernel again. A hit refreshes the file's access
/// time (the LRU order of eviction).
std::unique_ptr<llvm::MemoryBuffer> readCacheEntry(const std::string& dir, const std::string& key);

/// Stores `object` under `key` in `dir`: header and object are written to a
/// temporary file, fsync'ed and renamed over the entry, so a reader sees the
/// whole entry or none. Then evicts least recently used entries while the
/// directory holds more than XACC_CACHE_MAX_MB. A failure (full disk,
/// read-only or unwritable directory) turns writing to `dir` off for the rest
/// of the process with one warning on stderr; it never fails the caller.
void writeCacheEntry(const std::string& dir, const std::string& key, std::string_view object);

/// False once a write to `dir` failed in this process (its entries are still read).
bool cacheWritesEnabled(const std::string& dir);

/// The cache size limit in bytes from XACC_CACHE_MAX_MB (0: no limit).
uint64_t cacheSizeLimit();

}  // namespace xacc::backend::mlir
