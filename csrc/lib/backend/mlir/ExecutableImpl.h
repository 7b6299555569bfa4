// Private to the xpu executable (Executable.cpp: building the plan, running
// steps, packed GEMMs, profiles; ExecutableRegions.cpp: compiling and running
// region kernels): the process-wide kernel caches, the per-region state and
// the XpuExecutable class. Sees torch; no MLIR headers.
#pragma once

#include <ATen/ATen.h>

#include <array>
#include <atomic>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "Jit.h"
#include "KernelIR.h"
#include "Lowering.h"
#include "Partitioner.h"
#include "SizeGeneric.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/mlir/XpuBackend.h"
#include "xacc/ir/Interpreter.h"

namespace xacc::backend::mlir::exec {

using ir::Datum;
using ir::DType;

/// Writes `s` to stderr when XACC_LOG names `mlir` (or `all`).
void logLine(const std::string& s);

// Note [Tensors read as memory]: native code that reads a tensor through
// data_ptr, sizes and strides (region kernels, the packed GEMM's weight
// samples) sees exactly the values eager computes only for a plain dense CPU
// tensor: strided, with storage, and no dispatch key beyond the CPU kernel's,
// autograd's and autocast's (an inference tensor has a subset of these). Every
// other tensor's values exist only through the dispatcher: torch.vmap's
// BatchedTensor (a frame functorch calls under vmap, such as transformers'
// mask functions, is captured like any other; its logical sizes are not its
// storage's and reading its memory threw "Cannot access data pointer of Tensor
// that doesn't have storage", which aborted the process), functorch's grad
// wrappers, functionalization, a subclass with __torch_dispatch__, the
// conjugate and negative view bits (`z.conj().imag` reads as -Im(z); a kernel
// reading its memory got +Im(z), a silently wrong result), ZeroTensor,
// quantized, sparse and meta tensors. Such inputs run through ATen.

/// Whether `t`'s values are its storage's bytes at its sizes and strides, so
/// native code may read them (Note [Tensors read as memory]).
inline bool readableAsMemory(const at::Tensor& t) {
  static const c10::DispatchKeySet kPlainCpu({c10::DispatchKey::CPU, c10::DispatchKey::ADInplaceOrView,
                                              c10::DispatchKey::AutogradCPU, c10::DispatchKey::AutocastCPU});
  return t.defined() && t.layout() == c10::kStrided && t.device().is_cpu() && t.has_storage() &&
         kPlainCpu.isSupersetOf(t.key_set());  // `-` keeps backend bits: never empty
}

/// Process-wide kernels by (options, text), held weakly: the executables that
/// use a kernel own it, so a kernel (its JIT session and code, about 130 KB)
/// and its key (the kernel's text) go with the last executable of a deleted
/// function, as in Note [Kernels live with their executables].
struct KernelCache {
  /// What one compile of a kernel text gave: the kernel (null on failure),
  /// where it came from and why it failed.
  struct Compiled {
    std::shared_ptr<CompiledKernel> fn;
    KernelSource source = KernelSource::Compiled;
    std::string error;
  };
  std::mutex mu;
  std::unordered_map<std::string, std::weak_ptr<CompiledKernel>> kernels;
  /// Note [One compile per kernel text]: the compiles in flight, by the
  /// same key as `kernels`. Regions compiled at once (Note [Parallel kernel
  /// compiles]) often have the same text (the layers of a model); the first
  /// to ask compiles it and the others wait for its result instead of
  /// compiling it again, so they count as memory hits, as they would have
  /// one after the other. The entry goes when the compile ends.
  std::unordered_map<std::string, std::shared_future<Compiled>> inFlight;
  size_t sweepAt = 64;  ///< size at which the next insertion drops expired entries
  /// The live kernel under `key`, or null. Caller holds `mu`.
  std::shared_ptr<CompiledKernel> find(const std::string& key) {
    auto it = kernels.find(key);
    return it == kernels.end() ? nullptr : it->second.lock();
  }
  /// Caller holds `mu`. Expired entries are dropped whenever the map has
  /// doubled since the last sweep, so it stays within twice the live kernels.
  void insert(const std::string& key, const std::shared_ptr<CompiledKernel>& k) {
    kernels[key] = k;
    if (kernels.size() < sweepAt) return;
    for (auto it = kernels.begin(); it != kernels.end();) it = it->second.expired() ? kernels.erase(it) : std::next(it);
    sweepAt = std::max<size_t>(64, 2 * kernels.size());
  }
  // Leaked on purpose: destroying an ExecutionEngine runs ORC deinitializers,
  // which must not happen during static destruction, after LLVM's own statics
  // are gone (that crashes or hangs at exit).
  static KernelCache& get() {
    static KernelCache* c = new KernelCache;
    return *c;
  }
};

struct Totals {
  std::mutex mu;
  KernelTotals t;
  static Totals& get() {
    static Totals* g = new Totals;
    return *g;
  }
};

/// One compiled specialisation of a region.
struct Variant {
  KernelIR kernel;
  std::shared_ptr<CompiledKernel> fn;
  std::string error;  ///< non-empty: this signature falls back
  size_t numPacked = 0;
  bool parallel = false;  ///< may be split over dim 0
  int64_t grainRows = 1;  ///< parallel: fewest rows worth a thread of their own
  // A size-generic kernel (Note [Size-generic kernels], SizeGeneric.cpp):
  // `kernel` has symbolic extents; output shapes come from `pattern`.
  bool generic = false;
  SizePattern pattern;
  bool splittable = false;        ///< the concrete kernel could be split over dim 0
  double workPerElement = 0;      ///< estimateKernelWork copy-elements per output element
  /// A per-region variant run on contiguous inputs: eager's output strides,
  /// looked up once (an entry of RegionState::eagerStrides; those never move).
  std::atomic<const std::vector<std::vector<int64_t>>*> contiguousStrides{nullptr};
};

/// Size-generic kernels of the process (Note [Size-generic kernels],
/// SizeGeneric.cpp), by JIT options and kernel skeleton (skeletonKey): the
/// unrolled steps of a generation loop are different regions of one graph
/// with one skeleton. `firstSeen` is the first signature of a skeleton that
/// got a per-size kernel; `failed` the skeletons whose lowering depends on
/// sizes in a way a generic kernel cannot express.
///
/// Note [Kernels live with their executables]: the process-wide tables hold
/// kernels and generic variants weakly and forget skeletons they only noted,
/// so jitting many distinct functions and deleting them frees their kernels
/// (test_memory_bound on xpu0: 1,500 functions held +200 MB before). A kernel
/// still used by a live executable is shared as before.
struct GenericKernels {
  std::mutex mu;
  std::map<std::string, std::vector<std::weak_ptr<Variant>>> bySkeleton;
  std::map<std::string, std::vector<InputDesc>> firstSeen;
  std::set<std::string> failed;
  static constexpr size_t kMaxNoted = 4096;  ///< firstSeen/failed are forgotten past this (costs a compile)
  size_t trimAt = 256;                        ///< bySkeleton size at which add() trims
  /// Caller holds `mu`.
  void add(const std::string& skel, const std::shared_ptr<Variant>& v) {
    bySkeleton[skel].push_back(v);
    if (bySkeleton.size() < trimAt) return;
    trim();
    trimAt = std::max<size_t>(256, 2 * bySkeleton.size());
  }
  /// The live variants of `skel` (dropping expired ones; the skeleton itself
  /// once none is left). Caller holds `mu`.
  std::vector<std::shared_ptr<Variant>> live(const std::string& skel) {
    std::vector<std::shared_ptr<Variant>> out;
    auto it = bySkeleton.find(skel);
    if (it == bySkeleton.end()) return out;
    auto& list = it->second;
    for (auto w = list.begin(); w != list.end();) {
      if (auto v = w->lock()) {
        out.push_back(std::move(v));
        ++w;
      } else {
        w = list.erase(w);
      }
    }
    if (list.empty()) bySkeleton.erase(it);
    return out;
  }
  /// Caller holds `mu`: drops skeletons whose variants all expired, and the
  /// notes once they pass kMaxNoted.
  void trim() {
    for (auto it = bySkeleton.begin(); it != bySkeleton.end();) {
      auto& list = it->second;
      list.erase(std::remove_if(list.begin(), list.end(), [](const auto& w) { return w.expired(); }), list.end());
      it = list.empty() ? bySkeleton.erase(it) : std::next(it);
    }
    if (firstSeen.size() > kMaxNoted) firstSeen.clear();
    if (failed.size() > kMaxNoted) failed.clear();
  }
  static GenericKernels& get() {
    static GenericKernels* g = new GenericKernels;  // leaked: see KernelCache
    return *g;
  }
};

struct RegionState {
  Region region;
  std::vector<int> inSlots, outSlots;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<Variant>> variants;
  /// Eager's strides of each output per input geometry (Note [Eager strides
  /// of kernel outputs]); an empty vector: contiguous, as the kernel writes.
  std::map<std::string, std::vector<std::vector<int64_t>>> eagerStrides;
  /// Whether a node may reorder dims (reordersDims in ExecutableRegions.cpp):
  /// -1 until the first run asks.
  std::atomic<int> reorders{-1};
  int index = 0;
  std::string key;  ///< regionKey, for profiles
};

/// Times of one thing measured while profiling (seconds): all runs are
/// counted, the first `kKeep` are kept for the median.
struct Samples {
  static constexpr size_t kKeep = 1024;
  int64_t runs = 0;
  double total = 0;
  std::vector<double> kept;
  void add(double s) {
    ++runs;
    total += s;
    if (kept.size() < kKeep) kept.push_back(s);
  }
  std::string json() const {
    std::vector<double> v = kept;
    std::sort(v.begin(), v.end());
    double med = v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
    char buf[160];
    std::snprintf(buf, sizeof buf, "{\"runs\": %lld, \"total_s\": %.9g, \"median_s\": %.9g, \"min_s\": %.9g}",
                  static_cast<long long>(runs), total, med, v.empty() ? 0.0 : v.front());
    return buf;
  }
};

/// A packed copy of one GEMM weight (Note [Packed GEMM weights], Executable.cpp).
struct PackedGemm {
  bool hasBias = false;  ///< addmm (operand 0 is the bias) or mm
  std::mutex mu;
  at::Tensor weight;     ///< W as last seen (a reference: its memory stays W's)
  const void* ptr = nullptr;
  std::vector<int64_t> sizes, strides;
  uint32_t version = 0;
  int64_t rows = 0;
  std::array<float, 16> samples{};
  at::Tensor packed;     ///< empty until the key was seen twice
};

struct Step {
  const ir::Node* node = nullptr;
  std::vector<int> inSlots, outSlots;
  /// Slots this step reads last, or writes and nothing reads: dropped once the
  /// step has run (Note [Executor liveness] in AtenExecutable.h, the same rule).
  std::vector<int> release;
  std::unique_ptr<RegionState> region;
  std::unique_ptr<PackedGemm> gemm;  ///< Note [Packed GEMM weights]
  /// A fallback `aten.` node bound once (Note [Prepared ATen calls]); null:
  /// the node runs through its interp rule.
  std::unique_ptr<aten::PreparedAtenCall> call;
  /// Input-independent: computed once (Note [Input-independent steps]).
  bool constant = false;
};

class XpuExecutable : public Executable {
public:
  XpuExecutable(std::unique_ptr<ir::Graph> g, const CompileOptions& o);

