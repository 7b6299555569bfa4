// The kernel disk cache: shared objects of compiled kernels, one file per cache
// key (`<dir>/<key>.so`), shared by every process that uses the directory.
// See Note [Kernel disk cache entries] in DiskCache.cpp for the file format and
// the guarantees (verified loads, atomic writes, degrade on write failure,
// LRU eviction). No LLVM or MLIR here: a cache hit runs without them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace xacc::backend::mlir {

/// The path of the entry stored under `key` in `dir`, after every check of
/// the entry's trailer and content hash passed; "" when there is no entry. An
/// entry that fails a check is reported on the `cache` log channel and
/// deleted, and "" is returned so the caller compiles the kernel again. A hit
/// refreshes the file's access time (the LRU order of eviction).
std::string readCacheEntry(const std::string& dir, const std::string& key);

/// Deletes the entry at `path` that passed its checks but did not load (the
/// dynamic loader refused it, or it lacks the entry point), logging `why`.
void removeCacheEntry(const std::string& path, const std::string& why);

/// Stores the shared object `object` under `key` in `dir`: object and trailer
/// are written to a temporary file, fsync'ed and renamed over the entry, so a
/// reader sees the whole entry or none. Then evicts least recently used
/// entries while the directory holds more than XACC_CACHE_MAX_MB. A failure
/// (full disk, read-only or unwritable directory) turns writing to `dir` off
/// for the rest of the process with one warning on stderr; it never fails the
/// caller. True when the entry was written.
bool writeCacheEntry(const std::string& dir, const std::string& key, std::string_view object);

/// Turns writing to `dir` off for the rest of the process, with the warning
/// of a failed write (`what` failed with errno `err`).
void disableCacheWrites(const std::string& dir, const std::string& what, int err);

/// False once a write to `dir` failed in this process (its entries are still read).
bool cacheWritesEnabled(const std::string& dir);

/// The cache size limit in bytes from XACC_CACHE_MAX_MB (0: no limit).
uint64_t cacheSizeLimit();

}  // namespace xacc::backend::mlir
