// Kernel text -> native code. The pipeline (pipelineText) is three pass
// managers around one pattern step:
//   1. tensors -> buffers: canonicalize, eliminate tensor.empty into the output
//      buffers, one-shot bufferization (function arguments are already memrefs,
//      so only intermediates allocate), deallocation of intermediates;
//   2. linalg -> scf loops -> (fastMath) polynomial approximations of exp, tanh,
//      log, erf... in f32 so they vectorise;
//   3. everything -> LLVM dialect.
// The LLVM module gets packed entry points (`_mlir_<f>(void**)`), is optimised
// at -O3 for a host TargetMachine (without one the loop vectoriser has no cost
// model and does nothing) and emitted as a position-independent object file
// into memory. This file is the KernelCompiler (Jit.h): KernelCache.cpp links
// the object into a shared object for the disk cache, which later processes
// map with dlopen without loading LLVM or MLIR at all (Note [Kernel shared
// objects]), or, without a cache, has it linked here into a bare ORC LLJIT.
//
// Pipelines are parsed with the two-argument parsePassPipeline: the
// three-argument form nests the string under an extra module and silently
// runs nothing.
#include "Jit.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>

#include <sys/mman.h>
#include <unistd.h>

#include "DiskCache.h"
#include "MathApprox.h"
#include "Registration.h"
#include "llvm/ExecutionEngine/Orc/AbsoluteSymbols.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/Support/Memory.h"
#include "llvm/Support/Process.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "xacc/support/EnvNames.h"

namespace xacc::backend::mlir {
namespace {

namespace m = ::mlir;

// No `cse` before bufferization: it merges the identical tensor.empty +
// linalg.fill inits of two same-shaped reductions, and after
// eliminate-empty-tensors the second reduction accumulated on top of the
// first one's output (found by tests/python/backend).
const char* kBufferize =
    "builtin.module(canonicalize,eliminate-empty-tensors,one-shot-bufferize,"
    "func.func(buffer-deallocation-pipeline),canonicalize)";
const char* kLoops = "builtin.module(func.func(convert-linalg-to-loops),lower-affine,canonicalize,cse)";
const char* kToLlvm =
    "builtin.module(convert-math-to-funcs{convert-ctlz=false},convert-math-to-llvm,"
    "convert-math-to-libm,convert-scf-to-cf,arith-expand,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-index-to-llvm,convert-func-to-llvm,"
    "convert-cf-to-llvm,reconcile-unrealized-casts)";

/// Note [No post-RA scheduling]: LLVM's post-register-allocation list
/// scheduler, which x86 runs at -O3 for the host here, is quadratic in the
/// size of a basic block, and the loop unroller gives some kernels blocks of
/// thousands of instructions (a masked layer norm of GPT-2's sweep config:
/// 7000 lines of LLVM IR). That one kernel took 0.87 s of code generation,
/// 0.57 s of it in this scheduler (llc-22 -time-passes); without it, 0.31 s.
/// An out-of-order core reorders those instructions itself: the first xpu0
/// call of gpt2 took 2.1 s -> 1.5 s (one compile thread, empty cache, under
/// load) and its warm calls 0.31 ms either way; llama, bert, albert within
/// noise on both. The option is LLVM's global `-post-RA-scheduler=false`,
/// set once before any kernel compiles (position 1: the scheduler reads
/// the option only when given on a command line). It is part of the
/// pipeline's build id through this file, so cached kernels compiled with
/// the scheduler are not reused.
void initLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    registerKernelPasses();
    auto& options = llvm::cl::getRegisteredOptions();
    if (auto it = options.find("post-RA-scheduler"); it != options.end())
      it->second->addOccurrence(1, "post-RA-scheduler", "false");
  });
}

