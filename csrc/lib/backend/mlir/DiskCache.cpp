// Note [Kernel disk cache entries]: each entry of the kernel disk cache is one
// file `<dir>/<key>.so` (key: KernelCache.cpp's kernelCacheKey, 32 hex digits):
// the kernel linked into an ELF shared object, which the dynamic loader maps
// directly (Note [Kernel shared objects] in KernelCache.cpp), followed by a
// trailer that the loader ignores (it maps by program headers):
//
//   offset from the trailer's start
//        0    8  magic "XACCKSO\0"
//        8    4  format version (kFormat = 2), u32 little endian
//       12    4  trailer size (kTrailerSize = 128), u32 little endian
//       16   32  the cache key, ASCII (must equal the file name's key)
//       48   16  pipelineBuildId(), ASCII (the build that compiled the object)
//       64    8  payload length in bytes, u64 little endian
//       72   32  SHA-256 of the payload
//      104   24  zero
//
// The payload, the shared object, is the file's first `length` bytes. (Format
// 1 stored a relocatable `<key>.o` behind a header, linked with ORC; this
// build never reads those, and eviction removes them like any other entry.)
//
// Every field is checked before the file reaches the dynamic loader: a short,
// empty or overlong file, other magic, format or build, an entry stored under
// another key, or a payload whose SHA-256 differs is logged on the `cache`
// channel, deleted, and the kernel compiled again. The key binds the object
// to the kernel text it was compiled from (an object copied under another key
// is refused); the hash catches flipped or torn bytes.
//
// Writes: the shared object is complete in memory before anything is written;
// object and trailer go to a temporary file in the same directory (hidden, so
// no reader or glob for `*.so` sees it), which is fsync'ed and renamed over the
// entry: a reader sees an old entry, the whole new one, or none. If creating
// the directory or any write, fsync or rename fails (ENOSPC, EACCES, EROFS,
// EDQUOT, EFBIG...), the temporary file is removed, writing to that directory
// is turned off for the rest of the process and one warning goes to stderr;
// the kernel itself is linked in memory and runs as usual. Reading stays on (a
// read-only cache that holds verified entries still serves them).
//
// Eviction: a hit sets the entry's access time explicitly (relatime mounts
// would not), and after each write, while the `*.so` and `*.o` files of the
// directory add up to more than XACC_CACHE_MAX_MB, the least recently
// accessed ones (other than the entry just written) are deleted; so are
// temporary files more than an hour old (left by a writer that died).
#include "DiskCache.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "Jit.h"
#include "xacc/support/Sha256.h"
#include "xacc/backend/mlir/XpuBackend.h"
#include "xacc/support/Log.h"
#include "xacc/support/EnvNames.h"

namespace xacc::backend::mlir {

using support::sha256;

std::string diskCacheSha256Hex(const std::string& data) { return support::sha256Hex(data); }
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'X', 'A', 'C', 'C', 'K', 'S', 'O', '\0'};
constexpr uint32_t kFormat = 2;
constexpr size_t kHeaderSize = 128;  // the trailer's size
constexpr const char* kExt = ".so";
constexpr size_t kKeyOff = 16, kKeyLen = 32, kBuildOff = 48, kBuildLen = 16, kLenOff = 64, kHashOff = 72;
constexpr uint64_t kDefaultMaxMb = 2048;

std::atomic<bool> hashCheck{true};

/// Directories a write failed in (writes to them are off for the process).
struct FailedDirs {
  std::mutex mu;
  std::set<std::string> dirs;
  static FailedDirs& get() {
    static FailedDirs* f = new FailedDirs;  // leaked: used until exit
    return *f;
  }
};

void logCache(const std::string& s) { support::logLine(support::LogChannel::Cache, s); }

void put32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
uint32_t get32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t get64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

