// Values, nodes, graphs and modules: ownership, use lists and the intrusive
// node list. See Graph.h for the invariants.
#include "xacc/ir/Graph.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <new>

#include "xacc/support/LargeMemory.h"

namespace xacc::ir {

namespace detail {

/// The bump arena behind a graph's nodes; see Note [IR storage]. Chunks grow
/// geometrically from 1 KiB (a small region costs little) up to 2 MiB; from there
/// on each chunk is its own 2 MiB-aligned mapping (support/LargeMemory.h).
class NodeArena {
public:
  NodeArena() = default;
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;
  ~NodeArena() {
    for (const Chunk& c : chunks_) support::freeLarge(c.base, c.reserved);
  }

  void* allocate(size_t size) {
    size = roundUp(size, kAlign);
    size_t b = size / kAlign;
    if (b < kBuckets && free_[b]) {
      void* p = free_[b];
      free_[b] = *static_cast<void**>(p);
      return p;
    }
    if (size > size_t(end_ - cur_)) newChunk(size);
    void* p = cur_;
    cur_ += size;
    return p;
  }

  /// Puts a block of `size` bytes back for reuse by a block of the same size.
  void recycle(void* p, size_t size) {
    size_t b = roundUp(size, kAlign) / kAlign;
    if (b >= kBuckets) return;
    *static_cast<void**>(p) = free_[b];
    free_[b] = p;
  }

private:
  static constexpr size_t kAlign = 16;
  static constexpr size_t kMaxChunk = size_t(64) << 20;
  static constexpr size_t kBuckets = 64;  // blocks up to 1 KiB are recycled
  struct Chunk {
    char* base;
    size_t reserved;
  };
  static size_t roundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

  void newChunk(size_t atLeast) {
    size_t size = std::max(next_, roundUp(atLeast, 4096));
    // Chunks double up to 64 MiB: a big graph's nodes then sit in a few blocks
    // that qualify for huge pages (support/LargeMemory.cpp).
    if (next_ < kMaxChunk) next_ *= 2;
    Chunk c;
    c.base = static_cast<char*>(support::allocateLarge(size, c.reserved));
    chunks_.push_back(c);
    cur_ = c.base;
    end_ = c.base + size;
  }

