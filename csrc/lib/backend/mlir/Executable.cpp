// The xpu executable: a plan of steps over value slots (see Partitioner.h).
// Fallback steps run one node through its registered interp rule (for
// `aten.*`, one boxed ATen call); region steps call a JIT-compiled kernel on
// the tensors' own storage: inputs are passed as memref descriptors built from
// data_ptr/sizes/strides (non-contiguous and expanded inputs use a strided
// layout, so nothing is copied) and outputs are fresh ATen tensors the kernel
// writes in place.
//
// Kernels are specialised per region on the run-time input signature (dtypes,
// shapes, contiguity): the variant for the declared static types is compiled
// up front, others on first use. Compiled kernels are shared process-wide by
// kernel text (the in-memory cache) and stored in XACC_CACHE_DIR (Jit.cpp).
// Large kernels whose rows are independent are compiled with a dynamic row
// dim and split over rows across the ATen thread pool; each chunk is the same
// kernel called on sub-views of the row-indexed buffers.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "Jit.h"
#include "KernelIR.h"
#include "SizeGeneric.h"
#include "xacc/backend/mlir/ScalarJit.h"
#include "Lowering.h"
#include "Partitioner.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/backend/mlir/XpuBackend.h"
#include "xacc/ir/Interpreter.h"
#include "xacc/ir/Printer.h"

namespace xacc::backend::mlir {
namespace {

using ir::Datum;
using ir::DType;

bool logEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("XACC_LOG");
    if (!v) return false;
    std::string s = std::string(",") + v + ",";
    return s.find(",mlir,") != std::string::npos || s.find(",all,") != std::string::npos;
  }();
  return on;
}
void logLine(const std::string& s) {
  if (logEnabled()) std::fprintf(stderr, "[xacc:mlir] %s\n", s.c_str());
}

JitOptions jitOptions(const CompileOptions& o) {
  JitOptions j;
  j.optLevel = o.optLevel;
  j.fastMath = o.fastMath;
  // The disk cache is on by default (XACC_CACHE_DIR, else ~/.cache/xacc), as
  // the compiled objects are keyed by kernel text, pipeline build, LLVM and CPU;
  // "off" (option or variable) turns it off.
  j.cacheDir = o.cacheDir.empty() ? defaultCacheDir() : o.cacheDir == "off" ? "" : o.cacheDir;
  return j;
}

/// Process-wide kernels by (options, text).
struct KernelCache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<CompiledKernel>> kernels;
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
};

/// Size-generic kernels of the process (Note [Size-generic kernels],
/// SizeGeneric.cpp), by JIT options and kernel skeleton (skeletonKey): the
/// unrolled steps of a generation loop are different regions of one graph
/// with one skeleton. `firstSeen` is the first signature of a skeleton that
/// got a per-size kernel; `failed` the skeletons whose lowering depends on
/// sizes in a way a generic kernel cannot express.
struct GenericKernels {
  std::mutex mu;
  std::map<std::string, std::vector<std::shared_ptr<Variant>>> bySkeleton;
  std::map<std::string, std::vector<InputDesc>> firstSeen;
  std::set<std::string> failed;
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

std::string jsonString(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o + "\"";
}

/// Note [Packed GEMM weights]: a fallback `addmm(bias, x, W)` or `mm(x, W)`
/// whose weight W is a parameter (f32, requires_grad, grad mode off) with at
/// least 2^20 elements, and whose x has at most 128 rows, runs as MKL's
/// packed GEMM (`mkl::_mkl_linear`) on a copy of W packed once
/// (`mkl::_mkl_reorder_linear_weight`), instead of `at::addmm`, which packs W
/// into MKL's blocked layout inside every call. Measured on this machine (one
/// thread, f32, best of 5, under load): x [32, 768] times W [768, 2304] 2.3
/// -> 0.82 ms, [768, 3072] 4.5 -> 2.6 ms, GPT-2's LM head [768, 50257] 113 ->
/// 76 ms; [128, 768] x [768, 3072] 16.2 -> 7.7 ms. Below 2^20 weight
/// elements (the MLP's [256, 512], the encoder's [128, 384]) and for 512 rows
/// the packed path was no faster or slower (the bias is copied to the output
/// first, and the packed layout no longer pays off), so those stay on
/// `addmm` (benchmarks/models/gemm_pack.py prints the table).
/// The packed copy is keyed by W's data pointer, sizes, strides, version
/// counter (every in-place torch op on W or a view of it bumps it) and 16
/// sampled values (writes through `.data`, which has its own version counter,
/// or from NumPy through shared memory, do not bump it), and by the row count
/// x has; it is made the second time the same key is seen, so a weight that
/// changes every call is never packed. It holds a reference to W, so its
/// memory is not reused while the copy exists. XACC_PACK_WEIGHTS=0 turns it
/// off. Results are MKL's sgemm summed in another order: equal to addmm's
/// in the GPT-2 shapes measured, within float32 rounding otherwise (max
/// |diff| 5e-5 for K = 1024 and unit-size values; tests/python/backend/
/// test_packed_gemm.py).
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
  std::unique_ptr<RegionState> region;
  std::unique_ptr<PackedGemm> gemm;  ///< Note [Packed GEMM weights]
};