/// Why `header` (the trailer: the last kHeaderSize bytes of a file of
/// `fileSize` bytes) does not describe an entry for `key` of this build; ""
/// when it does.
std::string headerProblem(const char* header, uint64_t fileSize, const std::string& key) {
  if (std::memcmp(header, kMagic, sizeof kMagic) != 0) return "not a kernel cache entry (bad magic bytes)";
  if (get32(header + 8) != kFormat || get32(header + 12) != kHeaderSize)
    return "entry format " + std::to_string(get32(header + 8)) + ", this build reads " +
           std::to_string(kFormat);
  if (std::string(header + kKeyOff, kKeyLen) != key)
    return "stored under the wrong key (the header names " + std::string(header + kKeyOff, kKeyLen) + ")";
  if (std::string(header + kBuildOff, kBuildLen) != std::string(pipelineBuildId()).substr(0, kBuildLen))
    return "compiled by pipeline build " + std::string(header + kBuildOff, kBuildLen) + ", this is " +
           pipelineBuildId();
  uint64_t want = get64(header + kLenOff);
  if (fileSize - kHeaderSize < want)
    return "truncated: the trailer says " + std::to_string(want) + " object bytes, the file has " +
           std::to_string(fileSize - kHeaderSize);
  if (fileSize - kHeaderSize > want)
    return std::to_string(fileSize - kHeaderSize - want) + " unexpected bytes before the trailer";
  if (want == 0) return "empty object";
  return "";
}

/// write(2) all of `n` bytes; false with errno set on failure.
bool writeAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

/// pread(2) exactly `n` bytes at `off`; false on error or end of file.
bool readAll(int fd, char* p, size_t n, off_t off) {
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    off += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void disableWrites(const std::string& dir, const std::string& what, int err) {
  FailedDirs& f = FailedDirs::get();
  std::lock_guard<std::mutex> lock(f.mu);
  if (f.dirs.insert(dir).second)
    std::fprintf(stderr,
                 "[xacc:cache] warning: cannot write the kernel disk cache %s (%s: %s); compiled kernels are "
                 "not stored for the rest of this process\n",
                 dir.c_str(), what.c_str(), std::strerror(err));
}

void evict(const std::string& dir, const std::string& keep) {
  uint64_t limit = cacheSizeLimit();
  if (limit == 0) return;
  struct Entry {
    fs::path path;
    uint64_t size;
    struct timespec atime;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    struct stat st;
    if (::stat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    // A temporary file of a writer that died before its rename (an hour is
    // far longer than any write takes).
    std::string name = p.filename().string();
    if (name.size() > 1 && name[0] == '.' && name.find(".tmp") != std::string::npos &&
        st.st_mtim.tv_sec + 3600 < ::time(nullptr)) {
      fs::remove(p, ec);
      continue;
    }
    if (p.extension() != ".so" && p.extension() != ".o") continue;  // .o: format 1
    total += static_cast<uint64_t>(st.st_size);
    if (p.filename() != keep) entries.push_back({p, static_cast<uint64_t>(st.st_size), st.st_atim});
  }
  if (total <= limit) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.atime.tv_sec != b.atime.tv_sec) return a.atime.tv_sec < b.atime.tv_sec;
    return a.atime.tv_nsec < b.atime.tv_nsec;
  });
  int removed = 0;
  for (const Entry& e : entries) {
    if (total <= limit) break;
    if (fs::remove(e.path, ec)) {
      total -= e.size;
      ++removed;
    }
  }
  logCache("evicted " + std::to_string(removed) + " least recently used entries from " + dir + " (limit " +
           std::to_string(limit >> 20) + " MB, XACC_CACHE_MAX_MB)");
}

}  // namespace

void disableCacheWrites(const std::string& dir, const std::string& what, int err) { disableWrites(dir, what, err); }

bool cacheWritesEnabled(const std::string& dir) {
  FailedDirs& f = FailedDirs::get();
  std::lock_guard<std::mutex> lock(f.mu);
  return f.dirs.count(dir) == 0;
}

void setDiskCacheHashCheck(bool on) { hashCheck.store(on); }

uint64_t cacheSizeLimit() {
  static const uint64_t limit = [] {
    const char* v = std::getenv(xacc::env::kCacheMaxMb);
    uint64_t mb = kDefaultMaxMb;
    if (v && *v) {
      // Validated by the Python config table (xacc.ConfigError); a malformed
      // value reaching C++ alone (the camel tool) keeps the default.
      char* end = nullptr;
      errno = 0;
      unsigned long long n = std::strtoull(v, &end, 10);
      if (errno == 0 && end && *end == '\0' && v[0] != '-' && n <= (uint64_t(1) << 43)) mb = n;
    }
    return mb << 20;
  }();
  return limit;
}

