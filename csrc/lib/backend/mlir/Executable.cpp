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
//
// The region kernels are compiled and run in ExecutableRegions.cpp, their cost
// estimated in KernelWork.cpp; ExecutableImpl.h has what the parts share.
#include "ExecutableImpl.h"
#include "xacc/support/CoreDiags.h"

#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "xacc/backend/mlir/ScalarJit.h"
#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/ir/Printer.h"
#include "xacc/support/Log.h"
#include "xacc/support/EnvNames.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::backend::mlir::exec {

namespace {

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
/// least 2^20 elements, and whose x has 2 to 128 rows, runs as MKL's
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
/// One row (a decode step: x [1, K]) is a matrix-vector product: it reads W
/// once whether W is packed or not, and there is no per-call packing to save.
/// Measured (one thread, CPU time, best of 7, under load; addmm -> packed ms)
/// [1, 768] x [768, 2304] 0.195 -> 0.206, x [768, 3072] 0.46 -> 0.37,
/// [1, 3072] x [3072, 768] 0.26 -> 0.60, GPT-2's LM head 11.8 -> 10.4: no
/// consistent gain, while the copy costs a second W (GPT-2 small generating
/// token by token: ~470 MB, 912 -> 639 MiB peak with 4 layers). So one row
/// is never packed, and a decode loop holds one copy of each weight.
/// The packed copy is keyed by W's data pointer, sizes, strides, version
/// counter (every in-place torch op on W or a view of it bumps it) and 16
/// sampled values (writes through `.data`, which has its own version counter,
/// or from NumPy through shared memory, do not bump it), and by the row count
/// x has; it is made the second time the same key is seen, so a weight that
/// changes every call is never packed. It holds a reference to W, so its
/// memory is not reused while the copy exists.
/// Off unless XACC_PACK_WEIGHTS=1: re-measured with the pinned torch 2.13.0
/// (2026-11-30, benchmarks/models/gemm_pack.py, 2 threads, best of 3, under
/// load) the packed GEMM is no faster in any shape class it was chosen for:
/// packed/addmm 0.93-1.08 for 8, 32 and 128 rows times [768, 2304], [768,
/// 3072], [3072, 768] and the LM head (1 thread, CPU time: 0.92-1.06, for W
/// stored [K, N] and as nn.Linear's W^T alike), while the copy doubles every
/// packed weight: BERT-base, batch 1 x 8 tokens (benchmarks/xjit_script/
/// scripts/bert_infer.py) peaked at 1149 MiB under xjit xpu0 with packing,
/// 813 MiB under plain python (1.41x; issue 22 allows 1.3x). Results are MKL's sgemm summed in another order: equal to addmm's
/// in the GPT-2 shapes measured, within float32 rounding otherwise (max
/// |diff| 5e-5 for K = 1024 and unit-size values; tests/python/backend/
/// test_packed_gemm.py).

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

/// Read at every build (a compile, not a run), so a process can turn it on
/// for the graphs it compiles next; opt-in, see Note [Packed GEMM weights].
bool packWeightsEnabled() {
  const char* v = std::getenv(xacc::env::kPackWeights);
  return v && std::string(v) == "1";
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

}  // namespace

void logLine(const std::string& s) { support::logLine(support::LogChannel::Mlir, s); }

XpuExecutable::XpuExecutable(std::unique_ptr<ir::Graph> g, const CompileOptions& o) : graph_(std::move(g)), opts_(o) {
  jit_ = jitOptions(o);
}

bool XpuExecutable::build(support::DiagnosticEngine& diag) {
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
        diag.error(coreCode(CoreDiag::XpuCannotExecute), s.node->loc(),
                   "xpu: no way to execute '" + s.node->opName() + "'");
        return false;
      }
      ++stats_.fallbackNodes;
      s.call = aten::PreparedAtenCall::prepare(*s.node);
      for (ir::Value* v : s.node->operands()) s.inSlots.push_back(slotOf(v));
      for (size_t i = 0; i < s.node->numResults(); ++i) s.outSlots.push_back(slotOf(s.node->result(i)));
    }
    steps_.push_back(std::move(s));
  }
  for (ir::Value* v : graph_->results()) resultSlots_.push_back(slotOf(v));
  planRelease();
  planConstants();
  // Compile the variants for the declared types now, when they are static
  // (Note [Parallel kernel compiles]).
  std::vector<RegionState*> now;
  for (auto& s : steps_)
    if (s.region && !declaresDynamicDims(s.region->region)) now.push_back(s.region.get());
  compileRegions(now);
  // In region order, whichever compile thread noted them.
  std::stable_sort(regionFailures_.begin(), regionFailures_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [r, why] : regionFailures_) stats_.fallbackReasons.push_back(why);
  built_ = true;
  for (const auto& r : stats_.fallbackReasons) logLine("fallback: " + r);
  return true;
}