/// Note [JIT memory arena]: every section of every JIT-compiled kernel (code,
/// constant pools, data, RuntimeDyld's GOT and stubs) is allocated from one
/// address range reserved once per process (1 GB, PROT_NONE until used), so
/// any two of them are less than 2 GB apart and kernels can use the small code
/// model. With the default mapper RuntimeDyld mmaps code and constant pools
/// independently, anywhere in the address space, so 32-bit PC-relative
/// references overflowed (an intermittent crash) and kernels had to be
/// compiled with the large code model: then every constant a loop body needs
/// is a `movabsq $.LCPI, %r` plus a `vbroadcastss (%r)` instead of a
/// `{1to16}` memory operand folded into the FMA that uses it, and long fused
/// chains, short of registers for their ~40 polynomial coefficients, spent a
/// fifth of their instructions re-materialising constants and spilling
/// (mixed 20-op chain: 33 movabsq, 59 broadcasts, 109 stack accesses in 950
/// instructions per 64 elements). Freed blocks are reused (first fit); when
/// the arena is full, allocation fails and the region falls back to ATen with
/// the linker's error as the reason.
class ArenaMapper : public llvm::SectionMemoryManager::MemoryMapper {
public:
  static ArenaMapper& get() {
    static ArenaMapper* m = new ArenaMapper;  // leaked: kernels outlive statics
    return *m;
  }

