// Scalar plans -> native code through the kernel JIT (Jit.h): the dispatcher
// is the one packed entry point, the object file goes to the disk cache under
// a hash of the module text (which carries kScalarLoweringVersion), the pass
// pipelines, the LLVM version and the host CPU. Calls run under setjmp: the
// native code longjmps back here when it bails out (ScalarLowering.h).
#include "xacc/backend/mlir/ScalarJit.h"

#include <chrono>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <pthread.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "Jit.h"

namespace xacc::backend::mlir {
namespace {

/// The thread's stack as [lowest address, size); false when unknown.
bool threadStack(uintptr_t& low, size_t& size) {
#if defined(__linux__)
  // The main thread: pthread_getattr_np finds its stack by reading
  // /proc/self/maps (0.2-0.3 ms with MLIR and LLVM mapped, paid by the first
  // native call). The kernel lets it grow to RLIMIT_STACK below its top, and
  // the top is the page end after the last string exec copied there, the
  // program's file name (AT_EXECFN), and the null word after it: the same
  // bottom as glibc's.
  if (static_cast<pid_t>(syscall(SYS_gettid)) == getpid()) {
    rlimit rl;
    const char* execfn = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
    long page = sysconf(_SC_PAGESIZE);
    if (execfn && page > 0 && getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
      uintptr_t top = reinterpret_cast<uintptr_t>(execfn) + std::strlen(execfn) + 1 + sizeof(void*);
      top = (top + uintptr_t(page) - 1) & ~(uintptr_t(page) - 1);
      if (rl.rlim_cur < top) {
        size = rl.rlim_cur;
        low = top - size;
        return true;
      }
    }
  }
#endif
  pthread_attr_t attr;
  void* addr = nullptr;
  size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
  }
  low = reinterpret_cast<uintptr_t>(addr);
  return addr && size;
}

/// The lowest stack address this thread may use for native scalar code: the
/// thread's stack bottom plus a margin for the code that runs after a bail-out
/// and for the frame that detects it.
uint64_t stackLimit() {
  thread_local uint64_t limit = [] {
    uintptr_t low = 0;
    size_t size = 0;
    if (!threadStack(low, size)) return ~uint64_t(0);  // unknown: every call bails out
    size_t margin = size >= (1u << 20) ? (256u << 10) : size / 4;
    return uint64_t(low) + margin;
  }();
  return limit;
}

class NativeScalarModule : public ScalarModule {
public:
  explicit NativeScalarModule(std::shared_ptr<CompiledKernel> k) : kernel_(std::move(k)) {}
  int call(uint32_t fn, const uint64_t* args, uint64_t* result) const override {
    std::jmp_buf jb;
    ScalarAbi::Context ctx{stackLimit(), &jb};
    int code = setjmp(jb);
    if (code != 0) return code;
    int64_t f = fn;
    void* c = &ctx;
    const void* a = args;
    void* r = result;
    void* packed[4] = {&f, &c, &a, &r};
    kernel_->call(packed);
    return 0;
  }

private:
  std::shared_ptr<CompiledKernel> kernel_;
};

}  // namespace

std::unique_ptr<ScalarModule> compileScalarPlan(const ScalarPlan& plan, const ScalarJitOptions& opts,
                                                ScalarCompileInfo& info, std::string& error) {
  if (plan.mlir.empty()) {
    error = "nothing to compile";
    return nullptr;
  }
  JitOptions jo;
  jo.optLevel = opts.optLevel;
  jo.fastMath = false;  // scalar code must compute what the runtime computes
  jo.scalarOnly = true;
  jo.cacheDir = opts.cacheDir;
  auto t0 = std::chrono::steady_clock::now();
  KernelSource source = KernelSource::Compiled;
  std::shared_ptr<CompiledKernel> k = compileKernel(plan.mlir, ScalarAbi::kDispatch, jo, source, error);
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!k) return nullptr;
  info.fromDiskCache = source == KernelSource::DiskCache;
  return std::make_unique<NativeScalarModule>(std::move(k));
}

bool scalarPlanToLlvm(const ScalarPlan& plan, std::string& out, std::string& error) {
  JitOptions jo;
  jo.fastMath = false;
  jo.scalarOnly = true;
  return lowerKernelText(plan.mlir, EmitStage::Llvm, jo, out, error);
}

}  // namespace xacc::backend::mlir
