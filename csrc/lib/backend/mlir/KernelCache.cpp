// Note [Kernel shared objects]: the half of the kernel JIT that runs without
// LLVM or MLIR. A compiled kernel is stored in the disk cache as an ELF shared
// object (the PIC object file Jit.cpp emits, linked with the system linker),
// and a cache hit maps it with dlopen and finds its packed entry point with
// dlsym. So a process whose kernels all hit the cache never loads libLLVM or
// libMLIR (about 76 MiB of resident memory and the time of their relocations
// and static initialisers): xacc._C_xpu, the module that
// runs captured graphs on xpu devices, links only this half, and the
// compiler (Jit.cpp, in xacc._C_mlir) is loaded with dlopen the first time a
// kernel misses (setKernelCompilerLibrary), or is linked in already (tools,
// the Camel executor, xacc._C_mlir itself).
//
// Invariants:
//   * the cache key is computed here, from the kernel text (the MLIR text
//     MlirEmitter.cpp prints from the kernel IR, without MLIR), the pipeline
//     build id (the compiler's sources and the LLVM version), the options and
//     the host CPU (vendor, signature and feature words from CPUID), so a hit
//     needs nothing from the compiler;
//   * a kernel compiled with a cache directory is linked, written to the cache
//     and then loaded from that entry, so a cold and a warm run execute the
//     same bytes (linked by ld.gold or ld without the compiler driver where
//     they can: Note [Linking kernels without the driver]); without a cache
//     (or when the entry cannot be written or linked) the object is linked in
//     memory by the compiler (ORC);
//   * kernels reach `memrefCopy` through the pointer `__xacc_memrefCopy`
//     defined in their object, which the loader sets: a shared object resolves
//     undefined symbols only from the global scope, where the extension
//     modules' symbols are not.
#include "Jit.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <sstream>
#include <vector>

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "DiskCache.h"
#include "xacc/backend/mlir/ScalarJit.h"
#include "xacc/support/Log.h"
#include "xacc/support/EnvNames.h"

extern char** environ;