  llvm::sys::MemoryBlock allocateMappedMemory(llvm::SectionMemoryManager::AllocationPurpose, size_t bytes,
                                              const llvm::sys::MemoryBlock* const, unsigned flags,
                                              std::error_code& ec) override {
    std::lock_guard<std::mutex> lock(mu_);
    ec = std::error_code();
    size_t page = static_cast<size_t>(llvm::sys::Process::getPageSizeEstimate());
    bytes = (std::max<size_t>(bytes, 1) + page - 1) / page * page;
    char* p = nullptr;
    for (size_t i = 0; i < free_.size(); ++i)
      if (free_[i].second >= bytes) {
        p = free_[i].first;
        bytes = free_[i].second;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    if (!p) {
      if (!base_ || used_ + bytes > kSize) {
        ec = std::make_error_code(std::errc::not_enough_memory);
        return llvm::sys::MemoryBlock();
      }
      p = base_ + used_;
      used_ += bytes;
    }
    llvm::sys::MemoryBlock block(p, bytes);
    ec = llvm::sys::Memory::protectMappedMemory(block, flags);
    if (ec) return llvm::sys::MemoryBlock();
    return block;
  }

  std::error_code protectMappedMemory(const llvm::sys::MemoryBlock& block, unsigned flags) override {
    return llvm::sys::Memory::protectMappedMemory(block, flags);
  }

  std::error_code releaseMappedMemory(llvm::sys::MemoryBlock& block) override {
    if (!block.base()) return std::error_code();
    ::madvise(block.base(), block.allocatedSize(), MADV_DONTNEED);
    ::mprotect(block.base(), block.allocatedSize(), PROT_NONE);
    std::lock_guard<std::mutex> lock(mu_);
    free_.emplace_back(static_cast<char*>(block.base()), block.allocatedSize());
    block = llvm::sys::MemoryBlock();
    return std::error_code();
  }

private:
  static constexpr size_t kSize = size_t(1) << 30;
  ArenaMapper() {
    void* p = ::mmap(nullptr, kSize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  std::mutex mu_;
  char* base_ = nullptr;
  size_t used_ = 0;
  std::vector<std::pair<char*, size_t>> free_;
};

/// Requests `count` interleaved vector iterations for every innermost loop of
/// `f` with a long floating-point body (>= 16 FP operations: one approximated
/// transcendental function is enough), and twice that for bodies with >= 32
/// multiplicative ones (fmul, fdiv, fma: the polynomial approximations are
/// FMA chains, ~10 each, so three or more transcendental functions) unless
/// XACC_MLIR_INTERLEAVE fixes the count. Lighter loops are memory-bound and
/// keep LLVM's own choice, which also keeps their compile time (interleaving a
/// 20-op chain by 4 costs ~0.1 s more to compile). Why 8 for the long bodies:
/// each interleaved vector is one dependent chain of ~4-cycle FMAs; with 4 of
/// them and a ~400-instruction body, the out-of-order window (~512 entries)
/// holds only ~5 independent chains, fewer than the 8 (2 FMA ports x 4 cycles)
/// that keep both vector ports busy. Measured (CPU time, one thread, 1M
/// elements, under load): mixed 10-op chain 1.21-1.26 -> 1.09-1.14 ns per
/// element, mixed 20-op chain 2.47-2.69 -> 1.82-2.14; 2 was 1.6-4.6, 12 and
/// 16 no better than 8. Long bodies of cheap compare/select/add ops are
/// throughput-bound already and with 8 vectors they spill (the pointwise
/// benchmark's calibration kernel: 7.1 -> 11.0 instructions per element).
void requestInterleave(llvm::Function& f, int count) {
  static const bool fixed = std::getenv(xacc::env::kMlirInterleave) != nullptr;
  llvm::DominatorTree dt(f);
  llvm::LoopInfo li(dt);
  for (llvm::Loop* l : li.getLoopsInPreorder()) {
    if (!l->isInnermost() || !l->getLoopLatch()) continue;
    int fpOps = 0, mulOps = 0;
    for (llvm::BasicBlock* bb : l->blocks())
      for (llvm::Instruction& i : *bb) {
        if (!llvm::isa<llvm::FPMathOperator>(i)) continue;
        ++fpOps;
        auto* ii = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
        mulOps += i.getOpcode() == llvm::Instruction::FMul || i.getOpcode() == llvm::Instruction::FDiv ||
                  (ii && (ii->getIntrinsicID() == llvm::Intrinsic::fma ||
                          ii->getIntrinsicID() == llvm::Intrinsic::fmuladd));
      }
    if (fpOps < 16) continue;
    int n = mulOps >= 32 && !fixed ? 2 * count : count;
    llvm::addStringMetadataToLoop(l, "llvm.loop.interleave.count", static_cast<unsigned>(n));
  }
}

/// The LLVM optimisation pipeline at `optLevel` for `tm`, after marking every
/// function with the preferred vector width (and, with `interleave` > 1, its
/// innermost loops with that interleave count). With `fastMath`, floating-point
/// divisions may use the reciprocal (`arcp`: on x86 vectors, rcp14 plus one
/// Newton step, about 1 ulp, instead of a 10-20 cycle vdivps; the polynomial
/// approximations of tanh, erf and sigmoid each divide) and multiply-adds may
/// contract into FMAs (`contract`). NaN/inf semantics are kept (no nnan/ninf).
std::function<llvm::Error(llvm::Module*)> optimizer(int optLevel, llvm::TargetMachine* tm, bool fastMath,
                                                    int interleave) {
  auto opt = ::mlir::makeOptimizingTransformer(static_cast<unsigned>(optLevel), 0, tm);
  int width = preferredVectorWidth();
  return [opt, width, fastMath, interleave](llvm::Module* m) {
    for (llvm::Function& f : *m) {
      if (f.isDeclaration()) continue;
      if (width > 0) f.addFnAttr("prefer-vector-width", std::to_string(width));
      if (interleave > 1) requestInterleave(f, interleave);
      if (!fastMath) continue;
      for (llvm::BasicBlock& bb : f)
        for (llvm::Instruction& i : bb) {
          if (!llvm::isa<llvm::FPMathOperator>(i)) continue;
          unsigned op = i.getOpcode();
          // -(p / q) with a `ninf` divide (MathApprox.cpp's fast divides): the
          // negation cannot be infinite either. InstCombine folds it into
          // (-p) / q carrying the fneg's flags, and without `ninf` the divide
          // is emitted as vdivps again (found in tanh followed by neg).
          if (op == llvm::Instruction::FNeg)
            if (auto* d = llvm::dyn_cast<llvm::Instruction>(i.getOperand(0));
                d && d->getOpcode() == llvm::Instruction::FDiv && d->hasNoInfs()) {
              i.setHasNoInfs(true);
              i.setHasAllowReciprocal(true);
              i.setHasAllowContract(true);
            }
          if (op == llvm::Instruction::FDiv) i.setHasAllowReciprocal(true);
          if (op == llvm::Instruction::FDiv || op == llvm::Instruction::FMul || op == llvm::Instruction::FAdd ||
              op == llvm::Instruction::FSub)
            i.setHasAllowContract(true);
        }
    }
    return opt(m);
  };
}

std::string errorText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

std::unique_ptr<llvm::TargetMachine> hostTargetMachine(std::string& error) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = errorText(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // Small code model: all JIT sections come from one 1 GB arena (Note [JIT
  // memory arena]), so PC-relative references always reach. Position
  // independent: non-PIC small-model code assumes it lies in the low 2 GB and
  // addresses jump tables absolutely (`jmp *table(,%rax,8)`, a 32-bit
  // address: the scalar Camel code's switch crashed).
  builder->setCodeModel(llvm::CodeModel::Small);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto tm = builder->createTargetMachine();
  if (!tm) {
    error = errorText(tm.takeError());
    return nullptr;
  }
  return std::move(*tm);
}

/// A context with the kernel dialects; diagnostics are captured into `diag`.
struct Context {
  m::MLIRContext ctx;
  std::string diag;
  Context() : ctx(makeRegistry(), m::MLIRContext::Threading::DISABLED) {
    ctx.loadAllAvailableDialects();
    m::registerBuiltinDialectTranslation(ctx);
    m::registerLLVMDialectTranslation(ctx);
    ctx.getDiagEngine().registerHandler([this](m::Diagnostic& d) {
      llvm::raw_string_ostream os(diag);
      os << d.getLocation() << ": " << d << "\n";
      return m::success();
    });
  }
  static m::DialectRegistry makeRegistry() {
    m::DialectRegistry r;
    registerKernelDialects(r);
    return r;
  }
};

bool runPipeline(m::ModuleOp module, const char* text, Context& c, std::string& error) {
  std::string perr;
  llvm::raw_string_ostream es(perr);
  auto pm = m::parsePassPipeline(text, es);
  if (m::failed(pm)) {
    error = "bad pipeline '" + std::string(text) + "': " + perr;
    return false;
  }
  m::PassManager runner(&c.ctx);
  static_cast<m::OpPassManager&>(runner) = std::move(*pm);
  if (m::failed(runner.run(module))) {
    error = "pipeline failed: " + c.diag;
    return false;
  }
  return true;
}

bool approximateMath(m::ModuleOp module, Context& c, std::string& error) {
  m::RewritePatternSet pre(&c.ctx);
  populateFastMathPrePatterns(pre);
  if (m::failed(m::applyPatternsGreedily(module, std::move(pre)))) {
    error = "math approximation did not converge";
    return false;
  }
  m::RewritePatternSet patterns(&c.ctx);
  populateFastMathPatterns(patterns);
  m::populateMathPolynomialApproximationPatterns(patterns);
  if (m::failed(m::applyPatternsGreedily(module, std::move(patterns)))) {
    error = "math approximation did not converge";
    return false;
  }
  return true;
}

/// Parses and runs the pipeline up to `stage` (Kernel: parse only).
m::OwningOpRef<m::ModuleOp> lowerTo(const std::string& text, EmitStage stage, const JitOptions& opts, Context& c,
                                   std::string& error) {
  initLlvmOnce();
  auto module = m::parseSourceString<m::ModuleOp>(text, &c.ctx, "kernel");
  if (!module) {
    error = "MLIR parse error: " + c.diag;
    return nullptr;
  }
  if (stage == EmitStage::Kernel) {
    if (m::failed(m::verify(module->getOperation()))) {
      error = "MLIR verifier: " + c.diag;
      return nullptr;
    }
    return module;
  }
  if (!opts.scalarOnly) {
    if (!runPipeline(*module, kBufferize, c, error)) return nullptr;
    if (stage == EmitStage::Bufferized) return module;
    if (!runPipeline(*module, kLoops, c, error)) return nullptr;
    if (opts.fastMath && !approximateMath(*module, c, error)) return nullptr;
  }
  if (!runPipeline(*module, kToLlvm, c, error)) return nullptr;
  return module;
}

/// A kernel linked from an object file (compiled in this process or read from
/// the disk cache) into a bare ORC LLJIT.
class ObjectKernel : public CompiledKernel {
public:
  ObjectKernel(std::unique_ptr<llvm::orc::LLJIT> jit, void (*fn)(void**)) : jit_(std::move(jit)), fn_(fn) {}
  void call(void** args) const override { fn_(args); }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  void (*fn_)(void**);
};

/// Adds `_mlir_<f>(void** args)` for every function `f` defined in `m`: the
/// packed entry point CompiledKernel::call uses. args[i] points to the i-th
/// argument of `f`; when `f` returns a value, args[numArgs] points to where it
/// is stored. (mlir::ExecutionEngine's calling convention, which the kernels
/// and ScalarJit.cpp were written against.)
void addPackedEntryPoints(llvm::Module& m) {
  std::vector<llvm::Function*> defined;
  for (llvm::Function& f : m)
    if (!f.isDeclaration() && !f.hasLocalLinkage()) defined.push_back(&f);
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  for (llvm::Function* f : defined) {
    auto* entry =
        llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "_mlir_" + f->getName(), m);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    llvm::Value* args = entry->getArg(0);
    auto slot = [&](unsigned i) {
      return b.CreateLoad(ptr, b.CreateGEP(ptr, args, llvm::ConstantInt::get(i64, i)));
    };
    std::vector<llvm::Value*> values;
    for (llvm::Argument& a : f->args()) values.push_back(b.CreateLoad(a.getType(), slot(a.getArgNo())));
    llvm::Value* result = b.CreateCall(f, values);
    if (!f->getReturnType()->isVoidTy()) b.CreateStore(result, slot(static_cast<unsigned>(values.size())));
    b.CreateRetVoid();
  }
}

/// Calls of the runtime helper `memrefCopy` load its address from the
/// exported pointer `__xacc_memrefCopy`, which the loader of the object sets
/// (Note [Kernel shared objects]): the object has no undefined xacc symbol.
void callMemrefCopyThroughPointer(llvm::Module& m) {
  llvm::Function* f = m.getFunction("memrefCopy");
  if (!f || !f->isDeclaration()) return;
  llvm::Type* ptr = llvm::PointerType::getUnqual(m.getContext());
  auto* slot = new llvm::GlobalVariable(m, ptr, false, llvm::GlobalValue::ExternalLinkage,
                                        llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr)),
                                        "__xacc_memrefCopy");
  std::vector<llvm::CallBase*> calls;
  for (llvm::User* u : f->users())
    if (auto* cb = llvm::dyn_cast<llvm::CallBase>(u); cb && cb->getCalledOperand() == f) calls.push_back(cb);
  for (llvm::CallBase* cb : calls) {
    llvm::IRBuilder<> b(cb);
    cb->setCalledOperand(b.CreateLoad(ptr, slot, "memrefCopy.fn"));
  }
  if (f->use_empty()) f->eraseFromParent();
}

