// Steps of an xpu executable whose values do not depend on the call's inputs:
// which they are (planConstants, at build) and their values, computed once
// (foldedConstants, at the first call). See Note [Input-independent steps].
#include "ExecutableImpl.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include <cstdlib>
#include <exception>
#include <string_view>

#include "xacc/backend/aten/AtenOps.h"
#include "xacc/backend/aten/TensorDatum.h"
#include "xacc/support/Diagnostic.h"
#include "xacc/support/EnvNames.h"

namespace xacc::backend::mlir::exec {

// Note [Input-independent steps]: a captured graph often computes values that
// are the same on every call: `arange` position ids and their views, causal
// masks built from `full`/`triu`/comparisons of `arange`s, constant scalars
// turned into tensors. Every call recomputed them (a boxed ATen call or a
// kernel launch each). A step is *constant* when it is pure and deterministic
// (no effects, not random; for a region: every node inside) and every value
// it reads is written by a constant step: its inputs are neither graph
// parameters (activations, weights, sizes) nor anything computed from them.
// The first call computes the constant steps once, in graph order, outside
// inference mode and with grad off (so the values are plain tensors any later
// mode may read), and keeps the values that a non-constant step reads (the
// *kept* slots); later calls start with those in their slots and skip every
// constant step.
//
// A kept value is shared by all calls, so nothing may change it or hand it to
// the caller. At build, the *alias closure* of each kept slot is followed:
// the results of every non-constant step that reads a slot of the closure and
// may return it or a view of it (an ATen op whose schema annotates a return
// as an alias, an op registered as a CompositeImplicitAutograd kernel, which
// may return its input as is, like `type_as`, and every non-ATen op: tuples
// and lists hold their items). Region kernels and other ATen ops write fresh
// memory and end the closure. A kept slot whose closure holds a graph result
// or an operand of an effectful step (an in-place write, a random op, a
// collective) is not kept: its constant producer becomes an ordinary step,
// and the plan is recomputed until nothing changes (a constant slot that is
// itself a graph result is never constant either).
//
// Values are kept only when every one is a plain CPU tensor (Note [Tensors
// read as memory]) that does not require grad, or an immutable scalar
// (int, float, bool, str, none); their total size is capped at
// kMaxConstantBytes. Otherwise, or when computing them fails, the executable
// runs every step on every call, as before. Calls under autocast run every
// step too (an op's dtype then depends on the autocast state, not only on
// its operands). The profiler's runs (runProfiled) run every step, so each
// step's time is measured. XACC_CONSTANT_STEPS=0 (read at each compile) turns
// it off, for A/B runs. `stats()["constant_steps"]` counts the steps
// computed once, `["constant_steps_skipped"]` the step runs saved.

namespace {

constexpr size_t kMaxConstantBytes = size_t{64} << 20;

/// Whether a non-region step's results may be (views of) its operands.
bool mayReturnOperand(const ir::Node& n) {
  const std::string& name = n.opName();
  if (name.rfind("aten.", 0) != 0) return true;  // core ops: tuples, lists, getters hold their operands
  aten::AtenOpSchemaInfo info;
  std::string error, opName, overload;
  if (!aten::atenSchemaInfo(name, info, error)) return true;
  for (const auto& r : info.returns)
    if (!r.aliasSet.empty()) return true;
  if (!aten::parseAtenOpName(name, opName, overload, error)) return true;
  auto handle = c10::Dispatcher::singleton().findOp(c10::OperatorName(opName, overload));
  if (!handle) return true;
  return handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd);
}

bool stepIsPure(const Step& s) {
  if (!s.region) return s.node->isPure();
  for (const ir::Node* n : s.region->region.nodes)
    if (!n->isPure()) return false;
  return true;
}

/// Bytes a kept datum holds; SIZE_MAX: not keepable.
size_t keptBytes(const Datum& d) {
  switch (d.kind()) {
    case ir::DKind::Null:
    case ir::DKind::Int:
    case ir::DKind::Float:
    case ir::DKind::Bool:
    case ir::DKind::Str: return 0;
    case ir::DKind::Tensor: {
      const at::Tensor& t = aten::tensorOf(d);
      if (!readableAsMemory(t) || t.requires_grad() || t.is_inference()) return SIZE_MAX;
      return t.storage().nbytes();
    }
    default: return SIZE_MAX;
  }
}

}  // namespace