namespace xacc::backend::mlir {

extern "C" void xaccMemrefCopy(int64_t elemSize, void* srcArg, void* dstArg) {
  struct UnrankedMemref {
    int64_t rank;
    void* descriptor;
  };
  auto* src = static_cast<UnrankedMemref*>(srcArg);
  auto* dst = static_cast<UnrankedMemref*>(dstArg);
  int64_t rank = src->rank;
  // Each descriptor is {base, data, offset, sizes[rank], strides[rank]}.
  auto fields = [](UnrankedMemref* m, char*& data, const int64_t*& sizes, const int64_t*& strides) {
    auto* d = static_cast<char*>(m->descriptor);
    char* aligned;
    std::memcpy(&aligned, d + sizeof(void*), sizeof aligned);
    int64_t offset;
    std::memcpy(&offset, d + 2 * sizeof(void*), sizeof offset);
    data = aligned;
    sizes = reinterpret_cast<const int64_t*>(d + 2 * sizeof(void*) + sizeof(int64_t));
    strides = sizes + m->rank;
    return offset;
  };
  char *sData, *dData;
  const int64_t *sizes, *sStrides, *dSizes, *dStrides;
  int64_t sOff = fields(src, sData, sizes, sStrides);
  int64_t dOff = fields(dst, dData, dSizes, dStrides);
  if (rank == 0) {
    std::memcpy(dData + dOff * elemSize, sData + sOff * elemSize, elemSize);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0) return;
  std::vector<int64_t> idx(rank, 0);
  int64_t s = sOff, d = dOff;
  while (true) {
    std::memcpy(dData + d * elemSize, sData + s * elemSize, elemSize);
    int64_t axis = rank - 1;
    for (; axis >= 0; --axis) {
      s += sStrides[axis];
      d += dStrides[axis];
      if (++idx[axis] < sizes[axis]) break;
      s -= sStrides[axis] * sizes[axis];
      d -= dStrides[axis] * sizes[axis];
      idx[axis] = 0;
    }
    if (axis < 0) return;
  }
}

namespace {

namespace fs = std::filesystem;

void logCache(const std::string& s) { support::logLine(support::LogChannel::Cache, s); }

std::atomic<const KernelCompiler*> installed{nullptr};

struct CompilerLibrary {
  std::mutex mu;
  std::string path;
  static CompilerLibrary& get() {
    static CompilerLibrary* l = new CompilerLibrary;  // leaked: used until exit
    return *l;
  }
};

/// The compiler, loading its library on first use; null with `error` set when
/// there is none.
const KernelCompiler* compiler(std::string& error) {
  if (const KernelCompiler* c = installed.load(std::memory_order_acquire)) return c;
  CompilerLibrary& l = CompilerLibrary::get();
  std::lock_guard<std::mutex> lock(l.mu);
  if (const KernelCompiler* c = installed.load(std::memory_order_acquire)) return c;
  if (l.path.empty()) {
    error = "the MLIR kernel compiler is not linked into this program";
    return nullptr;
  }
  logCache("a kernel missed the cache: loading the MLIR compiler " + l.path);
  // Its static initialiser (Jit.cpp) calls registerKernelCompiler.
  if (!::dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    const char* e = ::dlerror();
    error = "cannot load the MLIR kernel compiler: " + std::string(e ? e : l.path);
    return nullptr;
  }
  if (const KernelCompiler* c = installed.load(std::memory_order_acquire)) return c;
  error = l.path + " did not install a kernel compiler";
  return nullptr;
}

/// The host CPU as far as generated code depends on it: vendor, family/model/
/// stepping, the feature words of CPUID leaves 1, 7 and 0x80000001, and the
/// register state the OS enables (XCR0).
std::string hostIdentity() {
  static const std::string id = [] {
    std::ostringstream os;
#if defined(__x86_64__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    unsigned maxLeaf = __get_cpuid_max(0, nullptr);
    if (__get_cpuid(0, &a, &b, &c, &d)) {
      char vendor[13] = {};
      std::memcpy(vendor, &b, 4);
      std::memcpy(vendor + 4, &d, 4);
      std::memcpy(vendor + 8, &c, 4);
      os << vendor;
    }
    os << std::hex;
    bool osxsave = false;
    if (maxLeaf >= 1 && __get_cpuid(1, &a, &b, &c, &d)) {  // not ebx: it holds the APIC id
      os << ":" << a << "." << c << "." << d;
      osxsave = (c >> 27) & 1;
    }
    if (maxLeaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) os << ":" << b << "." << c << "." << d;
    if (maxLeaf >= 7 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) os << ":" << a;
    if (__get_cpuid(0x80000001, &a, &b, &c, &d)) os << ":" << c << "." << d;
    if (osxsave) {
      unsigned lo, hi;
      __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      os << ":x" << lo;
    }
#else
    struct utsname u;
    if (::uname(&u) == 0) os << u.machine;
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
      if (line.rfind("Features", 0) == 0 || line.rfind("CPU part", 0) == 0 || line.rfind("isa", 0) == 0) {
        os << "|" << line;
        if (line.rfind("Features", 0) == 0) break;
      }
#endif
    return os.str();
  }();
  return id;
}

std::string kernelCacheKey(const std::string& text, const JitOptions& opts) {
  // pipelineBuildId(): a hash of the compiler's sources (whose pass pipelines
  // are string constants in Jit.cpp), of this file and of the LLVM version, so
  // an object compiled before a change to the pipeline is never loaded by the
  // changed build.
  std::string salt = std::string("build:") + pipelineBuildId() + "|cm-small-pic-so|ic16m32:" +
                     std::to_string(interleaveCount()) + (std::getenv(xacc::env::kMlirInterleave) ? "f" : "") +
                     "|vw" + std::to_string(preferredVectorWidth()) + "|O" + std::to_string(opts.optLevel) +
                     (opts.fastMath ? "|fast" : "|exact") + (opts.scalarOnly ? "|scalar" : "") + "|" +
                     hostIdentity();
  // Two independent 64-bit FNV-1a hashes: collisions are not a practical concern.
  auto fnv = [](const std::string& s, uint64_t h) {
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    return h;
  };
  uint64_t a = fnv(salt, fnv(text, 1469598103934665603ull));
  uint64_t b = fnv(text, fnv(salt, 0x9e3779b97f4a7c15ull));
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
  return buf;
}

/// A kernel in a shared object mapped with dlopen.
class SharedObjectKernel : public CompiledKernel {
public:
  SharedObjectKernel(void* handle, void (*fn)(void**)) : handle_(handle), fn_(fn) {}
  ~SharedObjectKernel() override { ::dlclose(handle_); }
  void call(void** args) const override { fn_(args); }

private:
  void* handle_;
  void (*fn_)(void**);
};

std::shared_ptr<CompiledKernel> loadSharedObject(const std::string& path, const std::string& funcName,
                                                 std::string& error) {
  void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    error = e ? e : "dlopen failed";
    return nullptr;
  }
  auto fn = reinterpret_cast<void (*)(void**)>(::dlsym(h, ("_mlir_" + funcName).c_str()));
  if (!fn) {
    error = "no entry point _mlir_" + funcName;
    ::dlclose(h);
    return nullptr;
  }
  if (void* slot = ::dlsym(h, "__xacc_memrefCopy")) {
    void* helper = reinterpret_cast<void*>(&xaccMemrefCopy);
    std::memcpy(slot, &helper, sizeof helper);
  }
  return std::make_shared<SharedObjectKernel>(h, fn);
}

/// Runs `argv` (searched on PATH) with its output in `log`; its exit status,
/// or -1 when it could not be started.
int runTool(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The static libgcc the C compiler driver links shared objects with
/// (`cc -print-libgcc-file-name`, asked once per process); "" when there is
/// no driver or the file it names does not exist.
const std::string& libgccArchive() {
  static const std::string path = [] {
    std::string p;
    if (FILE* f = ::popen("cc -print-libgcc-file-name 2>/dev/null", "r")) {
      char buf[4096];
      while (size_t n = std::fread(buf, 1, sizeof buf, f)) p.append(buf, n);
      if (::pclose(f) != 0) p.clear();
    }
    while (!p.empty() && (p.back() == '\n' || p.back() == '\r' || p.back() == ' ')) p.pop_back();
    std::error_code ec;
    if (p.empty() || !fs::path(p).is_absolute() || !fs::is_regular_file(p, ec)) return std::string();
    return p;
  }();
  return path;
}

/// Links the relocatable `object` into a shared object with the system
/// linker. The files it needs are temporary files of the cache directory
/// (named like DiskCache.cpp's, so eviction removes those of a writer that
/// died), so a directory that cannot be written turns cache writes off here,
/// with the same warning as a failed entry write.
enum class Link { Ok, CannotWrite, Failed };

Link linkSharedObject(const std::string& object, const std::string& dir, const std::string& key, std::string& so,
                      std::string& error) {
  static std::atomic<int> seq{0};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    disableCacheWrites(dir, "creating the directory", ec.value());
    return Link::CannotWrite;
  }
  std::string stem = (fs::path(dir) / ("." + key + ".tmp" + std::to_string(::getpid()) + "." +
                                       std::to_string(seq++)))
                         .string();
  std::string in = stem + ".o", out = stem + ".so", log = stem + ".log";
  int fd = ::open(in.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    disableCacheWrites(dir, "creating a file", errno);
    return Link::CannotWrite;
  }
  const char* p = object.data();
  size_t n = object.size();
  int err = 0;
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      err = errno;
      break;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  ::close(fd);
  if (err) {
    fs::remove(in, ec);
    disableCacheWrites(dir, "writing", err);
    return Link::CannotWrite;
  }
  // Note [Linking kernels without the driver]: libm for the math the kernels
  // call, libgcc for compiler runtime routines such as half-precision
  // conversions, libc for the memcpy/memset calls LLVM emits. `cc -shared`
  // adds those itself, but the driver (cc, collect2, then ld.bfd) cost about
  // 16.5 ms of CPU per kernel, against 15 for ld.bfd alone and 8.5 for
  // ld.gold (40 links of one small object, user+sys, under load). So the
  // linkers run directly, gold first, with the libgcc the driver names once
  // per process (libgccArchive); a linker that is missing or fails is not
  // tried again in this process, and the driver is the last resort, so a
  // system where neither links alone still gets its kernels stored.
  static std::atomic<bool> skip[2] = {false, false};
  static const char* const kLinkers[2] = {"ld.gold", "ld"};
  const std::string& libgcc = libgccArchive();
  int rc = -1;
  for (int i = 0; i < 2 && rc != 0 && !libgcc.empty(); ++i) {
    if (skip[i].load(std::memory_order_relaxed)) continue;
    rc = runTool({kLinkers[i], "-shared", "-z", "noexecstack", "--eh-frame-hdr", "--hash-style=gnu", "-o", out, in,
                  "-lm", libgcc, "--as-needed", "-lc"},
                 log);
    if (rc != 0) {
      skip[i].store(true, std::memory_order_relaxed);
      std::ifstream l(log);
      std::string msg = rc < 0 ? "" : ": " + std::string(std::istreambuf_iterator<char>(l), {});
      logCache(std::string(kLinkers[i]) + (rc < 0 ? " cannot be run" : " -shared failed") + " (kernel " + key + msg +
               "); not used again in this process");
    }
  }
  if (rc != 0) rc = runTool({"cc", "-shared", "-Wl,-z,noexecstack", "-o", out, in, "-lm"}, log);
  Link result = Link::Failed;
  if (rc == 0) {
    std::ifstream o(out, std::ios::binary);
    so.assign(std::istreambuf_iterator<char>(o), std::istreambuf_iterator<char>());
    if (!so.empty()) result = Link::Ok;
  }
  if (result != Link::Ok) {
    std::ifstream l(log);
    std::string msg((std::istreambuf_iterator<char>(l)), std::istreambuf_iterator<char>());
    error = rc < 0 ? "cannot run the system linker (cc)" : "cc -shared failed: " + msg;
  }
  for (const std::string& f : {in, out, log}) fs::remove(f, ec);
  return result;
}

}  // namespace