  bool build(support::DiagnosticEngine& diag);

  bool run(const std::vector<Datum>& inputs, std::vector<Datum>& outputs,
           support::DiagnosticEngine& diag) override;

  const CompileStats& stats() const override;

  std::string profileJson() const override;

  std::string describe() const override;

private:
  int slotOf(const ir::Value* v);

  /// run() with profiling on: each region step runs as its ATen ops and then
  /// as its kernel (whose results overwrite the ATen ones), each timed; each
  /// fallback node is timed under its op name.
  bool runProfiled(ir::Interpreter& interp, std::vector<Datum>& slots);

  bool runNodes(ir::Interpreter& interp, const std::vector<const ir::Node*>& nodes, std::vector<Datum>& slots);
  /// A fallback step's node, its operands and results at the slots build()
  /// assigned (runNodes looks each value's slot up in a map).
  bool runStep(ir::Interpreter& interp, const Step& s, std::vector<Datum>& slots);
  /// runStep without the prepared call: the node's interp rule binds from the datums.
  bool runInterpStep(ir::Interpreter& interp, const Step& s, std::vector<Datum>& slots);
  /// A fallback step through its prepared call (Note [Prepared ATen calls]):
  /// Ok (results in their slots), Failed (`error`), or Rebind (not prepared,
  /// or operands of another class: runStep's interp rule binds from the datums).
  aten::PreparedAtenCall::Status runPrepared(const Step& s, std::vector<Datum>& slots, std::string& error);
  /// Fills each step's `release` (build(), once the steps exist).
  void planRelease();
  /// Marks the constant steps and the kept slots (Note [Input-independent steps]).
  void planConstants();
  /// The kept slots' values, parallel to keptSlots_, computed on the first
  /// call (`computedNow`: by this call); null: this call runs every step.
  const std::vector<Datum>* foldedConstants(bool& computedNow);