/// Links `object` into a fresh LLJIT and finds `_mlir_<funcName>` in it.
std::shared_ptr<CompiledKernel> linkObject(std::unique_ptr<llvm::MemoryBuffer> object,
                                           const std::string& funcName, std::string& error) {
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = errorText(builder.takeError());
    return nullptr;
  }
  // RuntimeDyld with the arena (Note [JIT memory arena]), as for compiled
  // kernels: the objects use the small code model.
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*builder))
                 .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession& es) {
                   return std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(es, [](const llvm::MemoryBuffer&) {
                     return std::make_unique<llvm::SectionMemoryManager>(&ArenaMapper::get());
                   });
                 })
                 .create();
  if (!jit) {
    error = errorText(jit.takeError());
    return nullptr;
  }
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!gen) {
    error = errorText(gen.takeError());
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*gen));
  if (auto e = (*jit)->addObjectFile(std::move(object))) {
    error = errorText(std::move(e));
    return nullptr;
  }
  auto sym = (*jit)->lookup("_mlir_" + funcName);
  if (!sym) {
    error = errorText(sym.takeError());
    return nullptr;
  }
  auto fn = sym->toPtr<void (*)(void**)>();
  // See Note [Kernel shared objects]: memrefCopy through a pointer in the object.
  if (auto slot = (*jit)->lookup("__xacc_memrefCopy")) {
    void* helper = reinterpret_cast<void*>(&xaccMemrefCopy);
    std::memcpy(slot->toPtr<void*>(), &helper, sizeof helper);
  } else {
    llvm::consumeError(slot.takeError());
  }
  return std::make_shared<ObjectKernel>(std::move(*jit), fn);
}

