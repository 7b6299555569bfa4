// Values, nodes, graphs and modules: ownership, use lists and the intrusive
// node list. See Graph.h for the invariants.
#include "xacc/ir/Graph.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <unordered_map>

namespace xacc::ir {

Graph* Value::ownerGraph() const { return def_ ? def_->parent() : paramOwner_; }

void Value::replaceAllUsesWith(Value* other) {
  if (other == this) return;
  std::vector<Use> uses = std::move(uses_);
  uses_.clear();
  for (const Use& u : uses) {
    if (u.user) {
      u.user->operands_[u.index] = other;
    } else {
      Graph* g = ownerGraph();
      g->results_[u.index] = other;
    }
    other->uses_.push_back(u);
  }
}

static void removeUse(Value* v, Node* user, uint32_t index) {
  auto& uses = v->uses();
  auto& mut = const_cast<std::vector<Use>&>(uses);
  // Search from the back: the most recent use is the likeliest to be removed.
  for (size_t i = mut.size(); i-- > 0;) {
    if (mut[i].user == user && mut[i].index == index) {
      mut[i] = mut.back();
      mut.pop_back();
      return;
    }
  }
}

Node::Node(const OpInfo* op, size_t numResults)
    : op_(op), results_(new Value[numResults]), numResults_(uint32_t(numResults)) {
  for (size_t i = 0; i < numResults; ++i) {
    results_[i].def_ = this;
    results_[i].index_ = uint32_t(i);
  }
}

Node::~Node() {
  for (size_t i = 0; i < operands_.size(); ++i)
    if (operands_[i]) removeUse(operands_[i], this, uint32_t(i));
}

void Node::setOperand(size_t i, Value* v) {
  if (operands_[i] == v) return;
  if (operands_[i]) removeUse(operands_[i], this, uint32_t(i));
  operands_[i] = v;
  if (v) const_cast<std::vector<Use>&>(v->uses()).push_back({this, uint32_t(i)});
}

void Node::addOperand(Value* v) {
  operands_.push_back(v);
  if (v) const_cast<std::vector<Use>&>(v->uses()).push_back({this, uint32_t(operands_.size() - 1)});
}

void Node::eraseOperand(size_t i) {
  // Renumber the uses of later operands.
  for (size_t j = i; j < operands_.size(); ++j)
    if (operands_[j]) removeUse(operands_[j], this, uint32_t(j));
  operands_.erase(operands_.begin() + i);
  for (size_t j = i; j < operands_.size(); ++j)
    if (operands_[j]) const_cast<std::vector<Use>&>(operands_[j]->uses()).push_back({this, uint32_t(j)});
}

void Node::dropAllOperands() {
  for (size_t i = 0; i < operands_.size(); ++i)
    if (operands_[i]) removeUse(operands_[i], this, uint32_t(i));
  operands_.clear();
  for (auto& r : regions_)
    for (Node* n : *r) n->dropAllOperands();
}

Graph* Node::addRegion(std::unique_ptr<Graph> g) {
  g->parentNode_ = this;
  regions_.push_back(std::move(g));
  return regions_.back().get();
}

bool Node::hasEffects() const {
  if (op_->has(kEffect)) return true;
  for (Value* v : operands_)
    if (v && v->type().isToken()) return true;
  for (size_t i = 0; i < numResults_; ++i)
    if (results_[i].type().isToken()) return true;
  return false;
}

uint64_t Node::nextEpoch() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

bool Node::allResultsUnused() const {
  for (size_t i = 0; i < numResults_; ++i)
    if (results_[i].hasUses()) return false;
  return true;
}

Graph::Graph(std::string name) : name_(std::move(name)) {}

Graph::~Graph() {
  // Drop all operand uses first so node destruction order does not matter.
  // Results refer to values of this graph only (regions are isolated), so
  // their use entries die with those values.
  for (Node* n = head_; n; n = n->next_) n->dropAllOperands();
  Node* n = head_;
  while (n) {
    Node* next = n->next_;
    delete n;
    n = next;
  }
}

Module* Graph::module() const {
  const Graph* g = this;
  while (g->parentNode_) g = g->parentNode_->parent();
  return g->module_;
}

Value* Graph::addParam(Type t, std::string name) {
  auto v = std::make_unique<Value>();
  v->type_ = t;
  v->paramOwner_ = this;
  v->index_ = uint32_t(params_.size());
  v->name_ = std::move(name);
  params_.push_back(std::move(v));
  return params_.back().get();
}

void Graph::eraseParam(size_t i) {
  assert(!params_[i]->hasUses());
  params_.erase(params_.begin() + i);
  for (size_t j = i; j < params_.size(); ++j) params_[j]->index_ = uint32_t(j);
}

void Graph::addResult(Value* v, Type declared) {
  results_.push_back(v);
  resultTypes_.push_back(declared ? declared : (v ? v->type() : Type()));
  if (v) const_cast<std::vector<Use>&>(v->uses()).push_back({nullptr, uint32_t(results_.size() - 1)});
  hasReturn_ = true;
}

void Graph::setResult(size_t i, Value* v) {
  if (results_[i] == v) return;
  if (results_[i]) removeUse(results_[i], nullptr, uint32_t(i));
  results_[i] = v;
  if (v) const_cast<std::vector<Use>&>(v->uses()).push_back({nullptr, uint32_t(i)});
}

void Graph::setResults(const std::vector<Value*>& vs) {
  for (size_t i = 0; i < results_.size(); ++i)
    if (results_[i]) removeUse(results_[i], nullptr, uint32_t(i));
  results_.clear();
  std::vector<Type> types = resultTypes_;
  resultTypes_.clear();
  for (size_t i = 0; i < vs.size(); ++i) addResult(vs[i], i < types.size() ? types[i] : Type());
}

void Graph::link(Node* n, Node* before) {
  n->parent_ = this;
  if (!before) {
    n->prev_ = tail_;
    n->next_ = nullptr;
    if (tail_) tail_->next_ = n; else head_ = n;
    tail_ = n;
  } else {
    n->next_ = before;
    n->prev_ = before->prev_;
    if (before->prev_) before->prev_->next_ = n; else head_ = n;
    before->prev_ = n;
  }
  ++count_;
}

void Graph::unlink(Node* n) {
  if (n->prev_) n->prev_->next_ = n->next_; else head_ = n->next_;
  if (n->next_) n->next_->prev_ = n->prev_; else tail_ = n->prev_;
  n->prev_ = n->next_ = nullptr;
  n->parent_ = nullptr;
  --count_;
}

Node* Graph::create(const OpInfo* op, const std::vector<Value*>& operands,
                    const std::vector<Type>& resultTypes, Node* before) {
  Node* n = new Node(op, resultTypes.size());
  for (size_t i = 0; i < resultTypes.size(); ++i) n->results_[i].type_ = resultTypes[i];
  n->operands_.reserve(operands.size());
  for (Value* v : operands) n->addOperand(v);
  link(n, before);
  return n;
}

void Graph::erase(Node* n) {
  assert(n->parent_ == this);
  unlink(n);
  delete n;
}

void Graph::moveBefore(Node* n, Node* before) {
  unlink(n);
  link(n, before);
}

void Graph::transferTo(Node* n, Graph& other, Node* before) {
  unlink(n);
  other.link(n, before);
}

size_t Graph::totalNodes() const {
  size_t n = count_;
  for (Node* node : *this)
    for (auto& r : node->regions()) n += r->totalNodes();
  return n;
}

// Deep copy: values are remapped through `map`; regions recurse.
static void cloneInto(const Graph& src, Graph& dst, std::unordered_map<const Value*, Value*>& map) {
  for (size_t i = 0; i < src.numParams(); ++i) {
    Value* p = dst.addParam(src.param(i)->type(), src.param(i)->name());
    map[src.param(i)] = p;
  }
  for (Node* n : src) {
    std::vector<Value*> ops;
    ops.reserve(n->numOperands());
    for (Value* v : n->operands()) {
      auto it = map.find(v);
      ops.push_back(it == map.end() ? nullptr : it->second);
    }
    std::vector<Type> types;
    for (size_t i = 0; i < n->numResults(); ++i) types.push_back(n->result(i)->type());
    Node* c = dst.create(&n->op(), ops, types);
    c->attrs() = n->attrs();
    c->setLoc(n->loc());
    for (size_t i = 0; i < n->numResults(); ++i) {
      c->result(i)->setName(n->result(i)->name());
      map[n->result(i)] = c->result(i);
    }
    for (auto& r : n->regions()) {
      auto rc = std::make_unique<Graph>(r->name());
      std::unordered_map<const Value*, Value*> inner;
      cloneInto(*r, *rc, inner);
      c->addRegion(std::move(rc));
    }
  }
  dst.setResultTypes({});
  for (size_t i = 0; i < src.results().size(); ++i) {
    auto it = map.find(src.results()[i]);
    dst.addResult(it == map.end() ? nullptr : it->second, src.resultTypes()[i]);
  }
  dst.setHasReturn(src.hasReturn());
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>(name_);
  std::unordered_map<const Value*, Value*> map;
  map.reserve(count_ * 2 + params_.size());
  cloneInto(*this, *g, map);
  return g;
}

Graph* Module::add(std::unique_ptr<Graph> g) {
  g->setModule(this);
  graphs_.push_back(std::move(g));
  return graphs_.back().get();
}

Graph* Module::lookup(std::string_view name) const {
  for (auto& g : graphs_)
    if (g->name() == name) return g.get();
  return nullptr;
}

bool Module::erase(std::string_view name) {
  for (auto it = graphs_.begin(); it != graphs_.end(); ++it)
    if ((*it)->name() == name) {
      graphs_.erase(it);
      return true;
    }
  return false;
}

size_t Module::totalNodes() const {
  size_t n = 0;
  for (auto& g : graphs_) n += g->totalNodes();
  return n;
}

}  // namespace xacc::ir