/// The MKL packed-GEMM ops, when this libtorch has them (built with MKL).
struct MklOps {
  std::optional<c10::OperatorHandle> reorder, linear;
  static const MklOps& get() {
    static const MklOps ops = [] {
      MklOps o;
      o.reorder = c10::Dispatcher::singleton().findSchema({"mkl::_mkl_reorder_linear_weight", ""});
      o.linear = c10::Dispatcher::singleton().findSchema({"mkl::_mkl_linear", ""});
      return o;
    }();
    return ops;
  }
  bool available() const { return reorder && linear; }
};

bool packWeightsEnabled() {
  static const bool on = [] {
    const char* v = std::getenv("XACC_PACK_WEIGHTS");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

/// A node the packed GEMM may run: addmm with beta = alpha = 1 and all three
/// tensors as operands, or mm.
bool isPackableGemm(const ir::Node& n, bool& hasBias) {
  auto isOne = [](const ir::Attr* a) {
    return !a || (a->kind() == ir::Attr::Kind::Int && a->getInt() == 1) ||
           (a->kind() == ir::Attr::Kind::Float && a->getFloat() == 1.0);
  };
  if (n.opName() == "aten.addmm.default" && n.numOperands() == 3 && n.numResults() == 1) {
    for (const auto& [name, a] : n.attrs().items())
      if ((name != "beta" && name != "alpha") || !isOne(&a)) return false;
    hasBias = true;
    return true;
  }
  if (n.opName() == "aten.mm.default" && n.numOperands() == 2 && n.numResults() == 1 && n.attrs().empty()) {
    hasBias = false;
    return true;
  }
  return false;
}

std::array<float, 16> sampleWeight(const at::Tensor& w) {
  std::array<float, 16> out{};
  const float* base = w.data_ptr<float>();
  int64_t n = w.numel(), cols = w.size(1);
  for (int64_t i = 0; i < 16; ++i) {
    int64_t j = i * (n - 1) / 15;
    out[i] = base[(j / cols) * w.stride(0) + (j % cols) * w.stride(1)];
  }
  return out;
}

std::string signatureKey(const std::vector<InputDesc>& in) {
  std::string s;
  for (const auto& d : in) {
    s += ir::dtypeName(d.dtype);
    s += d.isTensor ? (d.contiguous ? "[" : "s[") : "(";
    for (int64_t n : d.shape) s += std::to_string(n) + ",";
    s += "]";
  }
  return s;
}

/// Whether kernel outputs can be computed chunk by chunk over dim 0: every
/// output shares dim 0 of the iteration space and nothing reduces over dim 0
/// or reads across rows of it (views that move dim 0 or reductions over it).
bool splittableOverDim0(const KernelIR& k) {
  if (k.outputs.empty()) return false;
  const auto& s0 = k.at(k.outputs[0]).shape;
  if (s0.empty() || s0[0] < 2) return false;
  for (int o : k.outputs)
    if (k.at(o).shape.size() != s0.size() || k.at(o).shape[0] != s0[0]) return false;
  for (const KNode& n : k.nodes) {
    // A view keeps rows apart when its dim 0 is its argument's dim 0, read
    // plainly (no scale, offset or crop), and no other dim of the argument
    // depends on it: pooling windows x[:, :, i*s + a, j*s + b] over [N, C, H,
    // W], the conv block's bn -> gelu -> max_pool2d. Views that move, merge or
    // slice dim 0 (transposes to dim 0, select/index of a row) are not split.
    if (n.kind == KNode::View) {
      const KNode& arg = k.at(n.args[0]);
      // Lower-rank views of lower-rank values (per-channel parameters
      // reshaped to [C, 1, 1]) broadcast along dim 0: row-independent.
      if (n.shape.size() < s0.size() && arg.shape.size() < s0.size()) continue;
      if (n.shape.size() != s0.size() || arg.shape.size() != s0.size() || n.shape[0] != s0[0] ||
          arg.shape[0] != s0[0] || n.viewIndex.empty() || n.viewIndex[0].dim != 0 || n.viewIndex[0].mul != 1 ||
          n.viewIndex[0].add != 0)
        return false;
      for (size_t j = 1; j < n.viewIndex.size(); ++j)
        if (n.viewIndex[j].dim == 0) return false;
      continue;
    }
    if (n.kind == KNode::Reduce) {
      // Row-wise reductions (not over dim 0, same rank outputs) stay within a chunk.
      if (!n.keepDim || n.shape.size() != s0.size() || n.dims.empty() || n.dims[0] == 0) return false;
    }
    if ((n.kind == KNode::Map || n.kind == KNode::Reduce) && n.shape.size() == s0.size() && n.shape[0] != s0[0] &&
        n.shape[0] != 1)
      return false;
    if (n.kind == KNode::Input && n.shape.size() == s0.size() && n.shape[0] != s0[0] && n.shape[0] != 1) return false;
  }
  return true;
}

/// Estimated floating-point work of one element of a Map op, in vector-lane
/// operations after fastMath lowering (MathApprox.cpp's uop counts for exp,
/// tanh, erf and sigmoid's divide; MLIR's polynomial approximations for the
/// other functions; a divide or square root without the fast form occupies
/// the divider for several cycles).
int64_t bytesOf(DType d) {
  switch (d) {
    case DType::Bool: case DType::I8: case DType::U8: return 1;
    case DType::F16: case DType::BF16: case DType::I16: return 2;
    case DType::F32: case DType::I32: return 4;
    case DType::C128: return 16;
    default: return 8;
  }
}

double mapOpCost(const std::string& op) {
  static const std::unordered_map<std::string, double> cost = {
      {"exp", 14},   {"exp2", 14},  {"expm1", 20}, {"tanh", 18},  {"erf", 19},   {"erfc", 24},
      {"log", 20},   {"log1p", 24}, {"log2", 20},  {"log10", 20}, {"sin", 24},   {"cos", 24},
      {"tan", 30},   {"atan", 24},  {"asin", 30},  {"acos", 30},  {"atan2", 30}, {"sinh", 30},
      {"cosh", 30},  {"pow", 40},   {"div", 8},    {"sqrt", 8},   {"rsqrt", 8},  {"fmod", 10},
      {"floordiv", 10}};
  auto it = cost.find(op);
  return it == cost.end() ? 1.0 : it->second;
}

}  // namespace

KernelWork estimateKernelWork(const KernelIR& k) {
  KernelWork w;
  if (k.outputs.empty()) return w;
  double outElems = static_cast<double>(std::max<int64_t>(1, numelOf(k.at(k.outputs[0]).shape)));
  for (const KInput& in : k.inputs) w.bytesPerElement += numelOf(in.shape) * bytesOf(in.dtype) / outElems;
  for (int o : k.outputs) w.bytesPerElement += numelOf(k.at(o).shape) * bytesOf(k.at(o).dtype) / outElems;
  for (const KNode& n : k.nodes) {
    if (n.kind == KNode::Map) w.opsPerElement += mapOpCost(n.op) * numelOf(n.shape) / outElems;
    if (n.kind == KNode::Reduce) w.opsPerElement += numelOf(k.at(n.args[0]).shape) / outElems;
  }
  // One element of a plain f32 copy moves 8 bytes; measured on this
  // machine's AVX-512 cores (one thread, pointwise.py), that takes about as
  // long as 12 lane-operations of a fused body (0.33 ns vs 0.025 ns each).
  w.copyElements = numelOf(k.at(k.outputs[0]).shape) * (w.bytesPerElement / 8.0 + w.opsPerElement / 12.0);
  return w;
}

namespace {

/// Memref descriptor fields, packed one pointer per LLVM argument. `args`
/// points into `storage`, so storage must never move: a deque keeps element
/// addresses stable as it grows (a reserved vector did not once a kernel had
/// more than 64 descriptor fields, e.g. six rank-4 memrefs, and the kernel
/// then read freed memory).
struct Packer {
  std::deque<void*> storage;  // owned values (pointers or int64s), stable addresses
  std::vector<void*> args;
  void reserve(size_t n) { args.reserve(n); }
  void add(void* v) {
    storage.push_back(v);
    args.push_back(&storage.back());
  }
  void addInt(int64_t v) { add(reinterpret_cast<void*>(v)); }
};

class XpuExecutable : public Executable {
public:
  XpuExecutable(std::unique_ptr<ir::Graph> g, const CompileOptions& o) : graph_(std::move(g)), opts_(o) {
    jit_ = jitOptions(o);
  }

  bool build(support::DiagnosticEngine& diag) {
    Partition p = partitionGraph(*graph_, !opts_.disableLowering, opts_.atenRegions);
    stats_.fallbackReasons = p.reasons;
    leftToAten_ = p.leftToAten;
    for (size_t i = 0; i < graph_->numParams(); ++i) slotOf(graph_->param(i));
    for (auto& ps : p.steps) {
      Step s;
      if (ps.isRegion) {
        auto rs = std::make_unique<RegionState>();
        rs->region = std::move(ps.region);
        rs->index = stats_.regions++;
        rs->key = ps.key;
        stats_.loweredNodes += static_cast<int>(rs->region.nodes.size());
        for (ir::Value* v : rs->region.inputs) rs->inSlots.push_back(slotOf(v));
        for (ir::Value* v : rs->region.outputs) rs->outSlots.push_back(slotOf(v));
        // Every value inside gets a slot too, for when a signature falls back.
        for (const ir::Node* n : rs->region.nodes)
          for (size_t i = 0; i < n->numResults(); ++i) slotOf(n->result(i));
        s.region = std::move(rs);
      } else {
        s.node = ps.node;
        bool hasBias = false;
        if (packWeightsEnabled() && MklOps::get().available() && isPackableGemm(*s.node, hasBias)) {
          s.gemm = std::make_unique<PackedGemm>();
          s.gemm->hasBias = hasBias;
        }
        if (!s.node->op().interp) {
          diag.error("E0701", s.node->loc(), "xpu: no way to execute '" + s.node->opName() + "'");
          return false;
        }
        ++stats_.fallbackNodes;
        for (ir::Value* v : s.node->operands()) s.inSlots.push_back(slotOf(v));
        for (size_t i = 0; i < s.node->numResults(); ++i) s.outSlots.push_back(slotOf(s.node->result(i)));
      }
      steps_.push_back(std::move(s));
    }
    for (ir::Value* v : graph_->results()) resultSlots_.push_back(slotOf(v));
    // Compile the variants for the declared types now, when they are static.
    for (auto& s : steps_) {
      if (!s.region) continue;
      if (!declaresDynamicDims(s.region->region)) variantFor(*s.region, describeInputs(s.region->region, 0));
    }
    for (auto& [r, why] : regionFailures_) stats_.fallbackReasons.push_back(why);
    built_ = true;
    for (const auto& r : stats_.fallbackReasons) logLine("fallback: " + r);
    return true;
  }

  bool run(const std::vector<Datum>& inputs, std::vector<Datum>& outputs,
           support::DiagnosticEngine& diag) override {
    if (inputs.size() != graph_->numParams()) {
      diag.error("E0702", {}, "xpu: expected " + std::to_string(graph_->numParams()) + " inputs, got " +
                                  std::to_string(inputs.size()));
      return false;
    }
    std::vector<Datum> slots(numSlots_);
    for (size_t i = 0; i < inputs.size(); ++i) slots[i] = inputs[i];
    std::unique_ptr<ir::Interpreter> interp;
    if (opts_.profile) {
      if (!interp) interp = std::make_unique<ir::Interpreter>(diag);
      if (!runProfiled(*interp, slots)) return false;
      outputs.clear();
      for (int r : resultSlots_) outputs.push_back(slots[r]);
      return true;
    }
    for (auto& s : steps_) {
      if (s.region) {
        if (runRegion(*s.region, slots)) {
          ++kernelLaunches_;
          continue;
        }
        // This signature does not lower: run the region's nodes one by one.
        ++regionFallbackRuns_;
        if (!interp) interp = std::make_unique<ir::Interpreter>(diag);
        if (!runNodes(*interp, s.region->region.nodes, slots)) return false;
        continue;
      }
      if (s.gemm && runPackedGemm(s, slots)) continue;
      if (!interp) interp = std::make_unique<ir::Interpreter>(diag);
      if (!runNodes(*interp, {s.node}, slots)) return false;
    }
    outputs.clear();
    for (int r : resultSlots_) outputs.push_back(slots[r]);
    return true;
  }

  const CompileStats& stats() const override {
    std::lock_guard<std::mutex> lock(statsMu_);
    snapshot_ = stats_;
    snapshot_.kernelLaunches = kernelLaunches_.load();
    snapshot_.regionFallbackRuns = regionFallbackRuns_.load();
    snapshot_.splitRuns = splitRuns_.load();
    snapshot_.packedGemmRuns = packedGemmRuns_.load();
    snapshot_.weightsPacked = weightsPacked_.load();
    return snapshot_;
  }

  std::string profileJson() const override {
    if (!opts_.profile) return "{}";
    std::lock_guard<std::mutex> lock(profMu_);
    std::string o = "{\"regions\": [";
    bool first = true;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& s = steps_[i];
      if (!s.region) continue;
      o += first ? "" : ", ";
      first = false;
      o += "{\"key\": " + jsonString(s.region->key) + ", \"index\": " + std::to_string(s.region->index) +
           ", \"ops\": [";
      for (size_t j = 0; j < s.region->region.nodes.size(); ++j)
        o += (j ? ", " : "") + jsonString(s.region->region.nodes[j]->opName());
      auto it = regionProf_.find(i);
      o += "], \"kernel\": " + (it == regionProf_.end() ? Samples().json() : it->second.first.json()) +
           ", \"aten\": " + (it == regionProf_.end() ? Samples().json() : it->second.second.json()) + "}";
    }
    o += "], \"fallback_ops\": [";
    first = true;
    for (const auto& [op, smp] : fallbackProf_) {
      o += (first ? "" : ", ") + std::string("{\"op\": ") + jsonString(op) + ", \"time\": " + smp.json() + "}";
      first = false;
    }
    o += "], \"aten_regions\": [";
    for (size_t j = 0; j < opts_.atenRegions.size(); ++j) o += (j ? ", " : "") + jsonString(opts_.atenRegions[j]);
    return o + "]}";
  }

  std::string describe() const override {
    std::ostringstream os;
    for (const auto& k : leftToAten_) os << "left to ATen: " << k << "\n";
    for (const auto& s : steps_) {
      if (s.region) {
        os << "region " << s.region->index << " (" << s.region->region.nodes.size() << " nodes):";
        for (const ir::Node* n : s.region->region.nodes) os << " " << n->opName();
        os << "\n";
      } else {
        os << "fallback: " << s.node->opName() << "\n";
      }
    }
    return os.str();
  }

private:
  int slotOf(const ir::Value* v) {
    auto it = slots_.find(v);
    if (it != slots_.end()) return it->second;
    int s = static_cast<int>(numSlots_++);
    slots_[v] = s;
    return s;
  }

  /// run() with profiling on: each region step runs as its ATen ops and then
  /// as its kernel (whose results overwrite the ATen ones), each timed; each
  /// fallback node is timed under its op name.
  bool runProfiled(ir::Interpreter& interp, std::vector<Datum>& slots) {
    using clock = std::chrono::steady_clock;
    auto secs = [](clock::time_point a, clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
    for (size_t i = 0; i < steps_.size(); ++i) {
      Step& s = steps_[i];
      if (s.region) {
        auto t0 = clock::now();
        if (!runNodes(interp, s.region->region.nodes, slots)) return false;
        auto t1 = clock::now();
        bool kernel = runRegion(*s.region, slots);
        auto t2 = clock::now();
        ++(kernel ? kernelLaunches_ : regionFallbackRuns_);
        std::lock_guard<std::mutex> lock(profMu_);
        auto& prof = regionProf_[i];
        prof.second.add(secs(t0, t1));
        if (kernel) prof.first.add(secs(t1, t2));
        continue;
      }
      auto t0 = clock::now();
      if (!runNodes(interp, {s.node}, slots)) return false;
      double d = secs(t0, clock::now());
      std::lock_guard<std::mutex> lock(profMu_);
      fallbackProf_[s.node->opName()].add(d);
    }
    return true;
  }

  bool runNodes(ir::Interpreter& interp, const std::vector<const ir::Node*>& nodes, std::vector<Datum>& slots) {
    for (const ir::Node* n : nodes) {
      std::vector<Datum> args, results;
      for (ir::Value* v : n->operands()) args.push_back(slots[slotOf(v)]);
      if (!n->op().interp(interp, *n, args, results)) return false;
      for (size_t i = 0; i < results.size() && i < n->numResults(); ++i) slots[slotOf(n->result(i))] = results[i];
    }
    return true;
  }

  /// Note [Packed GEMM weights]. False: run the node through ATen as usual.
  bool runPackedGemm(Step& s, std::vector<Datum>& slots) {
    size_t base = s.gemm->hasBias ? 1 : 0;
    const Datum& dx = slots[s.inSlots[base]];
    const Datum& dw = slots[s.inSlots[base + 1]];
    if (dx.kind() != ir::DKind::Tensor || dw.kind() != ir::DKind::Tensor) return false;
    const at::Tensor& x = aten::tensorOf(dx);
    const at::Tensor& w = aten::tensorOf(dw);
    auto plainF32 = [](const at::Tensor& t, int64_t dim) {
      return t.defined() && t.device().is_cpu() && t.layout() == c10::kStrided &&
             t.scalar_type() == at::kFloat && t.dim() == dim && !t.is_inference();
    };
    if (!plainF32(x, 2) || !plainF32(w, 2) || !w.requires_grad() || c10::GradMode::is_enabled()) return false;
    int64_t m = x.size(0), k = w.size(0), n = w.size(1);
    if (m < 1 || m > kPackMaxRows || x.size(1) != k || k * n < kPackMinWeight) return false;
    std::optional<at::Tensor> bias;
    if (s.gemm->hasBias) {
      const Datum& db = slots[s.inSlots[0]];
      if (db.kind() != ir::DKind::Tensor) return false;
      const at::Tensor& b = aten::tensorOf(db);
      if (!plainF32(b, 1) || b.size(0) != n) return false;
      bias = b;
    }
    PackedGemm& g = *s.gemm;
    at::Tensor packed;
    {
      std::lock_guard<std::mutex> lock(g.mu);
      uint32_t version = w.unsafeGetTensorImpl()->version_counter().current_version();
      std::array<float, 16> samples = sampleWeight(w);
      bool same = g.weight.defined() && g.ptr == w.data_ptr() && g.version == version && g.rows == m &&
                  g.sizes == w.sizes().vec() && g.strides == w.strides().vec() && g.samples == samples;
      if (!same) {
        // A new weight (or rows, or contents): remember it, pack next time.
        g.weight = w;
        g.ptr = w.data_ptr();
        g.version = version;
        g.rows = m;
        g.sizes = w.sizes().vec();
        g.strides = w.strides().vec();
        g.samples = samples;
        g.packed = at::Tensor();
        return false;
      }
      if (!g.packed.defined()) {
        auto t0 = std::chrono::steady_clock::now();
        g.packed = MklOps::get().reorder->typed<at::Tensor(const at::Tensor&, int64_t)>().call(
            w.t().contiguous(), m);
        ++weightsPacked_;
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s: weight [%lld, %lld] packed for MKL's packed GEMM (%lld rows) in %.2f ms",
                      s.node->opName().c_str(), static_cast<long long>(k), static_cast<long long>(n),
                      static_cast<long long>(m),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
        logLine(buf);
      }
      packed = g.packed;
    }
    at::Tensor out =
        MklOps::get()
            .linear->typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                      const std::optional<at::Tensor>&, int64_t)>()
            .call(x, packed, w.t(), bias, m);
    slots[s.outSlots[0]] = aten::makeTensorDatum(std::move(out));
    ++packedGemmRuns_;
    return true;
  }

  std::shared_ptr<Variant> variantFor(RegionState& r, const std::vector<InputDesc>& in) {
    std::string key = signatureKey(in);
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.variants.find(key);
    if (it != r.variants.end() && !(it->second->generic && tooBigForGeneric(*it->second, in)))
      return it->second;
    auto v = std::make_shared<Variant>();
    r.variants[key] = v;
    if (!buildKernel(r.region, in, v->kernel, v->error)) {
      noteFailure(r, v->error);
      return v;
    }
    if (auto g = genericVariant(r, in, v->kernel)) {
      r.variants[key] = g;
      return g;
    }
    // Kernels big enough to be worth threads get a dynamic row dim, so the
    // same code runs on any row range (and any row count).
    // Note [Splitting kernels over rows]: a kernel is split when its
    // estimated work (estimateKernelWork: bytes moved and FP operations per
    // element, in f32-copy elements) reaches `parallelThreshold`, so a chain
    // of transcendental functions is split at fewer elements than a plain
    // add. Each thread gets at least half the threshold's work (the grain),
    // so a kernel at the threshold runs as two chunks; at::parallel_for
    // (OpenMP) gives each thread one contiguous range of rows.
    const KernelIR& k = v->kernel;
    int threads = at::get_num_threads();
    if (opts_.parallel && threads > 1 && splittableOverDim0(k)) {
      KernelWork w = estimateKernelWork(k);
      int64_t rows = k.at(k.outputs[0]).shape[0];
      if (w.copyElements >= static_cast<double>(opts_.parallelThreshold)) {
        v->parallel = true;
        v->kernel.dynRows = rows;
        double perRow = std::max(w.copyElements / rows, 1e-9);
        v->grainRows = std::clamp<int64_t>(
            static_cast<int64_t>(std::ceil(opts_.parallelThreshold / 2.0 / perRow)), 1, rows);
      }
      char buf[240];
      std::snprintf(buf, sizeof buf,
                    "region %d: %s over dim 0 (%lld rows, %.1f bytes + %.1f FP ops per element = %.0f "
                    "copy-elements of work, threshold %lld, %d threads, grain %lld rows)",
                    r.index, v->parallel ? "split" : "not split", static_cast<long long>(rows),
                    w.bytesPerElement, w.opsPerElement, w.copyElements,
                    static_cast<long long>(opts_.parallelThreshold), threads,
                    static_cast<long long>(v->grainRows));
      logLine(buf);
    }
    compileVariant(r, *v, emitKernelMlir(v->kernel), key);
    return v;
  }

  /// Whether a call with `in` is big enough to be split over threads, which
  /// the size-generic kernel is not (Note [Splitting kernels over rows]): it
  /// then gets a per-size kernel, split.
  bool tooBigForGeneric(const Variant& g, const std::vector<InputDesc>& in) const {
    if (!g.splittable || !opts_.parallel || at::get_num_threads() <= 1) return false;
    // On every run of a generic kernel: the output's element count, no copies.
    double elements = 1;
    for (int64_t e : g.kernel.at(g.kernel.outputs[0]).shape)
      elements *= static_cast<double>(isSymbolicExtent(e) ? symbolSize(g.pattern, in, symbolIndex(e)) : e);
    return g.workPerElement * elements >= static_cast<double>(opts_.parallelThreshold);
  }

  /// A size-generic kernel for region `r` at `in` (Note [Size-generic
  /// kernels]), `concrete` being r lowered for `in`: one of the process's
  /// whose instance at these sizes is exactly `concrete`, or one derived now
  /// when r declares dynamic dims or its skeleton was seen at other sizes
  /// before (at most three per skeleton). Null: a per-size kernel. Called with
  /// r.mu held.
  std::shared_ptr<Variant> genericVariant(RegionState& r, const std::vector<InputDesc>& in,
                                          const KernelIR& concrete) {
    if (concrete.outputs.empty()) return nullptr;
    std::string skel = std::string(jit_.fastMath ? "F" : "E") + std::to_string(jit_.optLevel) + "|" +
                       skeletonKey(concrete);
    auto& gk = GenericKernels::get();
    std::lock_guard<std::mutex> gl(gk.mu);
    auto& list = gk.bySkeleton[skel];
    for (const auto& g : list)
      if (matchesPattern(g->pattern, in) && instanceOf(g->kernel, g->pattern, in, concrete)) {
        if (tooBigForGeneric(*g, in)) return nullptr;
        std::lock_guard<std::mutex> sl(statsMu_);
        ++stats_.memoryCacheHits;
        std::lock_guard<std::mutex> tl(Totals::get().mu);
        ++Totals::get().t.memoryHits;
        return g;
      }
    if (gk.failed.count(skel) || list.size() >= 3) return nullptr;
    auto seen = gk.firstSeen.find(skel);
    if (seen == gk.firstSeen.end() && !declaresDynamicDims(r.region)) {
      gk.firstSeen.emplace(skel, in);
      return nullptr;
    }
    const SizePattern* prev = list.empty() ? nullptr : &list.back()->pattern;
    auto v = std::make_shared<Variant>();
    if (!derivePattern(r.region, seen == gk.firstSeen.end() ? in : seen->second, in, prev, v->pattern))
      return nullptr;
    std::string why, text;
    if (buildSizeGenericKernel(r.region, v->pattern, concrete, v->kernel, why))
      text = emitKernelMlir(v->kernel, {}, &why);
    if (text.empty()) {
      logLine("region " + std::to_string(r.index) + ": no size-generic kernel for " + patternText(v->pattern) +
              " (" + why + "); one kernel per size");
      gk.failed.insert(skel);
      return nullptr;
    }
    v->generic = true;
    v->splittable = splittableOverDim0(concrete);
    v->workPerElement = estimateKernelWork(concrete).copyElements /
                        static_cast<double>(std::max<int64_t>(1, numelOf(concrete.at(concrete.outputs[0]).shape)));
    compileVariant(r, *v, text, patternText(v->pattern));
    if (!v->fn) {
      gk.failed.insert(skel);
      return nullptr;
    }
    list.push_back(v);
    return tooBigForGeneric(*v, in) ? nullptr : v;
  }

  /// Compiles (or finds in the kernel caches) the kernel `text` of variant `v`;
  /// `key` names its signature in the log. A size-generic kernel that fails to
  /// compile is no fallback: the region compiles per size instead.
  void compileVariant(RegionState& r, Variant& v, const std::string& text, const std::string& key) {
    std::string region = "region " + std::to_string(r.index) + ": ";
    std::string what = (v.generic ? "size-generic kernel for " : "kernel for ") + key;
    // The cache directory is part of the key: a kernel first needed under a
    // new directory (an AOT build collecting objects) is stored there too.
    std::string cacheKey =
        (jit_.fastMath ? "F" : "E") + std::to_string(jit_.optLevel) + jit_.cacheDir + "\n" + text;
    {
      std::lock_guard<std::mutex> cl(KernelCache::get().mu);
      auto ck = KernelCache::get().kernels.find(cacheKey);
      if (ck != KernelCache::get().kernels.end()) {
        v.fn = ck->second;
        std::lock_guard<std::mutex> sl(statsMu_);
        ++stats_.memoryCacheHits;
        std::lock_guard<std::mutex> tl(Totals::get().mu);
        ++Totals::get().t.memoryHits;
      }
    }
    if (!v.fn) {
      auto t0 = std::chrono::steady_clock::now();
      KernelSource src = KernelSource::Compiled;
      v.fn = compileKernel(text, "kernel", jit_, src, v.error);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      {
        std::lock_guard<std::mutex> sl(statsMu_);
        stats_.compileSeconds += seconds;
        if (v.fn) ++(src == KernelSource::DiskCache ? stats_.diskCacheHits : stats_.kernelsCompiled);
        std::lock_guard<std::mutex> tl(Totals::get().mu);
        Totals::get().t.compileSeconds += seconds;
        if (v.fn) ++(src == KernelSource::DiskCache ? Totals::get().t.diskHits : Totals::get().t.compiled);
      }
      if (!v.fn) {
        if (v.generic)
          logLine(region + what + " failed (" + v.error + ")");
        else
          noteFailure(r, v.error);
        return;
      }
      if (src == KernelSource::DiskCache)
        logLine(region + (v.generic ? "size-generic " : "") + "kernel loaded from disk cache" +
                (v.generic ? " (" + key + ")" : ""));
      else
        logLine(region + "compiled " + what);
      std::lock_guard<std::mutex> cl(KernelCache::get().mu);
      KernelCache::get().kernels.emplace(cacheKey, v.fn);
    }
  }

  void noteFailure(RegionState& r, const std::string& why) {
    std::string line = "region " + std::to_string(r.index) + " (" + r.region.nodes.front()->opName() +
                       (r.region.nodes.size() > 1 ? ", ..." : "") + "): " + why;
    {
      std::lock_guard<std::mutex> lock(statsMu_);
      regionFailures_.emplace_back(r.index, line);
      // Failures of run-time signatures (after build) are reported too.
      if (built_) stats_.fallbackReasons.push_back(line);
    }
    logLine("fallback: " + line);
  }

  bool runRegion(RegionState& r, std::vector<Datum>& slots) {
    // Kernels do not record autograd history: a region that must (grad mode
    // on and an input requiring grad) runs node by node through ATen instead.
    bool needGrad = c10::GradMode::is_enabled();
    std::vector<InputDesc> in(r.inSlots.size());
    std::vector<at::Tensor> tensors(r.inSlots.size());
    for (size_t i = 0; i < r.inSlots.size(); ++i) {
      const Datum& d = slots[r.inSlots[i]];
      InputDesc& desc = in[i];
      switch (d.kind()) {
        case ir::DKind::Tensor: {
          const at::Tensor& t = aten::tensorOf(d);
          if (!t.defined() || t.device().type() != c10::DeviceType::CPU ||
              t.layout() != c10::kStrided || !aten::fromScalarType(t.scalar_type(), desc.dtype))
            return false;
          if (needGrad && t.requires_grad()) return false;
          desc.shape.assign(t.sizes().begin(), t.sizes().end());
          desc.contiguous = t.is_contiguous();
          tensors[i] = t;
          break;
        }
        case ir::DKind::Int: desc.isTensor = false, desc.dtype = DType::I64; break;
        case ir::DKind::Float: desc.isTensor = false, desc.dtype = DType::F64; break;
        case ir::DKind::Bool: desc.isTensor = false, desc.dtype = DType::Bool; break;
        default: return false;
      }
    }
    auto v = variantFor(r, in);
    if (!v->fn) return false;
    const KernelIR& k = v->kernel;
    std::vector<at::Tensor> outs;
    outs.reserve(k.outputs.size());
    for (int o : k.outputs) {
      const KNode& n = k.at(o);
      auto options = at::TensorOptions().dtype(aten::toScalarType(n.dtype));
      outs.push_back(at::empty(v->generic ? concreteShape(n.shape, v->pattern, in) : n.shape, options));
    }
    // Row range [begin, end) of dim 0, or the whole thing.
    auto launch = [&](int64_t begin, int64_t end, bool chunked) {
      Packer p;
      p.reserve(64);
      auto addMemref = [&](const at::Tensor& t, bool sliceDim0) {
        char* base = static_cast<char*>(t.data_ptr());
        int64_t rank = t.dim();
        bool slice = chunked && sliceDim0 && rank > 0;
        if (slice) base += begin * t.stride(0) * static_cast<int64_t>(t.element_size());
        p.add(base);
        p.add(base);
        p.addInt(0);
        for (int64_t j = 0; j < rank; ++j) p.addInt(slice && j == 0 ? end - begin : t.size(j));
        for (int64_t j = 0; j < rank; ++j) p.addInt(t.stride(j));
      };
      int64_t rows = k.outputs.empty() ? 0 : (k.at(k.outputs[0]).shape.empty() ? 0 : k.at(k.outputs[0]).shape[0]);
      for (size_t i = 0; i < tensors.size(); ++i)
        if (tensors[i].defined())
          addMemref(tensors[i], tensors[i].dim() > 0 &&
                                    tensors[i].dim() == static_cast<int64_t>(k.at(k.outputs[0]).shape.size()) &&
                                    tensors[i].size(0) == rows);
      std::vector<int64_t> scalarStore(r.inSlots.size());
      size_t si = 0;
      for (size_t i = 0; i < r.inSlots.size(); ++i) {
        if (in[i].isTensor) continue;
        const Datum& d = slots[r.inSlots[i]];
        int64_t bits = 0;
        if (d.kind() == ir::DKind::Int) bits = d.asInt();
        if (d.kind() == ir::DKind::Float) {
          double f = d.asFloat();
          std::memcpy(&bits, &f, sizeof f);
        }
        if (d.kind() == ir::DKind::Bool) bits = d.asBool() ? 1 : 0;
        scalarStore[si] = bits;
        p.args.push_back(&scalarStore[si++]);
      }
      for (auto& o : outs) addMemref(o, true);
      v->fn->call(p.args.data());
    };
    if (v->parallel) {
      std::atomic<int> chunks{0};
      at::parallel_for(0, k.at(k.outputs[0]).shape[0], v->grainRows, [&](int64_t begin, int64_t end) {
        chunks.fetch_add(1, std::memory_order_relaxed);
        launch(begin, end, true);
      });
      if (chunks.load() > 1) ++splitRuns_;
    } else {
      launch(0, 0, false);
    }
    for (size_t i = 0; i < outs.size(); ++i) slots[r.outSlots[i]] = aten::makeTensorDatum(std::move(outs[i]));
    return true;
  }

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
  static constexpr int64_t kPackMaxRows = 128, kPackMinWeight = int64_t{1} << 20;
  mutable std::mutex statsMu_;
  mutable CompileStats snapshot_;
  // Profiling (opts_.profile): per region step index (kernel, ATen) times;
  // per fallback op name.
  mutable std::mutex profMu_;
  std::map<size_t, std::pair<Samples, Samples>> regionProf_;
  std::map<std::string, Samples> fallbackProf_;
  std::vector<std::string> leftToAten_;  ///< region keys the profile left to ATen
};

/// Note [Keeping freed memory]: a model call allocates and frees the same
/// activation buffers every time (kernel outputs, ATen results, oneDNN
/// reorders). With glibc's defaults, buffers of a few hundred KB are either
/// mmapped or, once the dynamic mmap threshold has grown, carved from the top
/// of the heap, which free() trims back to the OS whenever more than twice
/// that threshold is free; either way the next call page-faults every page
/// again. Measured on the conv block (1 thread): 650 page faults and ~1.3 ms
/// of a ~2.6 ms call were spent in the kernel faulting pages in and out. The
/// first xpu executable therefore raises the mmap threshold to glibc's maximum
/// (32 MB) and the trim threshold to 128 MB, so freed activations are reused
/// from the heap. This is process-wide (eager PyTorch in the same process
/// benefits alike); XACC_KEEP_FREED_MEMORY=0 turns it off.
void keepFreedMemoryOnce() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* v = std::getenv("XACC_KEEP_FREED_MEMORY");
    if (v && std::string(v) == "0") return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
    logLine("malloc: mmap threshold 32 MB, trim threshold 128 MB (XACC_KEEP_FREED_MEMORY=0 to keep glibc's)");
  });
