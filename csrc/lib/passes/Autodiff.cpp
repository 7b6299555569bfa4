// Reverse-mode autodiff (see Note [Gradient graphs] in Autodiff.h).
//
// The forward graph is cloned; a forward sweep marks the values that depend on
// a `wrt` parameter ("active"), then a reverse sweep over the original nodes
// asks each active node's rule for the contributions of its result gradient to
// its operands and accumulates them. Rules are table entries keyed by op name
// (aten ops without the `aten.` prefix, `default` overload dropped) that name
// the op's schema arguments, so a rule reads `self`, `other`, `dim` whether the
// node supplies them as operands or as attributes (Note [ATen operands and
// attributes]); this file depends on the IR only, not on libtorch.
#include "xacc/passes/Autodiff.h"
#include "xacc/support/CoreDiags.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "AutodiffImpl.h"
#include "xacc/passes/PassManager.h"

using xacc::support::coreCode;
using xacc::support::CoreDiag;

namespace xacc::passes {

using ir::Attr;
using ir::AttrDict;
using ir::Node;
using ir::Type;
using ir::Value;

bool isDifferentiableType(Type t) {
  if (!t) return false;
  if (t.isFloat()) return true;
  return t.isTensor() && ir::isFloatingDType(t.dtype());
}

namespace autodiff {

bool RuleCtx::active(const char* name) const {
  int i = index(name);
  return i >= 0 && args[size_t(i)].v && ad.isActive(args[size_t(i)].v);
}
Value* RuleCtx::val(const char* name) const {
  const Arg& a = arg(name);
  if (a.v) return a.v;
  double d;
  if (attrDouble(a.a, d) && a.a.kind() != Attr::Kind::Bool) return ad.fconst(d);
  return nullptr;
}
void RuleCtx::give(const char* name, Value* contrib) {
  int i = index(name);
  if (i < 0 || !args[size_t(i)].v || !ad.isActive(args[size_t(i)].v)) return;
  if (!contrib) {
    if (!ad.failed()) ad.error("cannot differentiate '" + n->opName() + "' with respect to '" + name + "'");
    return;
  }
  ad.accumulate(args[size_t(i)].v, contrib);
}
bool RuleCtx::fail(const std::string& why) {
  return ad.error("cannot differentiate '" + n->opName() + "': " + why);
}

namespace {

bool bindArgs(const Node& n, const std::vector<ArgSpec>& spec, std::vector<Arg>& out, std::string& err) {
  out.assign(spec.size(), Arg{});
  size_t k = 0;
  size_t nops = n.numOperands();
  if (n.hasEffects()) k = 1;  // token (only reached for rules that accept effects)
  for (size_t i = 0; i < spec.size(); ++i) {
    if (const Attr* a = n.attr(spec[i].name)) {
      out[i].a = *a;
      continue;
    }
    if (k < nops && n.operand(k) && fits(spec[i].kind, n.operand(k)->type())) {
      out[i].v = n.operand(k++);
      continue;
    }
    out[i].a = spec[i].dflt;
    if (spec[i].kind == AK::T && spec[i].dflt.isNone()) {
      err = std::string("missing argument '") + spec[i].name + "'";
      return false;
    }
  }
  return true;
}

}  // namespace

bool Autodiff::diffIf(Node* n) {
  support::SourceLoc loc = curOrig_ ? (locOf_ ? locOf_(*curOrig_) : curOrig_->loc()) : support::SourceLoc{};
  std::vector<size_t> wrt;
  for (size_t i = 1; i < n->numOperands(); ++i)
    if (isDifferentiableType(n->operand(i)->type())) wrt.push_back(i - 1);
  if (wrt.empty()) return true;
  std::vector<std::unique_ptr<ir::Graph>> arms;
  for (size_t k = 0; k < 2; ++k) {
    GradOptions o;
    o.wrt = wrt;
    o.seedParams = true;
    o.gradsOnly = true;
    o.name = n->region(k)->name();
    o.locOf = [loc](const Node& m) { return m.loc().file ? m.loc() : loc; };
    auto dg = buildGradGraph(*n->region(k), o, diag_);
    if (!dg) {
      failed_ = true;
      return false;
    }
    arms.push_back(std::move(dg));
  }
  std::vector<Value*> operands(n->operands().begin(), n->operands().end());
  for (size_t i = 0; i < n->numResults(); ++i) {
    Value* r = n->result(i);
    if (!isDifferentiableType(r->type())) continue;
    Value* d = gradOf(r);
    operands.push_back(d ? d : zerosLike(r));
  }
  std::vector<Type> types = arms[0]->resultTypes();
  for (Value* v : operands)
    if (!v) return false;
  Node* m = g_.create(&n->op(), operands, types);
  m->setLoc(n->loc());
  for (auto& a : arms) m->addRegion(std::move(a));
  for (size_t j = 0; j < wrt.size(); ++j) accumulate(n->operand(wrt[j] + 1), m->result(j));
  return !failed_;
}

bool Autodiff::run(const std::vector<size_t>& wrt, bool seedParams, const ir::Graph& orig,
                   const std::unordered_map<const Node*, const Node*>& origOf) {
  (void)orig;
  // Forward sweep: activity.
  for (size_t i : wrt) active_.insert(g_.param(i));
  for (Node* n : g_) {
    bool any = false;
    for (Value* v : n->operands())
      if (v && active_.count(v)) any = true;
    if (!any) continue;
    for (size_t i = 0; i < n->numResults(); ++i) {
      Type t = n->result(i)->type();
      // A list of floating tensors (aten.split, unbind) carries gradients to
      // its elements: active, so that the ops reading it need rules too.
      bool list = t.kind() == ir::TypeKind::List && isDifferentiableType(t.elementType());
      if (isDifferentiableType(t) || list) active_.insert(n->result(i));
    }
  }
  // Seeds.
  Node* last = g_.back();
  std::vector<Value*> results = g_.results();
  for (Value* r : results) {
    if (!isActive(r)) {
      if (seedParams && isDifferentiableType(r ? r->type() : Type())) g_.addParam(r->type(), "");
      continue;
    }
    Value* seed = seedParams ? g_.addParam(r->type(), "") : nullptr;
    setCurrent(r->isParam() ? nullptr : r->definingNode(),
               r->isParam() ? nullptr : origOf.at(r->definingNode()));
    if (!seed) seed = onesLike(r);
    if (!seed) return false;
    auto it = grads_.find(r);
    grads_[r] = it == grads_.end() ? seed : add(it->second, seed);
  }
  // Reverse sweep over the forward nodes.
  const auto& table = rules();
  for (Node* n = last; n; n = n->prev()) {
    bool hasGrad = false;
    for (size_t i = 0; i < n->numResults(); ++i)
      if (grads_.count(n->result(i)) || listGrads_.count(n->result(i))) hasGrad = true;
    if (!hasGrad) continue;
    setCurrent(n, origOf.at(n));
    if (n->op().is(ir::CoreOp::ListGet)) {
      int64_t idx;
      const Attr* c = n->numOperands() > 1 ? constOf(n->operand(1)) : nullptr;
      if (!c || c->kind() != Attr::Kind::Int) return error("cannot differentiate 'list.get' with a non-constant index");
      idx = c->getInt();
      if (isActive(n->operand(0))) accumulateElement(n->operand(0), idx, gradOf(n->result(0)));
      continue;
    }
    if (n->op().is(ir::CoreOp::If) && !n->hasEffects()) {
      if (!diffIf(n)) return false;
      continue;
    }
    if (n->numRegions() || n->op().has(ir::kCallLike) || n->op().is(ir::CoreOp::Apply)) {
      error("cannot differentiate '" + n->opName() + "': calls and control-flow regions are not supported",
            n->op().has(ir::kCallLike) ? "inline the callee first (the `inline` pass)" : std::string());
      return false;
    }
    std::string key = ruleKey(*n);
    // An in-place op on a fresh tensor (`squeeze_` traced from a decomposition)
    // is differentiated like its out-of-place form: token in, (token, tensor) out.
    bool inplace = false;
    if (n->hasEffects() && n->opName().rfind("aten.", 0) == 0 && n->numResults() == 2) {
      size_t dot = key.find('.');
      size_t end = dot == std::string::npos ? key.size() : dot;
      // Only view-like ops: their rules never read the (mutated) input's value.
      static const std::unordered_set<std::string> views = {"squeeze_", "unsqueeze_", "t_", "transpose_"};
      if (views.count(key.substr(0, end))) {
        key.erase(end - 1, 1);
        inplace = true;
      }
    }
    auto it = table.find(key);
    if (it == table.end() || (n->hasEffects() && !inplace)) {
      error("cannot differentiate '" + (n->op().is(ir::CoreOp::Builtin) ? ruleKey(*n) : n->opName()) +
                "': no derivative rule",
            "supported ops are listed in csrc/lib/passes/Autodiff.cpp");
      return false;
    }
    Value* out = n->result(inplace ? 1 : 0);
    // Rules differentiate their first result (the others are saved statistics,
    // indices or tokens); a gradient on another one would be dropped.
    for (size_t i = 0; i < n->numResults(); ++i)
      if (n->result(i) != out && (grads_.count(n->result(i)) || listGrads_.count(n->result(i))))
        return error("cannot differentiate '" + n->opName() + "' with respect to its result #" + std::to_string(i));
    RuleCtx c{*this, n, it->second.args, {}, grads_.count(out) ? grads_[out] : nullptr, out};
    c.elems = listGrads_.count(out) ? &listGrads_[out] : nullptr;
    std::string err;
    if (!bindArgs(*n, it->second.args, c.args, err)) return error("cannot differentiate '" + n->opName() + "': " + err);
    if (!c.g && !c.elems) continue;
    if (!it->second.fn(c) || failed_) return false;
  }
  // Results: original results, then one gradient per wrt parameter.
  setCurrent(nullptr, nullptr);
  std::vector<Value*> grads;
  for (size_t i : wrt) {
    Value* p = g_.param(i);
    Value* d = gradOf(p);
    if (!d) d = zerosLike(p);
    if (!d) return false;
    grads.push_back(d);
  }
  if (gradsOnly_) {
    std::vector<Type> types;
    for (Value* d : grads) types.push_back(d->type());
    g_.setResults(grads);
    g_.setResultTypes(types);
  } else {
    for (Value* d : grads) g_.addResult(d, d->type());
  }
  return !failed_;
}

}  // namespace autodiff

using autodiff::Autodiff;
using autodiff::ruleKey;

bool parseWrtList(const ir::Graph& g, const std::string& spec, std::vector<size_t>& out, std::string& error) {
  out.clear();
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (!item.empty()) {
      if (item[0] == '%') item.erase(item.begin());
      bool found = false;
      for (size_t i = 0; i < g.numParams(); ++i)
        if (g.param(i)->name() == item) {
          out.push_back(i);
          found = true;
          break;
        }
      if (!found && std::all_of(item.begin(), item.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        size_t i = std::stoul(item);
        if (i < g.numParams()) {
          out.push_back(i);
          found = true;
        }
      }
      if (!found) {
        error = "graph @" + g.name() + " has no parameter '" + item + "'";
        return false;
      }
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

std::unique_ptr<ir::Graph> buildGradGraph(const ir::Graph& fwd, const GradOptions& opts,
                                          support::DiagnosticEngine& diag) {
  std::vector<size_t> wrt = opts.wrt;
  if (wrt.empty())
    for (size_t i = 0; i < fwd.numParams(); ++i)
      if (isDifferentiableType(fwd.param(i)->type())) wrt.push_back(i);
  for (size_t i : wrt) {
    if (i >= fwd.numParams()) {
      diag.error(coreCode(CoreDiag::AutodiffError), {},
                 "graph @" + fwd.name() + " has no parameter #" + std::to_string(i));
      return nullptr;
    }
    if (!isDifferentiableType(fwd.param(i)->type())) {
      diag.error(coreCode(CoreDiag::AutodiffError), {},
                 "cannot differentiate @" + fwd.name() + " with respect to parameter %" +
                     fwd.param(i)->name() + " of type " + fwd.param(i)->type().str() +
                     ": only floats and floating-point tensors have gradients");
      return nullptr;
    }
  }
  auto g = fwd.clone();
  g->setName(opts.name.empty() ? fwd.name() + "_grad" : opts.name);
  std::unordered_map<const Node*, const Node*> origOf;
  for (Node *a = g->front(), *b = fwd.front(); a && b; a = a->next(), b = b->next()) origOf[a] = b;
  Autodiff ad(*g, diag, opts.locOf);
  ad.gradsOnly_ = opts.gradsOnly;
  if (!ad.run(wrt, opts.seedParams, fwd, origOf)) return nullptr;
  // Clean up: the gradient graph reuses forward values; drop what it does not need.
  ir::Module tmp;
  ir::Graph* gp = tmp.add(std::move(g));
  Statistics stats;
  PassContext ctx{diag, stats};
  for (const char* p : {"canonicalize", "cse", "dce"})
    if (!createPass(p)->run(tmp, ctx)) return nullptr;
  narrowOutputMasks(*gp);
  return gp->clone();
}

namespace {

/// `copy` is a clone of `orig`: maps each value of `orig` (parameters and node
/// results, top level) to its copy.
std::unordered_map<const Value*, Value*> cloneMap(const ir::Graph& orig, const ir::Graph& copy) {
  std::unordered_map<const Value*, Value*> m;
  for (size_t i = 0; i < orig.numParams(); ++i) m[orig.param(i)] = copy.param(i);
  for (Node *a = orig.front(), *b = copy.front(); a && b; a = a->next(), b = b->next())
    for (size_t i = 0; i < a->numResults(); ++i) m[a->result(i)] = b->result(i);
  return m;
}

bool cleanup(std::unique_ptr<ir::Graph>& g, support::DiagnosticEngine& diag) {
  ir::Module tmp;
  ir::Graph* gp = tmp.add(std::move(g));
  Statistics stats;
  PassContext ctx{diag, stats};
  if (!createPass("dce")->run(tmp, ctx)) return false;
  narrowOutputMasks(*gp);
  g = gp->clone();
  return true;
}

}  // namespace

// Note [Output masks of backward ops]: the rules emit convolution_backward
// and the norms' *_backward with every gradient they can give requested
// (output_mask). Which ones are read is known only after the whole gradient
// graph is built and dead code is dropped: the first convolution's input
// gradient, for one, when the input needs none. ATen skips a masked-off
// gradient (the result is an undefined tensor, never read), as eager's
// autograd does when it asks only for the inputs that require grad; so a
// result without uses gets `false` in the mask. Only these ops, whose mask
// means exactly "compute result i", are touched.
void narrowOutputMasks(ir::Graph& g) {
  static const std::unordered_set<std::string> masked = {"convolution_backward", "native_layer_norm_backward",
                                                         "native_group_norm_backward", "native_batch_norm_backward"};
  for (Node* n = g.front(); n; n = n->next()) {
    if (n->opName().rfind("aten.", 0) != 0 || !masked.count(ruleKey(*n))) continue;
    const Attr* m = n->attrs().get("output_mask");
    if (!m || m->kind() != Attr::Kind::Array || m->getArray().size() != n->numResults()) continue;
    Attr::Array narrowed = m->getArray();
    bool changed = false;
    for (size_t i = 0; i < narrowed.size(); ++i)
      if (narrowed[i].kind() == Attr::Kind::Bool && narrowed[i].getBool() && !n->result(i)->hasUses()) {
        narrowed[i] = Attr::boolean(false);
        changed = true;
      }
    if (changed) n->attrs().set("output_mask", Attr::array(std::move(narrowed)));
  }
}

std::vector<bool> dependsOnWrt(const ir::Graph& fwd, const std::vector<size_t>& wrt) {
  static const std::unordered_set<std::string> cut = {
      "detach", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
      "randint_like", "new_zeros", "new_ones", "new_empty", "new_full", "lift_fresh"};
  std::unordered_set<const Value*> req;
  for (size_t i : wrt) req.insert(fwd.param(i));
  for (const Node* n : fwd) {
    bool any = false;
    for (Value* v : n->operands())
      if (v && req.count(v)) any = true;
    if (!any) continue;
    std::string key = ruleKey(*n);
    if (cut.count(key.substr(0, key.find('.')))) continue;
    for (size_t i = 0; i < n->numResults(); ++i) {
      Type t = n->result(i)->type();
      if (isDifferentiableType(t) || (t.kind() == ir::TypeKind::List && isDifferentiableType(t.elementType())))
        req.insert(n->result(i));
    }
  }
  std::vector<bool> out;
  for (Value* r : fwd.results()) out.push_back(r && req.count(r));
  return out;
}

bool buildTrainingGraphs(const ir::Graph& fwd, const std::vector<size_t>& wrt, TrainingGraphs& out,
                         support::DiagnosticEngine& diag,
                         const std::function<support::SourceLoc(const ir::Node&)>& locOf) {
  GradOptions go;
  go.wrt = wrt;
  go.seedParams = true;
  go.locOf = locOf;
  go.name = fwd.name() + "_joint";
  std::unique_ptr<ir::Graph> joint = buildGradGraph(fwd, go, diag);
  if (!joint) return false;
  const size_t n0 = fwd.numParams(), m = fwd.results().size(), nw = wrt.size();
  if (joint->results().size() != m + nw) {
    diag.error(coreCode(CoreDiag::AutodiffError), {},
               "internal: the joint graph of @" + fwd.name() + " has an unexpected result count");
    return false;
  }
  out.numResults = m;
  out.cotangent.clear();
  for (Value* r : fwd.results()) out.cotangent.push_back(r && isDifferentiableType(r->type()));
  {
    std::vector<bool> dep = dependsOnWrt(fwd, wrt);
    out.requiresGrad.clear();
    for (size_t i = 0; i < m; ++i) {
      Value* r = fwd.results()[i];
      out.requiresGrad.push_back(dep[i] && r->type().isTensor());
    }
  }
  // Backward values: those depending on a cotangent parameter.
  std::unordered_set<const Value*> bw;
  for (size_t i = n0; i < joint->numParams(); ++i) bw.insert(joint->param(i));
  std::vector<Value*> residuals;
  std::unordered_set<const Value*> isResidual;
  auto save = [&](Value* v) {
    if (v && !v->isParam() && !bw.count(v) && isResidual.insert(v).second) residuals.push_back(v);
  };
  for (Node* n : *joint) {
    bool any = false;
    for (Value* v : n->operands())
      if (v && bw.count(v)) any = true;
    if (!any) continue;
    for (size_t i = 0; i < n->numResults(); ++i) bw.insert(n->result(i));
    for (Value* v : n->operands()) save(v);
  }
  for (size_t j = 0; j < nw; ++j) save(joint->results()[m + j]);
  for (size_t i = 0; i < m; ++i)
    if (bw.count(joint->results()[i])) {
      diag.error(coreCode(CoreDiag::AutodiffError), {},
                 "internal: a result of @" + fwd.name() + " depends on a cotangent");
      return false;
    }
  out.numResiduals = residuals.size();

  // Forward: the results, then the residuals; the backward nodes and the
  // cotangent parameters dropped.
  {
    auto f = joint->clone();
    auto map = cloneMap(*joint, *f);
    std::vector<Value*> rs;
    std::vector<Type> ts;
    for (size_t i = 0; i < m; ++i) rs.push_back(map.at(joint->results()[i]));
    for (Value* r : residuals) rs.push_back(map.at(r));
    for (Value* r : rs) ts.push_back(r->type());
    f->setResults(rs);
    f->setResultTypes(ts);
    f->setName(fwd.name() + "_forward");
    if (!cleanup(f, diag)) return false;
    for (size_t i = f->numParams(); i-- > n0;) {
      if (f->param(i)->hasUses()) {
        diag.error(coreCode(CoreDiag::AutodiffError), {},
                   "internal: the forward graph of @" + fwd.name() + " reads a cotangent");
        return false;
      }
      f->eraseParam(i);
    }
    out.forward = std::move(f);
  }
  // Backward: residuals become parameters; the forward parameters it does not
  // read are dropped.
  {
    auto b = joint->clone();
    auto map = cloneMap(*joint, *b);
    std::unordered_map<const Value*, Value*> param;
    for (Value* r : residuals) {
      Value* p = b->addParam(r->type(), "");
      map.at(r)->replaceAllUsesWith(p);
      param[r] = p;
    }
    std::vector<Value*> rs;
    std::vector<Type> ts;
    for (size_t j = 0; j < nw; ++j) {
      Value* d = joint->results()[m + j];
      auto it = param.find(d);
      rs.push_back(it != param.end() ? it->second : map.at(d));
      ts.push_back(rs.back()->type());
    }
    b->setResults(rs);
    b->setResultTypes(ts);
    b->setName(fwd.name() + "_backward");
    // The forward nodes are the forward graph's: none of their values is read
    // any more, and their effects (a BatchNorm's counter update) must not run twice.
    std::unordered_set<const Node*> keep;
    for (Node *a = joint->front(), *c = b->front(); a && c; a = a->next(), c = c->next())
      if (a->numResults() && bw.count(a->result(0))) keep.insert(c);
    for (Node* n = b->back(); n;) {
      Node* prev = n->prev();
      if (!keep.count(n)) {
        for (size_t i = 0; i < n->numResults(); ++i)
          if (n->result(i)->hasUses()) {
            diag.error(coreCode(CoreDiag::AutodiffError), {},
                       "internal: the backward graph of @" + fwd.name() + " reads a forward value");
            return false;
          }
        b->erase(n);
      }
      n = prev;
    }
    if (!cleanup(b, diag)) return false;
    out.savedParams.clear();
    for (size_t i = n0; i-- > 0;) {
      if (b->param(i)->hasUses()) out.savedParams.insert(out.savedParams.begin(), i);
      else b->eraseParam(i);
    }
    out.backward = std::move(b);
  }
  return true;
}

}  // namespace xacc::passes