void XpuExecutable::planConstants() {
  keptSlots_.clear();
  stats_.constantSteps = 0;
  const char* env = std::getenv(xacc::env::kConstantSteps);  // read at each compile, for A/B runs
  if (env && std::string_view(env) == "0") return;
  const size_t n = steps_.size();
  std::vector<char> pure(n), aliasing(n), banned(n, 0);
  for (size_t i = 0; i < n; ++i) {
    pure[i] = stepIsPure(steps_[i]);
    aliasing[i] = !steps_[i].region && mayReturnOperand(*steps_[i].node);
  }
  std::vector<char> isResult(numSlots_, 0);
  for (int r : resultSlots_) isResult[r] = 1;
  auto inputsOf = [&](size_t i) -> const std::vector<int>& {
    return steps_[i].region ? steps_[i].region->inSlots : steps_[i].inSlots;
  };
  auto outputsOf = [&](size_t i) -> const std::vector<int>& {
    return steps_[i].region ? steps_[i].region->outSlots : steps_[i].outSlots;
  };
  std::vector<char> constant(n), constSlot(numSlots_);
  std::vector<int> producer(numSlots_, -1);
  for (;;) {
    // Constant steps: pure, not banned, reading constant slots only.
    std::fill(constSlot.begin(), constSlot.end(), 0);
    for (size_t i = 0; i < n; ++i) {
      bool c = pure[i] && !banned[i];
      for (int sl : inputsOf(i)) c = c && constSlot[sl];
      for (int sl : outputsOf(i)) c = c && !isResult[sl];
      constant[i] = c;
      for (int sl : outputsOf(i)) {
        constSlot[sl] = c;
        producer[sl] = static_cast<int>(i);
      }
    }
    // Kept slots: constant slots a non-constant step reads. Ban the producer
    // of any whose alias closure reaches a result or an effectful operand.
    bool changed = false;
    for (size_t i = 0; i < n && !changed; ++i) {
      if (constant[i]) continue;
      for (int kept : inputsOf(i)) {
        if (!constSlot[kept]) continue;
        std::vector<char> closure(numSlots_, 0);
        closure[kept] = 1;
        bool escapes = isResult[kept];
        for (size_t j = 0; j < n && !escapes; ++j) {
          if (constant[j]) continue;
          bool reads = false;
          for (int sl : inputsOf(j)) reads = reads || closure[sl];
          if (!reads) continue;
          if (!pure[j]) escapes = true;  // an in-place write, a random op, a collective
          if (!aliasing[j]) continue;
          for (int sl : outputsOf(j)) {
            closure[sl] = 1;
            escapes = escapes || isResult[sl];
          }
        }
        if (escapes) {
          banned[producer[kept]] = 1;
          changed = true;
          break;
        }
      }
    }
    if (!changed) break;
  }
  std::vector<char> kept(numSlots_, 0);
  for (size_t i = 0; i < n; ++i) {
    steps_[i].constant = constant[i];
    if (constant[i]) continue;
    for (int sl : inputsOf(i))
      if (constSlot[sl] && !kept[sl]) {
        kept[sl] = 1;
        keptSlots_.push_back(sl);
      }
  }
  if (keptSlots_.empty()) {
    for (auto& s : steps_) s.constant = false;  // nothing reads them: no work saved (or a graph of constants only)
    return;
  }
  for (auto& s : steps_) stats_.constantSteps += s.constant;
}

const std::vector<Datum>* XpuExecutable::foldedConstants(bool& computedNow) {
  if (keptSlots_.empty()) return nullptr;
  int state = constState_.load(std::memory_order_acquire);
  if (state == kConstantsOff) return nullptr;
  if (at::autocast::is_autocast_enabled(at::kCPU)) return nullptr;
  if (state == kConstantsReady) return &constValues_;
  std::lock_guard<std::mutex> lock(constMu_);
  state = constState_.load(std::memory_order_acquire);
  if (state != kConstantsPending) return state == kConstantsReady ? &constValues_ : nullptr;
  std::string why;
  try {
    c10::InferenceMode normal(false);
    at::AutoGradMode noGrad(false);
    support::DiagnosticEngine scratch;  // a failure here is reported by the call that runs the step
    ir::Interpreter interp(scratch);
    std::vector<Datum> slots(numSlots_);
    for (auto& s : steps_) {
      if (!s.constant) continue;
      bool ok = s.region ? runRegion(*s.region, slots) || runNodes(interp, s.region->region.nodes, slots)
                         : runStep(interp, s, slots);
      if (!ok) {
        why = "a constant step failed";
        break;
      }
    }
    size_t bytes = 0;
    for (size_t i = 0; why.empty() && i < keptSlots_.size(); ++i) {
      size_t b = keptBytes(slots[keptSlots_[i]]);
      if (b == SIZE_MAX) why = "a kept value is not a plain tensor or scalar";
      else if ((bytes += b) > kMaxConstantBytes) why = "the kept values are too large";
    }
    if (why.empty()) {
      constValues_.reserve(keptSlots_.size());
      for (int sl : keptSlots_) constValues_.push_back(slots[sl]);
    }
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!why.empty()) {
    constValues_.clear();
    logLine("constant steps computed on every call: " + why);
    constState_.store(kConstantsOff, std::memory_order_release);
    return nullptr;
  }
  logLine("constant steps: " + std::to_string(stats_.constantSteps) + " computed once, " +
          std::to_string(keptSlots_.size()) + " values kept");
  constState_.store(kConstantsReady, std::memory_order_release);
  computedNow = true;
  return &constValues_;
}

}  // namespace xacc::backend::mlir::exec
