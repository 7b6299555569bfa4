// Splitting a graph into consecutive pieces at gradient-bucket boundaries (see
// Note [Bucket split] in GraphSplit.h). Each piece is a copy of the graph with
// the other pieces' nodes erased: the values it reads from earlier pieces become
// parameters (after the original parameters it reads), the values later pieces
// or the graph's results read become its results.
#include "xacc/passes/GraphSplit.h"

#include <algorithm>
#include <unordered_map>

namespace xacc::passes {

using ir::Node;
using ir::Type;
using ir::TypeKind;
using ir::Value;

namespace {

std::vector<Node*> topNodes(const ir::Graph& g) {
  std::vector<Node*> out;
  out.reserve(g.numNodes());
  for (Node* n : g) out.push_back(n);
  return out;
}

/// A constant: recomputed by every piece that reads it instead of crossing a cut.
bool isFree(const Node* n) { return n->numOperands() == 0 && n->numRegions() == 0 && n->isPure(); }

/// What an autograd.Function hands on unchanged from one piece to the next.
bool canCross(Type t) { return t.isTensor() || t.isInt() || (t && t.kind() == TypeKind::Bool); }

bool hasEffects(const std::vector<Node*>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), [](const Node* n) { return n->hasEffects(); });
}

/// Index of each top-level node in `nodes`.
std::unordered_map<const Node*, size_t> indexOf(const std::vector<Node*>& nodes) {
  std::unordered_map<const Node*, size_t> idx;
  for (size_t i = 0; i < nodes.size(); ++i) idx[nodes[i]] = i;
  return idx;
}

}  // namespace

std::vector<size_t> bucketPieces(const ir::Graph& g, const std::vector<uint64_t>& paramBytes,
                                 const std::vector<uint64_t>& caps) {
  std::vector<Node*> nodes = topNodes(g);
  const size_t n = nodes.size();
  std::vector<size_t> pieceOf(n, 0);
  if (n < 2 || caps.empty() || hasEffects(nodes)) return pieceOf;
  // clean[i]: a cut right before node i passes only values that can cross.
  auto idx = indexOf(nodes);
  std::vector<bool> clean(n + 1, true);
  for (size_t d = 0; d < n; ++d) {
    if (isFree(nodes[d])) continue;
    for (size_t r = 0; r < nodes[d]->numResults(); ++r) {
      Value* v = nodes[d]->result(r);
      if (canCross(v->type())) continue;
      size_t last = d;
      for (const ir::Use& u : v->uses())
        if (u.user) last = std::max(last, idx.at(u.user));
      for (size_t i = d + 1; i <= last; ++i) clean[i] = false;
    }
  }
  // Walk from the end, as the backward produces gradients, counting each
  // bucketed parameter once, at its last reader.
  std::vector<bool> counted(g.numParams(), false);
  std::vector<size_t> bucketOf(n, 0);
  size_t bucket = 0;
  uint64_t size = 0;
  for (size_t i = n; i-- > 0;) {
    uint64_t cap = caps[std::min(bucket, caps.size() - 1)];
    if (size >= cap && clean[i + 1]) {
      ++bucket;
      size = 0;
    }
    for (Value* v : nodes[i]->operands()) {
      if (!v || !v->isParam() || v->ownerGraph() != &g) continue;
      size_t p = v->index();
      if (p < paramBytes.size() && paramBytes[p] && !counted[p]) {
        counted[p] = true;
        size += paramBytes[p];
      }
    }
    bucketOf[i] = bucket;
  }
  for (size_t i = 0; i < n; ++i) pieceOf[i] = bucket - bucketOf[i];
  return pieceOf;
}