void registerKernelCompiler(const KernelCompiler* c) { installed.store(c, std::memory_order_release); }

void setKernelCompilerLibrary(const std::string& path) {
  CompilerLibrary& l = CompilerLibrary::get();
  std::lock_guard<std::mutex> lock(l.mu);
  l.path = path;
}

int preferredVectorWidth() {
  static const int w = [] {
    if (const char* v = std::getenv(xacc::env::kMlirVectorWidth)) return std::atoi(v);
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 512;
    if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx")) return 256;
#endif
    return 0;
  }();
  return w;
}

int interleaveCount() {
  static const int n = [] {
    if (const char* v = std::getenv(xacc::env::kMlirInterleave)) return std::max(1, std::atoi(v));
    return 4;
  }();
  return n;
}

std::string defaultCacheDir() {
  if (const char* d = std::getenv(xacc::env::kCacheDir); d && *d) return std::string(d) == "off" ? "" : d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "xacc").string();
  if (const char* h = std::getenv("HOME"); h && *h) return (fs::path(h) / ".cache" / "xacc").string();
  return "";
}

std::shared_ptr<CompiledKernel> compileKernel(const std::string& text, const std::string& funcName,
                                              const JitOptions& opts, KernelSource& source,
                                              std::string& error) {
  std::string key;
  if (!opts.cacheDir.empty()) {
    key = kernelCacheKey(text, opts);
    // Only an entry that passed every check is mapped (Note [Kernel disk cache
    // entries]); one the loader refuses, or without the entry point, is
    // deleted and compiled again.
    if (std::string path = readCacheEntry(opts.cacheDir, key); !path.empty()) {
      std::string loadError;
      if (auto k = loadSharedObject(path, funcName, loadError)) {
        source = KernelSource::DiskCache;
        return k;
      }
      removeCacheEntry(path, "does not load (" + loadError + ")");
    }
  }
  const KernelCompiler* c = compiler(error);
  if (!c) return nullptr;
  std::string object;
  if (!c->compileObject(text, opts, object, error)) return nullptr;
  source = KernelSource::Compiled;
  if (!key.empty() && cacheWritesEnabled(opts.cacheDir)) {
    std::string so, linkError;
    Link l = linkSharedObject(object, opts.cacheDir, key, so, linkError);
    if (l == Link::Failed) {
      logCache("cannot link kernel " + key + " into a shared object (" + linkError +
               "); it runs from memory and is not stored");
    } else if (l == Link::Ok && writeCacheEntry(opts.cacheDir, key, so)) {
      std::string path = (fs::path(opts.cacheDir) / (key + ".so")).string(), loadError;
      if (auto k = loadSharedObject(path, funcName, loadError)) return k;
      logCache(path + ": the entry just written does not load (" + loadError + "); linking it in memory");
    }
  }
  auto k = c->linkInMemory(object, funcName, error);
  if (!k) error = "linking: " + error;
  return k;
}

bool lowerKernelText(const std::string& text, EmitStage stage, const JitOptions& opts, std::string& out,
                     std::string& error) {
  const KernelCompiler* c = compiler(error);
  return c && c->lowerText(text, stage, opts, out, error);
}

}  // namespace xacc::backend::mlir