/// The kernel's LLVM module (from the pipeline's LLVM dialect), set up for the
/// host target and optimised; with `entryPoints`, the packed entry points are
/// added first so the optimiser can inline each function into its entry.
std::unique_ptr<llvm::Module> optimizedModule(m::ModuleOp module, llvm::LLVMContext& llctx,
                                              llvm::TargetMachine& tm, const JitOptions& opts, bool entryPoints,
                                              Context& c, std::string& error) {
  auto llmod = m::translateModuleToLLVMIR(module, llctx);
  if (!llmod) {
    error = "translation to LLVM IR failed: " + c.diag;
    return nullptr;
  }
  m::ExecutionEngine::setupTargetTripleAndDataLayout(llmod.get(), &tm);
  if (entryPoints) {
    addPackedEntryPoints(*llmod);
    callMemrefCopyThroughPointer(*llmod);
  }
  // Scalar (Camel) code keeps IEEE rounding: no contraction or reciprocals.
  if (auto e = optimizer(opts.optLevel, &tm, opts.fastMath && !opts.scalarOnly,
                         opts.scalarOnly ? 1 : interleaveCount())(llmod.get())) {
    error = errorText(std::move(e));
    return nullptr;
  }
  return llmod;
}

}  // namespace

std::string pipelineText(bool fastMath) {
  return std::string(kBufferize) + "\n" + kLoops + "\n" +
         (fastMath ? "math approximations (greedy patterns: MathApprox.cpp, then MLIR's polynomial ones)\n" : "") + kToLlvm + "\n";
}