  /// Note [Packed GEMM weights]. False: run the node through ATen as usual.
  bool runPackedGemm(Step& s, std::vector<Datum>& slots);
  /// runPackedGemm's work; may throw.
  bool packedGemm(Step& s, std::vector<Datum>& slots);

  /// The variant of `r` for inputs `in`, compiled on first use. `threads`:
  /// the ATen threads its kernel is to run with (the caller's
  /// at::get_num_threads(), which a compile thread does not share).
  std::shared_ptr<Variant> variantFor(RegionState& r, const std::vector<InputDesc>& in, int threads);

  /// Note [Parallel kernel compiles]: compiles the variants of `regions` for
  /// their declared input types, on up to compileThreads() threads.
  void compileRegions(const std::vector<RegionState*>& regions);

  /// Whether a call with `in` is big enough to be split over threads, which
  /// the size-generic kernel is not (Note [Splitting kernels over rows]): it
  /// then gets a per-size kernel, split.
  bool tooBigForGeneric(const Variant& g, const std::vector<InputDesc>& in, int threads) const;

  /// A size-generic kernel for region `r` at `in` (Note [Size-generic
  /// kernels]), `concrete` being r lowered for `in`: one of the process's
  /// whose instance at these sizes is exactly `concrete`, or one derived now
  /// when r declares dynamic dims or its skeleton was seen at other sizes
  /// before (at most three per skeleton). Null: a per-size kernel. Called with
  /// r.mu held.
  std::shared_ptr<Variant> genericVariant(RegionState& r, const std::vector<InputDesc>& in,
                                          const KernelIR& concrete, int threads);