#endif
}

}  // namespace

bool isAvailable() { return true; }

KernelTotals kernelTotals() {
  std::lock_guard<std::mutex> l(Totals::get().mu);
  return Totals::get().t;
}

std::unique_ptr<Executable> compileGraph(const ir::Graph& g, const CompileOptions& opts,
                                         support::DiagnosticEngine& diag) {
  aten::registerAtenOps();
  if (opts.device != "xpu" && opts.device != "xpu0") {
    diag.error("E0703", {}, "xpu: unknown device '" + opts.device + "' (this build has xpu0, the host)");
    return nullptr;
  }
  keepFreedMemoryOnce();  // Note [Keeping freed memory]
  auto exe = std::make_unique<XpuExecutable>(g.clone(), opts);
  if (!exe->build(diag)) return nullptr;
  return exe;
}

std::string emitMlir(const ir::Graph& g, EmitStage stage, const CompileOptions& opts) {
  aten::registerAtenOps();
  Partition p = partitionGraph(g, !opts.disableLowering);
  std::ostringstream os;
  // LLVM IR comments start with ';'.
  const char* c = stage == EmitStage::Llvm ? "; " : "// ";
  for (const auto& r : p.reasons) os << c << "fallback: " << r << "\n";
  int index = 0;
  for (const auto& s : p.steps) {
    if (!s.isRegion) continue;
    os << c << "region " << index++ << ":";
    for (const ir::Node* n : s.region.nodes) os << " " << n->opName();
    os << "\n";
    KernelIR k;
    std::string error, text;
    // Dims declared dynamic: the size-generic kernel the executable would run
    // (Note [Size-generic kernels]), else the kernel with those dims at 0.
    SizePattern pattern;
    bool dynamic = declaresDynamicDims(s.region);
    if (dynamic && declaredGenericKernel(s.region, k, pattern, error))
      text = emitKernelMlir(k, {}, &error);
    if (!text.empty()) {
      os << c << "size-generic kernel for " << patternText(pattern) << "\n";
    } else {
      if (dynamic) os << c << "one kernel per size (" << error << "); dynamic dims printed as 0\n";
      if (!buildKernel(s.region, describeInputs(s.region, 0), k, error)) {
        os << c << "not lowered: " << error << "\n";
        continue;
      }
      text = emitKernelMlir(k);
    }
    if (stage == EmitStage::Kernel) {
      os << text;
      continue;
    }
    std::string out;
    if (!lowerKernelText(text, stage, jitOptions(opts), out, error)) {
      os << c << "lowering failed: " << error << "\n";
      continue;
    }
    os << out;
  }
  return os.str();
}

std::vector<std::string> loweredOps() { return loweredOpNames(); }

}  // namespace xacc::backend::mlir