  char* cur_ = nullptr;
  char* end_ = nullptr;
  size_t next_ = 1024;
  void* free_[kBuckets] = {};
  std::vector<Chunk> chunks_;
};

const std::vector<std::unique_ptr<Graph>> kNoRegions;

}  // namespace detail

using detail::UseSlot;

static const std::string kNoName;

const std::string& Value::name() const { return name_ ? *name_ : kNoName; }

void Value::setName(std::string n) {
  if (n.empty()) name_.reset();
  else if (name_) *name_ = std::move(n);
  else name_ = std::make_unique<std::string>(std::move(n));
}

void Value::addUse(UseSlot* s) {
  s->prev = lastUse_;
  s->next = nullptr;
  if (lastUse_) lastUse_->next = s;
  else firstUse_ = s;
  lastUse_ = s;
  ++numUses_;
}

void Value::removeUse(UseSlot* s) {
  if (s->prev) s->prev->next = s->next;
  else firstUse_ = s->next;
  if (s->next) s->next->prev = s->prev;
  else lastUse_ = s->prev;
  s->prev = s->next = nullptr;
  --numUses_;
}

void Value::replaceAllUsesWith(Value* other) {
  if (other == this || !firstUse_) return;
  for (UseSlot* s = firstUse_; s; s = s->next) {
    s->value = other;
    if (!s->use.user) {
      auto* r = static_cast<Graph::ResultSlot*>(s);
      r->graph->results_[s->use.index] = other;
    }
  }
  if (!other) {
    // Every use becomes a missing operand: just dissolve the list.
    for (UseSlot* s = firstUse_; s;) {
      UseSlot* next = s->next;
      s->prev = s->next = nullptr;
      s = next;
    }
  } else {
    // Splice the whole list onto the end of `other`'s, keeping the order.
    firstUse_->prev = other->lastUse_;
    if (other->lastUse_) other->lastUse_->next = firstUse_;
    else other->firstUse_ = firstUse_;
    other->lastUse_ = lastUse_;
    other->numUses_ += numUses_;
  }
  firstUse_ = lastUse_ = nullptr;
  numUses_ = 0;
}

size_t Node::blockSize(uint32_t numResults, uint32_t inlineCap) {
  return sizeof(Node) + numResults * sizeof(Value) + inlineCap * sizeof(UseSlot);
}

Node::Node(const OpInfo* op, uint32_t numResults, uint32_t inlineCap)
    : op_(op), operandCap_(inlineCap), numResults_(numResults), inlineCap_(inlineCap) {
  Value* res = resultStorage();
  for (uint32_t i = 0; i < numResults; ++i) {
    Value* v = new (res + i) Value();
    v->param_ = 0;
    v->index_ = i;
  }
  operands_ = inlineSlots();
  for (uint32_t i = 0; i < inlineCap; ++i) new (operands_ + i) UseSlot();
}

Node::~Node() {
  for (uint32_t i = 0; i < numOperands_; ++i) unlinkOperand(i);
  if (operands_ != inlineSlots()) delete[] operands_;
  Value* res = resultStorage();
  for (uint32_t i = 0; i < numResults_; ++i) {
    // Erasing a node whose results are still used breaks the contract; leave
    // those users with a missing operand rather than a dangling one.
    if (res[i].firstUse_) {
      Value* dead = &res[i];
      dead->replaceAllUsesWith(nullptr);
    }
    res[i].~Value();
  }
}

void Node::unlinkOperand(uint32_t i) {
  UseSlot& s = operands_[i];
  if (s.value) s.value->removeUse(&s);
}

void Node::reserveOperands(uint32_t cap) {
  if (cap <= operandCap_) return;
  UseSlot* slots = new UseSlot[cap];
  for (uint32_t i = 0; i < numOperands_; ++i) {
    UseSlot& from = operands_[i];
    UseSlot& to = slots[i];
    to = from;
    if (!from.value) continue;
    if (to.prev) to.prev->next = &to;
    else from.value->firstUse_ = &to;
    if (to.next) to.next->prev = &to;
    else from.value->lastUse_ = &to;
  }
  if (operands_ != inlineSlots()) delete[] operands_;
  operands_ = slots;
  operandCap_ = cap;
}

void Node::setOperand(size_t i, Value* v) {
  UseSlot& s = operands_[i];
  if (s.value == v) return;
  unlinkOperand(uint32_t(i));
  s.value = v;
  if (v) v->addUse(&s);
}

void Node::addOperand(Value* v) {
  if (numOperands_ == operandCap_) reserveOperands(std::max<uint32_t>(4, operandCap_ * 2));
  UseSlot& s = operands_[numOperands_];
  s.value = v;
  s.prev = s.next = nullptr;
  s.use = {this, numOperands_};
  ++numOperands_;
  if (v) v->addUse(&s);
}

void Node::eraseOperand(size_t i) {
  // Renumber the uses of later operands (they move to the end of their lists).
  for (uint32_t j = uint32_t(i); j < numOperands_; ++j) unlinkOperand(j);
  for (uint32_t j = uint32_t(i); j + 1 < numOperands_; ++j) operands_[j].value = operands_[j + 1].value;
  --numOperands_;
  for (uint32_t j = uint32_t(i); j < numOperands_; ++j) {
    UseSlot& s = operands_[j];
    s.use = {this, j};
    if (s.value) s.value->addUse(&s);
  }
}

void Node::dropAllOperands() {
  for (uint32_t i = 0; i < numOperands_; ++i) unlinkOperand(i);
  numOperands_ = 0;
  for (auto& r : regions())
    for (Node* n : *r) n->dropAllOperands();
}

Graph* Node::addRegion(std::unique_ptr<Graph> g) {
  g->parentNode_ = this;
  if (!regions_) regions_ = std::make_unique<std::vector<std::unique_ptr<Graph>>>();
  regions_->push_back(std::move(g));
  return regions_->back().get();
}

bool Node::hasEffects() const {
  if (op_->has(kEffect)) return true;
  for (uint32_t i = 0; i < numOperands_; ++i) {
    Value* v = operands_[i].value;
    if (v && v->type().isToken()) return true;
  }
  const Value* res = resultStorage();
  for (uint32_t i = 0; i < numResults_; ++i)
    if (res[i].type().isToken()) return true;
  return false;
}

bool Node::allResultsUnused() const {
  const Value* res = resultStorage();
  for (uint32_t i = 0; i < numResults_; ++i)
    if (res[i].numUses_) return false;
  return true;
}

Graph::Graph(std::string name) : name_(std::move(name)) {}

Graph::~Graph() {
  // Uses among this graph's own values die with the graph, so they are not
  // unlinked one by one (that would touch every user's neighbours in the use
  // lists): the slot is cleared and its value's count dropped. Uses of other
  // graphs' values are unlinked properly.
  auto drop = [this](UseSlot& s) {
    Value* v = s.value;
    if (!v) return;
    if (v->ownerGraph() == this) --v->numUses_;
    else v->removeUse(&s);
    s.value = nullptr;
  };
  for (auto& r : resultSlots_) drop(*r);
  for (Node* n = head_; n; n = n->next_) {
    for (uint32_t i = 0; i < n->numOperands_; ++i) drop(n->operands_[i]);
    n->numOperands_ = 0;
  }
  // A value still counting uses is used from another graph (IR that breaks the
  // isolation rules, e.g. mid-transformation): leave those users with a missing
  // operand rather than a dangling one. Then every list of this graph is dead.
  auto release = [](Value& v) {
    if (v.numUses_) {
      for (UseSlot* s = v.firstUse_; s; s = s->next) {
        if (s->value != &v) continue;
        s->value = nullptr;
        if (!s->use.user) static_cast<ResultSlot*>(s)->graph->results_[s->use.index] = nullptr;
      }
    }
    v.firstUse_ = v.lastUse_ = nullptr;
    v.numUses_ = 0;
  };
  for (auto& p : params_) release(*p);
  // Destroy nodes in reverse order, users before the values they use.
  for (Node* n = tail_; n;) {
    Node* prev = n->prev_;
    Value* res = n->resultStorage();
    for (uint32_t i = 0; i < n->numResults_; ++i) release(res[i]);
    n->~Node();
    n = prev;
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
  v->graph_ = this;
  v->index_ = uint32_t(params_.size());
  v->id_ = nextValueId_++;
  v->setName(std::move(name));
  params_.push_back(std::move(v));
  return params_.back().get();
}

void Graph::eraseParam(size_t i) {
  assert(!params_[i]->hasUses());
  params_.erase(params_.begin() + i);
  for (size_t j = i; j < params_.size(); ++j) params_[j]->index_ = uint32_t(j);
}

void Graph::linkResult(size_t i, Value* v) {
  ResultSlot& r = *resultSlots_[i];
  if (r.value) r.value->removeUse(&r);
  r.value = v;
  results_[i] = v;
  if (v) v->addUse(&r);
}

void Graph::addResult(Value* v, Type declared) {
  auto slot = std::make_unique<ResultSlot>();
  slot->graph = this;
  slot->use = {nullptr, uint32_t(results_.size())};
  resultSlots_.push_back(std::move(slot));
  results_.push_back(nullptr);
  resultTypes_.push_back(declared ? declared : (v ? v->type() : Type()));
  linkResult(results_.size() - 1, v);
  hasReturn_ = true;
}

void Graph::setResult(size_t i, Value* v) {
  if (results_[i] == v) return;
  linkResult(i, v);
}

void Graph::setResults(const std::vector<Value*>& vs) {
  for (size_t i = 0; i < results_.size(); ++i) linkResult(i, nullptr);
  results_.clear();
  resultSlots_.clear();
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
  if (!arena_) arena_ = std::make_shared<detail::NodeArena>();
  uint32_t numResults = uint32_t(resultTypes.size());
  uint32_t numOperands = uint32_t(operands.size());
  void* mem = arena_->allocate(Node::blockSize(numResults, numOperands));
  Node* n = new (mem) Node(op, numResults, numOperands);
  Value* res = n->resultStorage();
  for (uint32_t i = 0; i < numResults; ++i) {
    res[i].type_ = resultTypes[i];
    res[i].graph_ = this;
    res[i].id_ = nextValueId_++;
  }
  UseSlot* slots = n->operands_;
  for (uint32_t i = 0; i < numOperands; ++i) {
    slots[i].value = operands[i];
    slots[i].use = {n, i};
    if (operands[i]) operands[i]->addUse(&slots[i]);
  }
  n->numOperands_ = numOperands;
  link(n, before);
  return n;
}

void Graph::destroyNode(Node* n) {
  size_t size = Node::blockSize(n->numResults_, n->inlineCap_);
  n->~Node();
  // A node moved in by transferTo has its block in an adopted arena, which
  // lives as long as this graph: recycling it here is safe either way.
  if (!arena_) arena_ = std::make_shared<detail::NodeArena>();
  arena_->recycle(n, size);
}

void Graph::erase(Node* n) {
  assert(n->parent_ == this);
  unlink(n);
  destroyNode(n);
}

void Graph::moveBefore(Node* n, Node* before) {
  unlink(n);
  link(n, before);
}

void Graph::transferTo(Node* n, Graph& other, Node* before) {
  unlink(n);
  other.link(n, before);
  if (&other == this) return;
  Value* res = n->resultStorage();
  for (uint32_t i = 0; i < n->numResults_; ++i) {
    res[i].graph_ = &other;
    res[i].id_ = other.nextValueId_++;
  }
  // The node's block stays where it was allocated: `other` keeps this graph's
  // arenas alive (the node may itself have come from one this graph adopted).
  auto adopt = [&other](const std::shared_ptr<detail::NodeArena>& a) {
    if (!a || a == other.arena_) return;
    for (auto& have : other.adopted_)
      if (have == a) return;
    other.adopted_.push_back(a);
  };
  adopt(arena_);
  for (auto& a : adopted_) adopt(a);
}

size_t Graph::totalNodes() const {
  size_t n = count_;
  for (Node* node : *this)
    for (auto& r : node->regions()) n += r->totalNodes();
  return n;
}

// Deep copy: values are remapped through `map`, indexed by the source value's
// dense id (Value::id()); regions recurse with their own map.
static void cloneInto(const Graph& src, Graph& dst) {
  std::vector<Value*> map(src.valueIdBound(), nullptr);
  auto mapped = [&](const Value* v) -> Value* {
    // A value of another graph (invalid IR) has no copy here: it becomes a
    // missing operand, as before.
    if (!v || v->ownerGraph() != &src) return nullptr;
    return map[v->id()];
  };
  for (size_t i = 0; i < src.numParams(); ++i) {
    Value* p = dst.addParam(src.param(i)->type(), src.param(i)->name());
    map[src.param(i)->id()] = p;
  }
  std::vector<Value*> ops;
  std::vector<Type> types;
  for (Node* n : src) {
    ops.clear();
    for (Value* v : n->operands()) ops.push_back(mapped(v));
    types.clear();
    for (size_t i = 0; i < n->numResults(); ++i) types.push_back(n->result(i)->type());
    Node* c = dst.create(&n->op(), ops, types);
    if (!n->attrs().empty()) c->attrs() = n->attrs();
    c->setLoc(n->loc());
    for (size_t i = 0; i < n->numResults(); ++i) {
      if (!n->result(i)->name().empty()) c->result(i)->setName(n->result(i)->name());
      map[n->result(i)->id()] = c->result(i);
    }
    for (auto& r : n->regions()) {
      auto rc = std::make_unique<Graph>(r->name());
      cloneInto(*r, *rc);
      c->addRegion(std::move(rc));
    }
  }
  dst.setResultTypes({});
  for (size_t i = 0; i < src.results().size(); ++i)
    dst.addResult(mapped(src.results()[i]), src.resultTypes()[i]);
  dst.setHasReturn(src.hasReturn());
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>(name_);
  cloneInto(*this, *g);
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