  /// Compiles (or finds in the kernel caches) the kernel `text` of variant `v`;
  /// `key` names its signature in the log. A size-generic kernel that fails to
  /// compile is no fallback: the region compiles per size instead.
  void compileVariant(RegionState& r, Variant& v, const std::string& text, const std::string& key);

  void noteFailure(RegionState& r, const std::string& why);

  /// Runs region `r` as its kernel; false (nothing thrown): run its nodes instead.
  bool runRegion(RegionState& r, std::vector<Datum>& slots);
  /// runRegion's work; may throw.
  bool launchRegion(RegionState& r, std::vector<Datum>& slots);
  /// The strides eager gives each output of `r` for these inputs, computed
  /// once per input geometry on meta tensors (Note [Eager strides of kernel outputs]).
  const std::vector<std::vector<int64_t>>& eagerStridesFor(RegionState& r, const std::vector<Datum>& slots,
                                                           const std::vector<at::Tensor>& tensors);

  std::unique_ptr<ir::Graph> graph_;
  CompileOptions opts_;
  JitOptions jit_;
  CompileStats stats_;
  std::vector<Step> steps_;
  std::unordered_map<const ir::Value*, int> slots_;
  size_t numSlots_ = 0;
  std::vector<int> resultSlots_;
  std::vector<std::pair<int, std::string>> regionFailures_;
  bool built_ = false;
  std::atomic<int64_t> kernelLaunches_{0}, regionFallbackRuns_{0}, splitRuns_{0};
  std::atomic<int64_t> packedGemmRuns_{0}, weightsPacked_{0};  // Note [Packed GEMM weights]
  static constexpr int64_t kPackMinRows = 2, kPackMaxRows = 128, kPackMinWeight = int64_t{1} << 20;
  mutable std::mutex statsMu_;
  mutable CompileStats snapshot_;
  // Profiling (opts_.profile): per region step index (kernel, ATen) times;
  // per fallback op name.
  mutable std::mutex profMu_;
  std::map<size_t, std::pair<Samples, Samples>> regionProf_;
  std::map<std::string, Samples> fallbackProf_;
  std::vector<std::string> leftToAten_;  ///< region keys the profile left to ATen
  // Note [Input-independent steps]: constValues_ is written once, under
  // constMu_, before constState_ becomes kConstantsReady.
  static constexpr int kConstantsPending = 0, kConstantsReady = 1, kConstantsOff = 2;
  std::vector<int> keptSlots_;
  std::vector<Datum> constValues_;
  std::mutex constMu_;
  std::atomic<int> constState_{kConstantsPending};
  std::atomic<int64_t> constantStepsSkipped_{0};
};

}  // namespace xacc::backend::mlir::exec
