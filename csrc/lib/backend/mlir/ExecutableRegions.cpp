// Compiling and running the kernels of xpu regions (XpuExecutable, see
// ExecutableImpl.h and Executable.cpp): a variant per run-time input signature,
// size-generic kernels, the process-wide kernel cache, and launching a kernel
// on the tensors' own storage, split over rows across the ATen thread pool.
#include "ExecutableImpl.h"

#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <exception>
#include <thread>

#include <sched.h>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/support/EnvNames.h"

namespace xacc::backend::mlir::exec {

namespace {

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

}  // namespace

std::shared_ptr<Variant> XpuExecutable::variantFor(RegionState& r, const std::vector<InputDesc>& in, int threads) {
  std::string key = signatureKey(in);
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.variants.find(key);
  if (it != r.variants.end() && !(it->second->generic && tooBigForGeneric(*it->second, in, threads)))
    return it->second;
  auto v = std::make_shared<Variant>();
  r.variants[key] = v;
  if (!buildKernel(r.region, in, v->kernel, v->error)) {
    noteFailure(r, v->error);
    return v;
  }
  if (auto g = genericVariant(r, in, v->kernel, threads)) {
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

bool XpuExecutable::tooBigForGeneric(const Variant& g, const std::vector<InputDesc>& in, int threads) const {
  if (!g.splittable || !opts_.parallel || threads <= 1) return false;
  // On every run of a generic kernel: the output's element count, no copies.
  double elements = 1;
  for (int64_t e : g.kernel.at(g.kernel.outputs[0]).shape)
    elements *= static_cast<double>(isSymbolicExtent(e) ? symbolSize(g.pattern, in, symbolIndex(e)) : e);
  return g.workPerElement * elements >= static_cast<double>(opts_.parallelThreshold);
}

std::shared_ptr<Variant> XpuExecutable::genericVariant(RegionState& r, const std::vector<InputDesc>& in,
                                        const KernelIR& concrete, int threads) {
  if (concrete.outputs.empty()) return nullptr;
  std::string skel = std::string(jit_.fastMath ? "F" : "E") + std::to_string(jit_.optLevel) + "|" +
                     skeletonKey(concrete);
  auto& gk = GenericKernels::get();
  std::lock_guard<std::mutex> gl(gk.mu);
  std::vector<std::shared_ptr<Variant>> list = gk.live(skel);
  for (const auto& g : list)
    if (matchesPattern(g->pattern, in) && instanceOf(g->kernel, g->pattern, in, concrete)) {
      if (tooBigForGeneric(*g, in, threads)) return nullptr;
      std::lock_guard<std::mutex> sl(statsMu_);
      ++stats_.memoryCacheHits;
      std::lock_guard<std::mutex> tl(Totals::get().mu);
      ++Totals::get().t.memoryHits;
      return g;
    }
  if (gk.failed.count(skel) || list.size() >= 3) return nullptr;
  auto seen = gk.firstSeen.find(skel);
  if (seen == gk.firstSeen.end() && !declaresDynamicDims(r.region)) {
    if (gk.firstSeen.size() >= GenericKernels::kMaxNoted) gk.trim();
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
  gk.add(skel, v);
  return tooBigForGeneric(*v, in, threads) ? nullptr : v;
}

void XpuExecutable::compileVariant(RegionState& r, Variant& v, const std::string& text, const std::string& key) {
  std::string region = "region " + std::to_string(r.index) + ": ";
  std::string what = (v.generic ? "size-generic kernel for " : "kernel for ") + key;
  // The cache directory is part of the key: a kernel first needed under a
  // new directory (an AOT build collecting objects) is stored there too.
  std::string cacheKey =
      (jit_.fastMath ? "F" : "E") + std::to_string(jit_.optLevel) + jit_.cacheDir + "\n" + text;
  // Note [One compile per kernel text]: a live kernel, or one in flight, is
  // shared; otherwise this call compiles it and publishes the result.
  KernelCache& cache = KernelCache::get();
  std::shared_future<KernelCache::Compiled> waitFor;
  std::promise<KernelCache::Compiled> publish;
  {
    std::lock_guard<std::mutex> cl(cache.mu);
    if (!(v.fn = cache.find(cacheKey))) {
      auto it = cache.inFlight.find(cacheKey);
      if (it != cache.inFlight.end())
        waitFor = it->second;
      else
        cache.inFlight.emplace(cacheKey, publish.get_future().share());
    }
  }
  bool shared = v.fn != nullptr;
  KernelSource src = KernelSource::Compiled;
  if (!v.fn && waitFor.valid()) {
    const KernelCache::Compiled& c = waitFor.get();
    v.fn = c.fn;
    v.error = c.error;
    shared = true;
  } else if (!v.fn) {
    auto t0 = std::chrono::steady_clock::now();
    try {
      v.fn = compileKernel(text, "kernel", jit_, src, v.error);
    } catch (...) {
      std::lock_guard<std::mutex> cl(cache.mu);
      cache.inFlight.erase(cacheKey);
      publish.set_exception(std::current_exception());
      throw;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    {
      std::lock_guard<std::mutex> cl(cache.mu);
      if (v.fn) cache.insert(cacheKey, v.fn);
      cache.inFlight.erase(cacheKey);
    }
    publish.set_value({v.fn, src, v.error});
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
  if (shared) {
    std::lock_guard<std::mutex> sl(statsMu_);
    ++stats_.memoryCacheHits;
    std::lock_guard<std::mutex> tl(Totals::get().mu);
    ++Totals::get().t.memoryHits;
  } else if (src == KernelSource::DiskCache) {
    logLine(region + (v.generic ? "size-generic " : "") + "kernel loaded from disk cache" +
            (v.generic ? " (" + key + ")" : ""));
  } else {
    logLine(region + "compiled " + what);
  }
}

namespace {

/// XACC_COMPILE_THREADS, else the CPUs this process may run on (read once).
size_t compileThreads() {
  static const size_t n = [] {
    if (const char* v = std::getenv(xacc::env::kCompileThreads)) return static_cast<size_t>(std::max(1, std::atoi(v)));
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(std::max(1, CPU_COUNT(&set)));
    return static_cast<size_t>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return n;
}

}  // namespace

/// Note [Parallel kernel compiles]: the kernels of a graph's static regions
/// are compiled when the graph is built, and each compile (MLIR lowering,
/// LLVM's -O3 and code generation, linking the shared object) is independent
/// of the others: its own MLIRContext, LLVMContext and TargetMachine
/// (Jit.cpp), a disk-cache entry of its own. So they run on up to
/// compileThreads() threads, the calling one included, each taking the next
/// region; a cold first call of a model costs its slowest share, not the
/// sum (KernelTotals::compileSeconds still sums every compile's time). What
/// the threads share is locked: a region's variants (RegionState::mu), the
/// kernel and generic-kernel tables, the stats. Same texts compile once
/// (Note [One compile per kernel text]). The thread count the kernels run
/// with is the caller's (at::get_num_threads() is per thread under OpenMP),
/// so a variant is split over rows exactly as it would be without compile
/// threads; the result of build() does not depend on the thread count.
void XpuExecutable::compileRegions(const std::vector<RegionState*>& regions) {
  int threads = at::get_num_threads();
  std::vector<std::vector<InputDesc>> in;
  in.reserve(regions.size());
  for (RegionState* r : regions) in.push_back(describeInputs(r->region, 0));
  size_t workers = std::min(regions.size(), compileThreads());
  if (workers <= 1) {
    for (size_t i = 0; i < regions.size(); ++i) variantFor(*regions[i], in[i], threads);
    return;
  }
  logLine("kernels of " + std::to_string(regions.size()) + " regions: looked up or compiled on " +
          std::to_string(workers) + " threads");
  std::atomic<size_t> next{0};
  std::mutex errorMu;
  std::exception_ptr error;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < regions.size();) {
      try {
        variantFor(*regions[i], in[i], threads);
      } catch (...) {
        std::lock_guard<std::mutex> lock(errorMu);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

void XpuExecutable::noteFailure(RegionState& r, const std::string& why) {
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

namespace {

/// Whether a node of `r` may give an output whose dims are not in order for
/// contiguous inputs: a view that reorders or repeats dims, or an op told a
/// memory format.
bool reordersDims(const Region& r) {
  static const char* const kReorder[] = {"aten.permute.", "aten.transpose.", "aten.t.", "aten.movedim.",
                                         "aten.swapaxes.", "aten.swapdims.", "aten.as_strided.", "aten.expand.",
                                         "aten.unfold.", "aten.diagonal.", "aten.numpy_T.", "aten.mT.",
                                         "aten.mH.", "aten.adjoint."};
  for (const ir::Node* n : r.nodes) {
    if (n->attrs().has("memory_format")) return true;
    const std::string& name = n->opName();
    for (const char* p : kReorder)
      if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

}  // namespace

// Note [Eager strides of kernel outputs]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A kernel writes its outputs contiguously, but eager does not always: an
// elementwise op on a transposed tensor keeps the input's dim order
// (TensorIterator), so eager's `(x.transpose(1, 2) * m).transpose(1, 2)` is
// contiguous and a later `.view(...)` that merges dims succeeds. The same
// `.view` kept as an ATen view on the kernel's contiguous output fails
// ("view size is not compatible ..."; transformers' mamba2 chunk scan), and a
// graph output would show other strides than eager's (`stride()`,
// `is_contiguous()`, a `.view` in the user's code after the graph).
// So each region output gets eager's strides: the region's nodes run once per
// input geometry (sizes and strides of the tensor inputs) on meta tensors
// through the ATen interpreter, which gives exactly the strides eager would;
// an output whose eager strides are not the contiguous ones is copied into a
// tensor with those strides after the launch (the kernel itself still writes
// a contiguous buffer: its memref types have the identity layout). Inputs of
// one geometry pay the meta run once; the copy is paid only where eager's
// layout is not contiguous. A meta run that fails, or an eager output that is
// not dense (a view eager would return), leaves the output contiguous. Regions
// on contiguous inputs whose ops never reorder dims skip the meta run: their
// outputs are contiguous in eager too (elementwise ops, reductions, matmuls on
// contiguous operands allocate contiguous results).
const std::vector<std::vector<int64_t>>& XpuExecutable::eagerStridesFor(RegionState& r,
                                                                        const std::vector<Datum>& slots,
                                                                        const std::vector<at::Tensor>& tensors) {
  std::string key;
  for (const at::Tensor& t : tensors) {
    key += '|';
    if (!t.defined()) continue;
    for (int64_t n : t.sizes()) key += std::to_string(n) + ",";
    key += ':';
    if (t.is_contiguous()) continue;
    for (int64_t n : t.strides()) key += std::to_string(n) + ",";
  }
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.eagerStrides.find(key);
  if (it != r.eagerStrides.end()) return it->second;
  std::vector<std::vector<int64_t>> strides(r.outSlots.size());
  std::vector<Datum> meta = slots;
  for (size_t i = 0; i < r.inSlots.size(); ++i)
    if (tensors[i].defined())
      meta[r.inSlots[i]] = aten::makeTensorDatum(
          at::empty_strided(tensors[i].sizes(), tensors[i].strides(), tensors[i].options().device(at::kMeta)));
  // ATen nodes run through the meta entry point (libtorch's C++ meta
  // functions first, Note [Native meta kernels]); the interpreter's ATen
  // `interp`, which xpu0's per-call fallback uses, does not look for meta
  // operands.
  support::DiagnosticEngine diag;
  ir::Interpreter interp(diag);
  bool ok = true;
  try {
    for (const ir::Node* n : r.region.nodes) {
      std::vector<Datum> args, results;
      for (ir::Value* v : n->operands()) args.push_back(meta[slotOf(v)]);
      std::string err;
      ok = n->opName().rfind("aten.", 0) == 0 ? aten::runAtenOpOnMeta(n->opName(), n->attrs(), args, results, err)
                                              : n->op().interp(interp, *n, args, results);
      if (!ok) break;
      for (size_t i = 0; i < results.size() && i < n->numResults(); ++i) meta[slotOf(n->result(i))] = results[i];
    }
  } catch (const std::exception&) {
    ok = false;
  }
  for (size_t i = 0; ok && i < r.outSlots.size(); ++i) {
    const Datum& d = meta[r.outSlots[i]];
    if (d.kind() != ir::DKind::Tensor) continue;
    const at::Tensor& t = aten::tensorOf(d);
    // A view eager would return (a slice, an expand) cannot be rebuilt from a
    // fresh buffer: only dense, non-overlapping layouts are copied into.
    if (t.defined() && !t.is_contiguous() && t.is_non_overlapping_and_dense())
      strides[i].assign(t.strides().begin(), t.strides().end());
  }
  if (!ok) logLine("region " + std::to_string(r.index) + ": eager strides not known (meta run failed); outputs stay contiguous");
  return r.eagerStrides.emplace(std::move(key), std::move(strides)).first->second;
}

bool XpuExecutable::runRegion(RegionState& r, std::vector<Datum>& slots) {
  // Nothing a kernel run throws (a tensor op while preparing the launch, an
  // allocation) escapes: the region's nodes then run through ATen, which gives
  // eager's values or raises eager's error. A kernel writes only the fresh
  // outputs, so a failed launch leaves nothing half-done.
  try {
    return launchRegion(r, slots);
  } catch (const std::exception& e) {
    logLine("region " + std::to_string(r.index) + ": kernel not run (" + aten::exceptionMessage(e) +
            "); its nodes run through ATen");
    return false;
  }
}

bool XpuExecutable::launchRegion(RegionState& r, std::vector<Datum>& slots) {
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
        // A BatchedTensor under torch.vmap, a negative view, ...: values
        // only the dispatcher knows (Note [Tensors read as memory]).
        if (!readableAsMemory(t) || !aten::fromScalarType(t.scalar_type(), desc.dtype)) return false;
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
  auto v = variantFor(r, in, at::get_num_threads());
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
  // Contiguous inputs through ops that never reorder dims (no permute-like
  // view, no memory_format) give contiguous outputs in eager too: nothing to
  // look up, the common case. Otherwise a variant of one region on contiguous
  // inputs looks its eager strides up once (its sizes are the variant's);
  // size-generic variants, shared between regions and sizes, by geometry.
  int reorders = r.reorders.load(std::memory_order_relaxed);
  if (reorders < 0) r.reorders.store(reorders = reordersDims(r.region), std::memory_order_relaxed);
  bool contiguous = std::all_of(tensors.begin(), tensors.end(),
                                [](const at::Tensor& t) { return !t.defined() || t.is_contiguous(); });
  const std::vector<std::vector<int64_t>>* eager = nullptr;
  if (!contiguous || reorders) {
    eager = v->generic ? nullptr : v->contiguousStrides.load(std::memory_order_acquire);
    if (!eager) {
      eager = &eagerStridesFor(r, slots, tensors);
      if (!v->generic && contiguous) v->contiguousStrides.store(eager, std::memory_order_release);
    }
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (eager && i < eager->size() && !(*eager)[i].empty() && (*eager)[i].size() == static_cast<size_t>(outs[i].dim())) {
      at::Tensor laid = at::empty_strided(outs[i].sizes(), (*eager)[i], outs[i].options());
      laid.copy_(outs[i]);
      outs[i] = std::move(laid);
    }
    slots[r.outSlots[i]] = aten::makeTensorDatum(std::move(outs[i]));
  }
  return true;
}

}  // namespace xacc::backend::mlir::exec