std::string readCacheEntry(const std::string& dir, const std::string& key) {
  std::string path = (fs::path(dir) / (key + kExt)).string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";  // no entry (or unreadable: compile)
  std::string problem;
  struct stat st;
  char header[kHeaderSize];
  if (::fstat(fd, &st) != 0) {
    problem = std::string("cannot stat: ") + std::strerror(errno);
  } else if (static_cast<uint64_t>(st.st_size) < kHeaderSize) {
    problem = st.st_size == 0
                  ? "empty file"
                  : "truncated: " + std::to_string(st.st_size) + " bytes, shorter than the trailer";
  } else if (!readAll(fd, header, kHeaderSize, st.st_size - static_cast<off_t>(kHeaderSize))) {
    problem = "cannot read the trailer";
  } else if (problem = headerProblem(header, static_cast<uint64_t>(st.st_size), key);
             problem.empty() && hashCheck.load()) {
    uint64_t n = get64(header + kLenOff);
    std::string payload(n, '\0');
    if (!readAll(fd, payload.data(), n, 0)) {
      problem = "cannot read the object";
    } else {
      std::array<uint8_t, 32> h = sha256(payload.data(), n);
      if (std::memcmp(h.data(), header + kHashOff, h.size()) != 0)
        problem = "content hash mismatch (SHA-256): the object was modified or corrupted";
    }
  }
  ::close(fd);
  if (!problem.empty()) {
    std::error_code ec;
    bool removed = fs::remove(path, ec);
    logCache(path + ": " + problem + (removed ? "; deleted" : "; could not delete it") +
             ", the kernel is compiled again");
    return "";
  }
  // LRU order of eviction: the access time of a hit, whatever the mount's atime policy.
  struct timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
  return path;
}

void removeCacheEntry(const std::string& path, const std::string& why) {
  std::error_code ec;
  bool removed = fs::remove(path, ec);
  logCache(path + ": " + why + (removed ? "; deleted" : "; could not delete it") + ", the kernel is compiled again");
}

bool writeCacheEntry(const std::string& dir, const std::string& key, std::string_view object) {
  if (!cacheWritesEnabled(dir) || key.size() != kKeyLen) return false;
  char header[kHeaderSize] = {};
  std::memcpy(header, kMagic, sizeof kMagic);
  put32(header + 8, kFormat);
  put32(header + 12, kHeaderSize);
  std::memcpy(header + kKeyOff, key.data(), kKeyLen);
  std::string build = std::string(pipelineBuildId()).substr(0, kBuildLen);
  build.resize(kBuildLen, '0');
  std::memcpy(header + kBuildOff, build.data(), kBuildLen);
  put64(header + kLenOff, object.size());
  std::array<uint8_t, 32> h = sha256(object.data(), object.size());
  std::memcpy(header + kHashOff, h.data(), h.size());

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return disableWrites(dir, "creating the directory", ec.value()), false;
  static std::atomic<int> seq{0};
  fs::path final = fs::path(dir) / (key + kExt);
  fs::path tmp =
      fs::path(dir) / ("." + key + ".tmp" + std::to_string(::getpid()) + "." + std::to_string(seq++));
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return disableWrites(dir, "creating a file", errno), false;
  const char* step = nullptr;
  if (!writeAll(fd, object.data(), object.size()) || !writeAll(fd, header, kHeaderSize))
    step = "writing";
  else if (::fsync(fd) != 0)
    step = "fsync";
  int err = errno;
  if (::close(fd) != 0 && !step) {
    step = "closing";
    err = errno;
  }
  if (!step && ::rename(tmp.c_str(), final.c_str()) != 0) {
    step = "renaming";
    err = errno;
  }
  if (step) {
    ::unlink(tmp.c_str());
    return disableWrites(dir, step, err), false;
  }
  logCache("stored " + final.string() + " (" + std::to_string(object.size()) + " shared object bytes)");
  evict(dir, final.filename().string());
  return true;
}

}  // namespace xacc::backend::mlir