// Note [Executor liveness] holds here as in the ATen executor: a slot is dropped
// right after its last reader, so an intermediate (a kernel's output buffer or a
// fallback op's result) is freed at its last use, not when the graph ends, and
// the allocator hands its memory to the next step. Region outputs never alias
// their inputs (views are lowered as copies, Partitioner.cpp), ATen results own
// or share their storage, so dropping a slot frees only what nothing else holds.
// A region that falls back to its nodes writes its inner values to slots too:
// its step drops them, as nothing after the region reads them.
void XpuExecutable::planRelease() {
  std::vector<int> lastRead(numSlots_, -1), writer(numSlots_, -1);
  std::vector<bool> isResult(numSlots_, false);
  for (int r : resultSlots_) isResult[r] = true;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    const auto& in = s.region ? s.region->inSlots : s.inSlots;
    for (int sl : in) lastRead[sl] = static_cast<int>(i);
    const auto& out = s.region ? s.region->outSlots : s.outSlots;
    for (int sl : out) writer[sl] = static_cast<int>(i);
    if (s.region)
      for (const ir::Node* n : s.region->region.nodes)
        for (size_t k = 0; k < n->numResults(); ++k) {
          int sl = slots_.at(n->result(k));
          if (writer[sl] < 0) writer[sl] = static_cast<int>(i);
        }
  }
  for (size_t sl = 0; sl < numSlots_; ++sl) {
    if (isResult[sl]) continue;
    int at = lastRead[sl] >= 0 ? std::max(lastRead[sl], writer[sl]) : writer[sl];
    if (at >= 0) steps_[at].release.push_back(static_cast<int>(sl));
  }
}