namespace {

bool compileObjectImpl(const std::string& text, const JitOptions& opts, std::string& out, std::string& error) {
  initLlvmOnce();
  Context c;
  auto module = lowerTo(text, EmitStage::Llvm, opts, c, error);
  if (!module) return false;
  auto tm = hostTargetMachine(error);
  if (!tm) return false;
  tm->setOptLevel(opts.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive
                  : opts.optLevel == 0 ? llvm::CodeGenOptLevel::None
                                       : llvm::CodeGenOptLevel::Default);
  llvm::LLVMContext llctx;
  auto llmod = optimizedModule(*module, llctx, *tm, opts, /*entryPoints=*/true, c, error);
  if (!llmod) return false;
  // The object is emitted into memory; only a whole object is linked and
  // written to the disk cache (KernelCache.cpp).
  auto object = llvm::orc::SimpleCompiler(*tm)(*llmod);
  if (!object) {
    error = "code generation: " + errorText(object.takeError());
    return false;
  }
  out.assign((*object)->getBufferStart(), (*object)->getBufferSize());
  return true;
}

std::shared_ptr<CompiledKernel> linkInMemoryImpl(const std::string& object, const std::string& funcName,
                                                 std::string& error) {
  initLlvmOnce();
  return linkObject(llvm::MemoryBuffer::getMemBufferCopy(object, "kernel"), funcName, error);
}

bool lowerTextImpl(const std::string& text, EmitStage stage, const JitOptions& opts, std::string& out,
                   std::string& error) {
  Context c;
  auto module = lowerTo(text, stage, opts, c, error);
  if (!module) return false;
  if (stage != EmitStage::Llvm) {
    llvm::raw_string_ostream os(out);
    module->print(os);
    return true;
  }
  auto tm = hostTargetMachine(error);
  if (!tm) return false;
  llvm::LLVMContext llctx;
  auto llmod = optimizedModule(*module, llctx, *tm, opts, /*entryPoints=*/false, c, error);
  if (!llmod) return false;
  llvm::raw_string_ostream os(out);
  llmod->print(os, nullptr);
  return true;
}

const KernelCompiler kCompiler = {compileObjectImpl, linkInMemoryImpl, lowerTextImpl};

// Installs the compiler in the process's KernelCache.cpp as soon as the
// library holding this file is loaded (see xacc_mlir_jit's link options).
const bool kRegistered = (registerKernelCompiler(&kCompiler), true);

}  // namespace

}  // namespace xacc::backend::mlir

/// Referenced with `-u` by everything that links xacc_mlir_jit, so that this
/// object file, and with it the registration above, is always linked in.
extern "C" __attribute__((visibility("default"))) int xacc_mlir_jit_anchor() {
  return xacc::backend::mlir::kRegistered ? 1 : 0;
}