bool splitGraph(const ir::Graph& g, const std::vector<size_t>& pieceOf, GraphSplit& out, std::string& error) {
  std::vector<Node*> nodes = topNodes(g);
  if (pieceOf.size() != nodes.size()) {
    error = "one piece per node expected";
    return false;
  }
  if (hasEffects(nodes)) {
    error = "the graph has effects";
    return false;
  }
  for (size_t i = 1; i < pieceOf.size(); ++i)
    if (pieceOf[i] < pieceOf[i - 1]) {
      error = "pieces must follow the node order";
      return false;
    }
  const size_t numPieces = nodes.empty() ? 1 : pieceOf.back() + 1;
  auto idx = indexOf(nodes);
  // The piece a value is computed in; -1: a parameter or a constant (free node).
  auto home = [&](const Value* v) -> int {
    if (v->isParam()) return -1;
    const Node* d = v->definingNode();
    return isFree(d) ? -1 : static_cast<int>(pieceOf[idx.at(d)]);
  };
  std::unordered_map<const Value*, bool> isResult;
  for (Value* r : g.results()) isResult[r] = true;
  // Per piece: the values it returns, in node order (later pieces or the graph's results read them).
  std::vector<std::vector<Value*>> returned(numPieces);
  std::unordered_map<const Value*, SplitSource> where;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* nd = nodes[i];
    const size_t k = pieceOf[i];
    for (size_t r = 0; r < nd->numResults(); ++r) {
      Value* v = nd->result(r);
      bool later = false;
      if (!isFree(nd))
        for (const ir::Use& u : v->uses())
          if (u.user && pieceOf[idx.at(u.user)] > k) later = true;
      if (later && !canCross(v->type())) {
        error = "a value of type " + v->type().str() + " would cross a cut";
        return false;
      }
      // A constant the graph returns is returned by the last piece.
      size_t owner = isFree(nd) ? numPieces - 1 : k;
      if (later || isResult.count(v)) {
        where[v] = SplitSource{static_cast<int>(owner), returned[owner].size()};
        returned[owner].push_back(v);
      }
    }
  }
  out = GraphSplit{};
  for (size_t k = 0; k < numPieces; ++k) {
    std::unique_ptr<ir::Graph> c = g.clone();
    std::unordered_map<const Value*, Value*> map;
    for (size_t i = 0; i < g.numParams(); ++i) map[g.param(i)] = c->param(i);
    std::vector<Node*> copies = topNodes(*c);
    for (size_t i = 0; i < nodes.size(); ++i)
      for (size_t r = 0; r < nodes[i]->numResults(); ++r) map[nodes[i]->result(r)] = copies[i]->result(r);
    std::vector<SplitSource> src;
    for (size_t i = 0; i < g.numParams(); ++i) src.push_back(SplitSource{-1, i});
    // Values of earlier pieces this piece reads become parameters.
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (pieceOf[i] != k || isFree(nodes[i])) continue;
      for (Value* v : nodes[i]->operands()) {
        if (!v || home(v) < 0 || static_cast<size_t>(home(v)) == k) continue;
        Value* cv = map.at(v);
        if (cv->isParam()) continue;  // already replaced
        Value* p = c->addParam(v->type(), v->name());
        cv->replaceAllUsesWith(p);
        map[v] = p;
        src.push_back(where.at(v));
      }
    }
    std::vector<Value*> rs;
    std::vector<Type> ts;
    for (Value* v : returned[k]) {
      rs.push_back(map.at(v));
      ts.push_back(v->type());
    }
    c->setResults(rs);
    c->setResultTypes(ts);
    for (size_t i = nodes.size(); i-- > 0;)
      if (pieceOf[i] != k && !isFree(nodes[i])) c->erase(copies[i]);
    for (size_t i = nodes.size(); i-- > 0;)
      if (isFree(nodes[i]) && copies[i]->allResultsUnused()) c->erase(copies[i]);
    for (size_t i = g.numParams(); i-- > 0;)
      if (!c->param(i)->hasUses()) {
        c->eraseParam(i);
        src.erase(src.begin() + static_cast<std::ptrdiff_t>(i));
      }
    c->setName(g.name() + "_piece" + std::to_string(k));
    out.pieces.push_back(std::move(c));
    out.inputs.push_back(std::move(src));
  }
  for (Value* r : g.results()) out.results.push_back(r->isParam() ? SplitSource{-1, r->index()} : where.at(r));
  return true;
}

}  // namespace xacc::passes