bool XpuExecutable::run(const std::vector<Datum>& inputs, std::vector<Datum>& outputs,
         support::DiagnosticEngine& diag) {
  if (inputs.size() != graph_->numParams()) {
    diag.error(coreCode(CoreDiag::XpuInputCountMismatch), {},
               "xpu: expected " + std::to_string(graph_->numParams()) + " inputs, got " +
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
  // Note [Input-independent steps]: values computed once, in their slots.
  bool computedNow = false;
  const std::vector<Datum>* constants = foldedConstants(computedNow);
  if (constants) {
    for (size_t i = 0; i < keptSlots_.size(); ++i) slots[keptSlots_[i]] = (*constants)[i];
    if (!computedNow) constantStepsSkipped_ += stats_.constantSteps;
  }
  for (auto& s : steps_) {
    if (constants && s.constant) continue;
    if (s.region) {
      if (runRegion(*s.region, slots)) {
        ++kernelLaunches_;
      } else {
        // This signature does not lower: run the region's nodes one by one.
        ++regionFallbackRuns_;
        if (!interp) interp = std::make_unique<ir::Interpreter>(diag);
        if (!runNodes(*interp, s.region->region.nodes, slots)) return false;
      }
    } else if (!(s.gemm && runPackedGemm(s, slots))) {
      // A prepared call needs no interpreter unless it fails or must rebind.
      std::string error;
      auto status = runPrepared(s, slots, error);
      if (status != aten::PreparedAtenCall::Status::Ok) {
        if (!interp) interp = std::make_unique<ir::Interpreter>(diag);
        if (status == aten::PreparedAtenCall::Status::Failed) return s.call->fail(*interp, error);
        if (!runInterpStep(*interp, s, slots)) return false;
      }
    }
    for (int sl : s.release) slots[sl] = Datum();
  }
  outputs.clear();
  for (int r : resultSlots_) outputs.push_back(slots[r]);
  return true;
}

const CompileStats& XpuExecutable::stats() const {
  std::lock_guard<std::mutex> lock(statsMu_);
  snapshot_ = stats_;
  snapshot_.kernelLaunches = kernelLaunches_.load();
  snapshot_.regionFallbackRuns = regionFallbackRuns_.load();
  snapshot_.splitRuns = splitRuns_.load();
  snapshot_.packedGemmRuns = packedGemmRuns_.load();
  snapshot_.weightsPacked = weightsPacked_.load();
  snapshot_.constantStepsSkipped = constantStepsSkipped_.load();
  return snapshot_;
}

std::string XpuExecutable::profileJson() const {
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

std::string XpuExecutable::describe() const {
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
    if (s.constant) os << "  (constant: computed on the first call only)\n";
  }
  return os.str();
}

int XpuExecutable::slotOf(const ir::Value* v) {
  auto it = slots_.find(v);
  if (it != slots_.end()) return it->second;
  int s = static_cast<int>(numSlots_++);
  slots_[v] = s;
  return s;
}

bool XpuExecutable::runProfiled(ir::Interpreter& interp, std::vector<Datum>& slots) {
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
    if (!runStep(interp, s, slots)) return false;
    double d = secs(t0, clock::now());
    std::lock_guard<std::mutex> lock(profMu_);
    fallbackProf_[s.node->opName()].add(d);
  }
  return true;
}

bool XpuExecutable::runNodes(ir::Interpreter& interp, const std::vector<const ir::Node*>& nodes, std::vector<Datum>& slots) {
  for (const ir::Node* n : nodes) {
    std::vector<Datum> args, results;
    for (ir::Value* v : n->operands()) args.push_back(slots[slotOf(v)]);
    if (!n->op().interp(interp, *n, args, results)) return false;
    for (size_t i = 0; i < results.size() && i < n->numResults(); ++i) slots[slotOf(n->result(i))] = results[i];
  }
  return true;
}

aten::PreparedAtenCall::Status XpuExecutable::runPrepared(const Step& s, std::vector<Datum>& slots,
                                                          std::string& error) {
  if (!s.call) return aten::PreparedAtenCall::Status::Rebind;
  std::vector<Datum> results;
  auto status = s.call->run(slots, s.inSlots, results, error);
  if (status == aten::PreparedAtenCall::Status::Ok)
    for (size_t i = 0; i < results.size() && i < s.outSlots.size(); ++i) slots[s.outSlots[i]] = std::move(results[i]);
  return status;
}

bool XpuExecutable::runStep(ir::Interpreter& interp, const Step& s, std::vector<Datum>& slots) {
  std::string error;
  switch (runPrepared(s, slots, error)) {
    case aten::PreparedAtenCall::Status::Ok: return true;
    case aten::PreparedAtenCall::Status::Failed: return s.call->fail(interp, error);
    case aten::PreparedAtenCall::Status::Rebind: break;  // not prepared, or operands of another class
  }
  return runInterpStep(interp, s, slots);
}

bool XpuExecutable::runInterpStep(ir::Interpreter& interp, const Step& s, std::vector<Datum>& slots) {
  std::vector<Datum> args, results;
  args.reserve(s.inSlots.size());
  for (int i : s.inSlots) args.push_back(slots[i]);
  if (!s.node->op().interp(interp, *s.node, args, results)) return false;
  for (size_t i = 0; i < results.size() && i < s.outSlots.size(); ++i) slots[s.outSlots[i]] = std::move(results[i]);
  return true;
}

bool XpuExecutable::runPackedGemm(Step& s, std::vector<Datum>& slots) {
  // As runRegion: what the packed path throws leaves the node to ATen, which
  // gives eager's values or raises eager's error; its output slot is written last.
  try {
    return packedGemm(s, slots);
  } catch (const std::exception& e) {
    logLine(s.node->opName() + ": packed GEMM not run (" + aten::exceptionMessage(e) + "); it runs through ATen");
    return false;
  }
}

bool XpuExecutable::packedGemm(Step& s, std::vector<Datum>& slots) {
  size_t base = s.gemm->hasBias ? 1 : 0;
  const Datum& dx = slots[s.inSlots[base]];
  const Datum& dw = slots[s.inSlots[base + 1]];
  if (dx.kind() != ir::DKind::Tensor || dw.kind() != ir::DKind::Tensor) return false;
  const at::Tensor& x = aten::tensorOf(dx);
  const at::Tensor& w = aten::tensorOf(dw);
  // The weight's samples are read from its memory (Note [Tensors read as memory]).
  auto plainF32 = [](const at::Tensor& t, int64_t dim) {
    return readableAsMemory(t) && t.scalar_type() == at::kFloat && t.dim() == dim && !t.is_inference();
  };
  if (!plainF32(x, 2) || !plainF32(w, 2) || !w.requires_grad() || c10::GradMode::is_enabled()) return false;
  int64_t m = x.size(0), k = w.size(0), n = w.size(1);
  if (m < kPackMinRows || m > kPackMaxRows || x.size(1) != k || k * n < kPackMinWeight) return false;
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

namespace {

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
    const char* v = std::getenv(xacc::env::kKeepFreedMemory);
    if (v && std::string(v) == "0") return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
    logLine("malloc: mmap threshold 32 MB, trim threshold 128 MB (XACC_KEEP_FREED_MEMORY=0 to keep glibc's)");
  });
#endif
}

}  // namespace

}  // namespace xacc::backend::mlir::exec

namespace xacc::backend::mlir {

using namespace exec;

bool isAvailable() { return true; }

KernelTotals kernelTotals() {
  std::lock_guard<std::mutex> l(Totals::get().mu);
  return Totals::get().t;
}

std::unique_ptr<Executable> compileGraph(const ir::Graph& g, const CompileOptions& opts,
                                         support::DiagnosticEngine& diag) {
  aten::registerAtenOps();
  if (opts.device != "xpu" && opts.device != "xpu0") {
    diag.error(coreCode(CoreDiag::XpuUnknownDevice), {},
               "xpu: unknown device '" + opts.device + "' (this build has xpu0, the host)");
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
