// GraphBuilder implementation. See GraphBuilder.h.
#include "xacc/capture/GraphBuilder.h"

#include <algorithm>

#include "xacc/ir/Printer.h"
#include "xacc/ir/Verifier.h"
#include "xacc/passes/PassManager.h"

namespace xacc::capture {

GraphBuilder::GraphBuilder(std::string name)
    : module_(std::make_unique<ir::Module>()),
      graph_(module_->add(std::make_unique<ir::Graph>(std::move(name)))),
      builder_(*graph_) {}

int GraphBuilder::addInput(ir::Type type, std::string name) {
  values_.push_back(graph_->addParam(type, std::move(name)));
  return static_cast<int>(values_.size() - 1);
}

void GraphBuilder::setLoc(const std::string& file, uint32_t line) {
  support::SourceLoc loc;
  loc.file = support::SourceManager::global().internName(file);
  loc.line = line;
  loc.col = 0;
  builder_.setLoc(loc);
}

bool GraphBuilder::addOp(std::string_view opName, const std::vector<int>& operands,
                         ir::AttrDict attrs, std::vector<ir::Type> resultTypes,
                         std::vector<int>& results, std::string& error) {
  const ir::OpInfo* op = ir::OpRegistry::get().lookup(opName, &error);
  if (!op) return false;
  bool effect = op->has(ir::kEffect);
  std::vector<ir::Value*> vals;
  if (effect) vals.push_back(tokenAt(open_.size()));
  for (int id : operands) {
    if (id < 0 || id >= static_cast<int>(values_.size())) {
      error = "unknown value id " + std::to_string(id);
      return false;
    }
    ir::Value* v = visible(values_[id], open_.size());
    if (!v) {
      error = "value " + std::to_string(id) + " is defined in another region";
      return false;
    }
    vals.push_back(v);
  }
  if (effect && !resultTypes.empty()) resultTypes.insert(resultTypes.begin(), ir::Type::token());
  ir::Node* n = builder_.create(op, vals, std::move(attrs), std::move(resultTypes));
  if (!n) {
    error = builder_.error();
    return false;
  }
  bindResults(n, effect, results);
  return true;
}

// Note [Captured control flow]
// A data-dependent branch the translator captures becomes one ctrl.if whose
// arms were traced one after the other from the same state; a loop becomes a
// ctrl.loop. Regions are isolated (Graph.h): every value of an enclosing
// level used inside is passed in. The builder keeps a stack of open regions;
// an operand from an enclosing level is captured level by level as a new
// parameter (`visible`). The two arms of a ctrl.if must take the same
// parameters: the else arm is begun `like` the then arm (it first captures
// what the then arm captured), and addIf appends the else arm's further
// captures to the then arm. Effects inside an arm thread the enclosing
// token, captured like any value; when either arm has effects both return a
// token and the ctrl.if's first result becomes the enclosing token.

ir::Value* GraphBuilder::capture(Region& r, ir::Value* outer) {
  for (size_t i = 0; i < r.captures.size(); ++i)
    if (r.captures[i] == outer) return r.params[i];
  ir::Value* p = r.graph->addParam(outer->type());
  r.captures.push_back(outer);
  r.params.push_back(p);
  return p;
}

ir::Value* GraphBuilder::visible(ir::Value* v, size_t level) {
  ir::Graph* owner = v->ownerGraph();
  size_t at;
  if (owner == graph_) {
    at = 0;
  } else {
    at = SIZE_MAX;
    for (size_t k = 0; k < level && k < open_.size(); ++k)
      if (open_[k]->graph.get() == owner) at = k + 1;
    if (at == SIZE_MAX) return nullptr;
  }
  for (size_t k = at; k < level; ++k) v = capture(*open_[k], v);
  return v;
}

ir::Value* GraphBuilder::tokenAt(size_t level) {
  if (level == 0) {
    if (!token_) token_ = graph_->addParam(ir::Type::token(), "token");
    return token_;
  }
  Region& r = *open_[level - 1];
  if (!r.token) {
    r.token = capture(r, tokenAt(level - 1));
    r.tokenIn = r.token;
  }
  return r.token;
}

void GraphBuilder::beginRegion(const std::string& label, const std::vector<ir::Type>& inputs,
                               std::vector<int>& inputIds) {
  auto r = std::make_unique<Region>();
  r->graph = std::make_unique<ir::Graph>(label);
  for (const ir::Type& t : inputs) {
    values_.push_back(r->graph->addParam(t));
    inputIds.push_back(static_cast<int>(values_.size() - 1));
  }
  r->numInputs = inputs.size();
  builder_.setInsertionPoint(*r->graph);
  open_.push_back(std::move(r));
}

int GraphBuilder::endRegion() {
  done_.push_back(std::move(open_.back()));
  open_.pop_back();
  builder_.setInsertionPoint(currentGraph());
  return static_cast<int>(done_.size() - 1);
}

void GraphBuilder::abandonRegion() {
  open_.pop_back();
  builder_.setInsertionPoint(currentGraph());
}

GraphBuilder::Region* GraphBuilder::doneRegion(int h, std::string& error) {
  if (h < 0 || h >= static_cast<int>(done_.size()) || !done_[h]) {
    error = "internal: unknown region";
    return nullptr;
  }
  return done_[h].get();
}

void GraphBuilder::bindResults(ir::Node* n, bool effect, std::vector<int>& results) {
  size_t first = 0;
  if (effect) {
    currentToken() = n->result(0);
    first = 1;
  }
  for (size_t i = first; i < n->numResults(); ++i) {
    values_.push_back(n->result(i));
    results.push_back(static_cast<int>(values_.size() - 1));
  }
}

bool GraphBuilder::setRegionResults(Region& r, const std::vector<ir::Value*>& lead,
                                    const std::vector<int>& ids, std::string& error) {
  std::vector<ir::Value*> vs = lead;
  size_t level = open_.size();
  for (int id : ids) {
    ir::Value* v = id >= 0 && id < static_cast<int>(values_.size()) ? values_[id] : nullptr;
    if (v && v->ownerGraph() != r.graph.get()) {
      v = visible(v, level);
      if (v) v = capture(r, v);
    }
    if (!v) {
      error = "internal: a region result is not visible in the region";
      return false;
    }
    vs.push_back(v);
  }
  std::vector<ir::Type> types;
  for (ir::Value* v : vs) types.push_back(v->type());
  r.graph->setResults(vs);
  r.graph->setResultTypes(types);
  r.graph->setHasReturn(true);
  return true;
}

void GraphBuilder::unifyCaptures(const std::vector<Region*>& rs, std::vector<ir::Value*>& all) {
  for (Region* r : rs)
    for (ir::Value* c : r->captures)
      if (std::find(all.begin(), all.end(), c) == all.end()) all.push_back(c);
  for (Region* r : rs) {
    // New parameters in the common order; the old ones are redirected and erased.
    std::vector<ir::Value*> params;
    for (ir::Value* c : all) {
      ir::Value* p = r->graph->addParam(c->type());
      auto it = std::find(r->captures.begin(), r->captures.end(), c);
      if (it != r->captures.end()) {
        ir::Value* old = r->params[static_cast<size_t>(it - r->captures.begin())];
        old->replaceAllUsesWith(p);
        if (r->tokenIn == old) r->tokenIn = p;
        if (r->token == old) r->token = p;
      }
      params.push_back(p);
    }
    for (size_t i = r->numInputs + r->captures.size(); i-- > r->numInputs;) r->graph->eraseParam(i);
    r->captures = all;
    r->params = params;
  }
}

bool GraphBuilder::addIf(int cond, int thenH, int elseH, const std::vector<int>& thenIds,
                         const std::vector<int>& elseIds, std::vector<int>& results, std::string& error) {
  Region* a = doneRegion(thenH, error);
  Region* b = a ? doneRegion(elseH, error) : nullptr;
  if (!b) return false;
  size_t level = open_.size();
  ir::Value* c = cond >= 0 && cond < static_cast<int>(values_.size()) ? visible(values_[cond], level) : nullptr;
  if (!c) {
    error = "internal: the condition is not visible here";
    return false;
  }
  bool effects = (a->token && a->token != a->tokenIn) || (b->token && b->token != b->tokenIn);
  std::vector<ir::Value*> leadA, leadB;
  if (effects) {
    ir::Value* outer = tokenAt(level);
    leadA.push_back(a->token && a->token != a->tokenIn ? a->token : capture(*a, outer));
    leadB.push_back(b->token && b->token != b->tokenIn ? b->token : capture(*b, outer));
  }
  if (!setRegionResults(*a, leadA, thenIds, error) || !setRegionResults(*b, leadB, elseIds, error))
    return false;
  if (a->graph->resultTypes() != b->graph->resultTypes()) {
    std::string ta, tb;
    for (const ir::Type& t : a->graph->resultTypes()) ta += (ta.empty() ? "" : ", ") + t.str();
    for (const ir::Type& t : b->graph->resultTypes()) tb += (tb.empty() ? "" : ", ") + t.str();
    error = "the arms yield different types: (" + ta + ") and (" + tb + ")";
    return false;
  }
  std::vector<ir::Value*> caps;
  unifyCaptures({a, b}, caps);
  std::vector<ir::Value*> ops{c};
  ops.insert(ops.end(), caps.begin(), caps.end());
  a->graph->setName("then");
  b->graph->setName("else");
  ir::Node* n = builder_.create(ir::CoreOp::If, ops, {}, a->graph->resultTypes());
  if (!n) {
    error = builder_.error();
    return false;
  }
  n->addRegion(std::move(a->graph));
  n->addRegion(std::move(b->graph));
  done_[thenH].reset();
  done_[elseH].reset();
  bindResults(n, effects, results);
  return true;
}

bool GraphBuilder::addLoop(const std::vector<int>& init, int condH, int bodyH, int condId,
                           const std::vector<int>& bodyIds, std::vector<int>& results, std::string& error) {
  Region* c = doneRegion(condH, error);
  Region* b = c ? doneRegion(bodyH, error) : nullptr;
  if (!b) return false;
  size_t n0 = init.size();
  if (c->numInputs != n0 || b->numInputs != n0 || bodyIds.size() != n0) {
    error = "internal: loop regions do not match the carried values";
    return false;
  }
  if ((c->token && c->token != c->tokenIn) || (b->token && b->token != b->tokenIn)) {
    error = "in-place or other effects inside a captured loop";
    return false;
  }
  size_t level = open_.size();
  std::vector<ir::Value*> ops;
  for (int id : init) {
    ir::Value* v = id >= 0 && id < static_cast<int>(values_.size()) ? visible(values_[id], level) : nullptr;
    if (!v) {
      error = "internal: a loop input is not visible here";
      return false;
    }
    ops.push_back(v);
  }
  if (!setRegionResults(*c, {}, {condId}, error) || !setRegionResults(*b, {}, bodyIds, error)) return false;
  if (c->graph->resultTypes().size() != 1 || c->graph->resultTypes()[0].kind() != ir::TypeKind::Bool) {
    error = "the loop condition is not a bool";
    return false;
  }
  for (size_t i = 0; i < n0; ++i)
    if (b->graph->resultTypes()[i] != b->graph->param(i)->type()) {
      error = "loop-carried value " + std::to_string(i) + " changes type from " +
              b->graph->param(i)->type().str() + " to " + b->graph->resultTypes()[i].str();
      return false;
    }
  std::vector<ir::Value*> caps;
  unifyCaptures({c, b}, caps);
  // The body passes its captures through unchanged.
  std::vector<ir::Value*> rs(b->graph->results().begin(), b->graph->results().end());
  for (size_t i = 0; i < caps.size(); ++i) rs.push_back(b->params[i]);
  std::vector<ir::Type> ts;
  for (ir::Value* v : rs) ts.push_back(v->type());
  b->graph->setResults(rs);
  b->graph->setResultTypes(ts);
  std::vector<ir::Type> rts;
  for (ir::Value* v : ops) rts.push_back(v->type());
  for (ir::Value* v : caps) {
    ops.push_back(v);
    rts.push_back(v->type());
  }
  c->graph->setName("cond");
  b->graph->setName("body");
  ir::Node* n = builder_.create(ir::CoreOp::Loop, ops, {}, rts);
  if (!n) {
    error = builder_.error();
    return false;
  }
  n->addRegion(std::move(c->graph));
  n->addRegion(std::move(b->graph));
  done_[condH].reset();
  done_[bodyH].reset();
  for (size_t i = 0; i < n0; ++i) {
    values_.push_back(n->result(i));
    results.push_back(static_cast<int>(values_.size() - 1));
  }
  return true;
}

int GraphBuilder::addConst(const ir::Attr& value, ir::Type type) {
  values_.push_back(builder_.constant(value, type));  // in the current region
  return static_cast<int>(values_.size() - 1);
}

void GraphBuilder::setOutputs(const std::vector<int>& ids) {
  std::vector<ir::Value*> vs;
  for (int id : ids) vs.push_back(values_[id]);
  if (token_) vs.push_back(token_);
  graph_->setResults(vs);
  std::vector<ir::Type> types;
  for (ir::Value* v : vs) types.push_back(v->type());
  graph_->setResultTypes(types);
  graph_->setHasReturn(true);
}

std::string GraphBuilder::text() const { return ir::printModule(*module_); }

bool GraphBuilder::runPasses(std::string_view pipeline, std::string& error,
                              const std::map<std::string, std::string>& options) {
  support::DiagnosticEngine diag;
  passes::PassManager pm(diag);
  for (const auto& [k, v] : options) pm.setOption(k, v);
  // Note [Distinct outputs]: each graph result stands for one Python object
  // the caller gets (the translator lists every tracked value once), so two
  // results that passes merged (cse of `a + b` computed twice) or folded into
  // a parameter (`x * 1` -> x) must come back as distinct tensors, as in
  // eager: the later ones become copies.
  std::vector<bool> wasParam;
  for (ir::Value* v : graph_->results()) wasParam.push_back(v->isParam());
  if (!pm.addPipeline(pipeline) || !pm.run(*module_)) {
    error = diag.renderAllText();
    return false;
  }
  values_.clear();  // ids are invalid once passes have rewritten the graph
  std::vector<ir::Value*> rs(graph_->results().begin(), graph_->results().end());
  bool changed = false;
  for (size_t i = 0; i < rs.size(); ++i) {
    ir::Value* v = rs[i];
    if (v->type().isToken()) continue;
    auto end = rs.begin() + static_cast<std::ptrdiff_t>(i);
    bool merged = std::find(rs.begin(), end, v) != end;
    bool folded = v->isParam() && i < wasParam.size() && !wasParam[i];
    if (!merged && !folded) continue;
    if (!v->type().isTensor()) continue;  // numbers have no identity
    ir::Builder b(*graph_);
    ir::Node* n = b.create("aten.clone.default", {v}, {}, {v->type()});
    if (!n) {
      error = "distinct outputs: " + b.error();
      return false;
    }
    rs[i] = n->result(0);
    changed = true;
  }
  if (changed) graph_->setResults(rs);
  return true;
}

std::shared_ptr<CompiledGraph> GraphBuilder::compile(std::string& error, const std::string& device,
                                                     const std::map<std::string, std::string>& options) {
  values_.clear();
  ir::Graph* g = graph_;
  return CompiledGraph::create(std::move(module_), g, error, device, options);
}

}  // namespace xacc::capture
