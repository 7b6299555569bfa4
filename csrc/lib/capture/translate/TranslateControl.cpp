// Data-dependent branches captured as ctrl.if (see Note [Captured control
// flow] in GraphBuilder.cpp for the graph side).
//
// A forward conditional jump on a tensor does not break the graph: the
// condition becomes `aten.is_nonzero` (what `bool(t)` dispatches: an error for
// more than one element, as in eager), and both sides are traced one after
// the other from the same translator state, each into its own region:
//   * the fall-through side runs until it leaves [fall, target): it joins at
//     the offset it reaches, or returns;
//   * the jump side runs from the target until it reaches that offset (or
//     returns, when the first side returned).
// The translator state (the frame's slots and stack, every tracker reachable
// from the frames, the recorder's meta -> value bindings) is saved before the
// first side and restored before the second. The two end states are merged:
// trackers equal in both stay, tensors that differ become results of the
// ctrl.if (metadata must agree), as do tensors an arm changed in place;
// anything else that differs (a Python value, a container's shape) gives up.
// Giving up, or any break inside an arm, is a GB004 break at the jump, which
// the break machinery handles as before (one resume function per side).
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "BytecodeFacts.h"
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {
constexpr int kMaxBranchDepth = 8;

/// Note [While shapes]: `while c: body` compiles to `c; jump-if-false exit;
/// body: ...; c; <bottom>; exit:`, where <bottom> is one backward jump-if-true
/// to the body on 3.11 and, 3.12 having forward conditional jumps only,
/// `jump-if-false exit; JUMP_BACKWARD body`. For the forward jump at the top
/// (fall-through `fallIp`, target `exitIp`), the index of the bottom's first
/// instruction (where the body's trace stops with the condition on the stack),
/// or 0 when the jump is no such loop's.
size_t whileBottom(const Bytecode* bc, size_t fallIp, size_t exitIp) {
  const auto& instrs = bc->instrs();
  if (exitIp <= fallIp + 1) return 0;
  const Instr& last = instrs[exitIp - 1];
  if (last.target < 0 || static_cast<size_t>(bc->indexOf(last.target)) != fallIp) return 0;
  if (last.op == Op::POP_JUMP_BACKWARD_IF_TRUE) return exitIp - 1;  // 3.11
  if (last.op != Op::JUMP_BACKWARD) return 0;
  size_t k = exitIp - 2;  // 3.12: the test before the jump back (and its prefixes)
  while (k > fallIp && instrs[k].op == Op::EXTENDED_ARG) --k;
  const Instr& test = instrs[k];
  if (test.op != Op::POP_JUMP_IF_FALSE || static_cast<size_t>(bc->indexOf(test.target)) != exitIp) return 0;
  while (k > fallIp && instrs[k - 1].op == Op::EXTENDED_ARG) --k;
  return k;
}

/// Counts a region (a ctrl.if arm or a loop body) being traced for as long as
/// it lives: branchDepth_ limits nesting and refuses effects inside arms.
struct RegionDepth {
  explicit RegionDepth(int& d) : d_(d) { ++d_; }
  ~RegionDepth() { --d_; }
  RegionDepth(const RegionDepth&) = delete;
  RegionDepth& operator=(const RegionDepth&) = delete;

 private:
  int& d_;
};
}  // namespace

struct Translator::Snapshot {
  std::vector<VarRef> slots, stack;
  size_t ip = 0;
  bool grad = true;
  std::vector<std::pair<VarRef, Var>> heap;  ///< contents of every reachable tracker
  std::vector<std::pair<std::shared_ptr<GenFrame>, GenFrame::State>> gens;  ///< suspended generators
  PyRef binds;                               ///< the recorder's bindings (host.save_binds)
};

std::optional<std::string> Translator::endLoopBody(const Snapshot& pre, PyRef& hb) {
  // A loop body may change tensors it carries, nothing else of the state
  // before it: containers, iterators and objects stay as they were, and no
  // in-place op rebinds a tensor from outside the body.
  for (const auto& [v, before] : pre.heap) {
    const Var& now = *v;
    bool same = now.kind == before.kind && now.items == before.items && now.pos == before.pos &&
                now.iter == before.iter && now.count == before.count &&
                now.self == before.self && now.obj.get() == before.obj.get() && now.keys.size() == before.keys.size();
    if (!same) return std::string("the loop body changes a container, iterator or object");
  }
  PyRef binds = hostCall("save_binds", PyTuple_New(0));
  if (!binds) return std::string();
  PyRef rebound = hostCall("rebound", Py_BuildValue("(OOO)", pre.binds.get(), binds.get(), binds.get()));
  if (!rebound) return std::string();
  if (PyList_GET_SIZE(rebound.get()) > 0) return std::string("in-place ops on tensors from outside the loop body");
  hb = hostCall("end_region", PyTuple_New(0));
  if (!hb) return std::string();
  return std::nullopt;
}

struct Translator::ArmEnd {
  bool returned = false;
  size_t ip = 0;
  VarRef result;
};

/// One ctrl.if being merged: the values each arm yields, and what to bind
/// to the results.
struct Translator::MergeCtx {
  PyObject* binds1 = nullptr;  ///< bindings at the end of the first arm
  PyObject* binds2 = nullptr;  ///< ... and of the second (current)
  std::vector<int> ids1, ids2;
  /// Per result: the tracker whose meta gets a fresh twin bound to it, or
  /// the meta rebound in place (an in-place op in an arm).
  std::vector<VarRef> fresh;
  std::vector<PyRef> rebind;
  std::string why;
};

namespace {

void collect(const VarRef& v, std::set<Var*>& seen, std::vector<VarRef>& out) {
  if (!v || !seen.insert(v.get()).second) return;
  out.push_back(v);
  for (const VarRef& i : v->items) collect(i, seen, out);
  for (const VarRef& i : v->kwItems) collect(i, seen, out);
  for (const VarRef& i : v->cells) collect(i, seen, out);
  collect(v->self, seen, out);
  if (v->gen) {  // a suspended generator's locals and stack are reachable too
    for (const VarRef& i : v->gen->frame->slots) collect(i, seen, out);
    for (const VarRef& i : v->gen->frame->stack) collect(i, seen, out);
  }
}

}  // namespace

namespace {

/// Appends the ints of a host list of value ids to `out`.
void appendIds(PyObject* list, std::vector<int>& out) {
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(list); ++k)
    out.push_back(static_cast<int>(PyLong_AsLong(PyList_GET_ITEM(list, k))));
}

}  // namespace

bool Translator::bindLoopCarried(Frame& f, const std::vector<size_t>& carried, PyObject* bodyIds,
                                 std::vector<int>& ids) {
  appendIds(bodyIds, ids);
  for (size_t k = 0; k < carried.size(); ++k) {
    const VarRef& v = f.slots[carried[k]];
    PyRef meta = hostCall("bind_fresh", Py_BuildValue("(Oi)", v->obj.get(), ids[k + 1]));
    if (!meta) return false;
    auto nv = std::make_shared<Var>(*v);
    nv->source = nullptr;
    nv->obj = meta;
    f.slots[carried[k]] = nv;
  }
  return true;
}

PyRef Translator::hostCall(const char* method, PyObject* args) {
  if (!args) {
    failPy(GB::DataDependentBranch, method);
    return {};
  }
  std::string code, detail;
  PyRef r = host_.call(method, args, code, detail);
  Py_DECREF(args);
  if (!r) fail(GB::DataDependentBranch, std::string(method) + ": " + detail);
  return r;
}

void Translator::save(Frame& f, Snapshot& s) {
  s.slots = f.slots;
  s.stack = f.stack;
  s.ip = f.ip;
  s.grad = gradEnabled_;
  std::set<Var*> seen;
  std::vector<VarRef> all;
  for (Frame* fr = &f; fr; fr = fr->parent) {
    for (const VarRef& v : fr->slots) collect(v, seen, all);
    for (const VarRef& v : fr->stack) collect(v, seen, all);
  }
  s.heap.clear();
  s.gens.clear();
  for (const VarRef& v : all) {
    s.heap.emplace_back(v, *v);
    if (v->gen) s.gens.emplace_back(v->gen, v->gen->save());
  }
  s.binds = hostCall("save_binds", PyTuple_New(0));
}

void Translator::restore(Frame& f, const Snapshot& s) {
  f.slots = s.slots;
  f.stack = s.stack;
  f.ip = s.ip;
  for (const auto& [v, content] : s.heap) *v = content;
  for (const auto& [g, state] : s.gens) g->load(state);
  if (gradEnabled_ != s.grad) setGrad(s.grad);
  if (s.binds) hostCall("restore_binds", Py_BuildValue("(O)", s.binds.get()));
}

bool Translator::runArm(Frame& f, size_t start, const std::function<bool(size_t)>& stop, ArmEnd& end) {
  const auto& instrs = f.bc->instrs();
  f.ip = start;
  bool done = false;
  while (!stop(f.ip)) {
    if (f.ip >= instrs.size()) return fail(GB::Internal, "ran past the end of the code");
    const Instr& ins = instrs[f.ip];
    f.line = ins.line > 0 ? ins.line : f.line;
    f.offset = ins.offset;
    if (++steps > kMaxSteps) return fail(GB::DepthLimit, "too many instructions (unbounded loop?)");
    f.ip++;
    host_.setLoc(f.code->co_filename, f.line);
    VarRef result;
    if (!f.step(ins, done, result)) {
      if (!failed()) fail(GB::Internal, std::string("internal: ") + ins.name() + " failed without a reason");
      return false;
    }
    if (done) {
      end.returned = true;
      end.result = std::move(result);
      return true;
    }
  }
  end.ip = f.ip;
  return true;
}

VarRef Translator::mergeVar(const VarRef& a, const VarRef& b, MergeCtx& m) {
  if (a == b) return a;
  if (!a || !b || a->kind != b->kind) {
    m.why = "the arms leave different kinds of values";
    return nullptr;
  }
  switch (a->kind) {
    case Var::Kind::Tensor: {
      if (a->obj.get() == b->obj.get()) return a;  // in-place changes: see the rebound bindings
      if (a->np != b->np) {
        m.why = "a NumPy array in one arm and a tensor in the other";
        return nullptr;
      }
      PyRef r = hostCall("merge_metas", Py_BuildValue("(OOOO)", a->obj.get(), b->obj.get(), m.binds1, m.binds2));
      if (!r) return nullptr;
      if (PyUnicode_Check(r.get())) {
        m.why = pyText(r.get());
        return nullptr;
      }
      m.ids1.push_back(static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(r.get(), 0))));
      m.ids2.push_back(static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(r.get(), 1))));
      auto v = std::make_shared<Var>(*a);
      v->source = nullptr;
      m.fresh.push_back(v);
      m.rebind.emplace_back();
      return v;
    }
    case Var::Kind::Const: {
      if (Py_TYPE(a->obj.get()) == Py_TYPE(b->obj.get())) {
        int eq = PyObject_RichCompareBool(a->obj.get(), b->obj.get(), Py_EQ);
        if (eq < 0) PyErr_Clear();
        if (eq == 1) return a;
      }
      m.why = "the arms leave different Python values (" + pyText(a->obj.get()) + " and " +
              pyText(b->obj.get()) + ")";
      return nullptr;
    }
    case Var::Kind::Tuple:
    case Var::Kind::List:
    case Var::Kind::Dict: {
      if (a->items.size() != b->items.size() || a->keys.size() != b->keys.size()) {
        m.why = "the arms leave containers of different lengths";
        return nullptr;
      }
      for (size_t i = 0; i < a->keys.size(); ++i) {
        int eq = PyObject_RichCompareBool(a->keys[i].get(), b->keys[i].get(), Py_EQ);
        if (eq != 1) {
          if (eq < 0) PyErr_Clear();
          m.why = "the arms leave dicts with different keys";
          return nullptr;
        }
      }
      auto v = std::make_shared<Var>(*a);
      for (size_t i = 0; i < a->items.size(); ++i) {
        v->items[i] = mergeVar(a->items[i], b->items[i], m);
        if (!v->items[i]) return nullptr;
      }
      return v;
    }
    default:
      m.why = std::string("the arms leave different ") + (a->is(Var::Kind::SymScalar) ? "numbers" : "objects");
      return nullptr;
  }
}

bool Translator::notCaptured(Frame& f, int line, int offset, const std::string& why) {
  // Any failure inside an arm or loop body is a GB004 break at the jump (the
  // frame is then split there as before); internal errors stay what they are.
  Failure inner = failure_;
  failure_ = Failure();
  f.line = line;
  f.offset = offset;
  if (inner.internal) {
    failure_ = inner;
    return false;
  }
  std::string d = "branch on a tensor";
  if (!why.empty()) d += " (not captured as ctrl.if/ctrl.loop: " + why + ")";
  else if (!inner.code.empty())
    d += " (not captured as ctrl.if/ctrl.loop: " + inner.code + " " + inner.detail +
         (inner.line ? " at line " + std::to_string(inner.line) : "") + ")";
  Frame* saved = current_;
  current_ = &f;
  fail(GB::DataDependentBranch, d);
  current_ = saved;
  return false;
}

bool Translator::branch(Frame& f, const Instr& ins, bool jumpIfTrue, bool& done, VarRef& result) {
  const size_t fallIp = f.ip;
  const size_t jumpIp = static_cast<size_t>(f.bc->indexOf(ins.target));
  const int line = f.line, offset = f.offset;
  auto giveUp = [&](const std::string& why) { return notCaptured(f, line, offset, why); };
  if (f.lazy) return giveUp("inside a generator");
  if (branchDepth_ >= kMaxBranchDepth) return giveUp("branches nested too deeply");
  const auto& instrs = f.bc->instrs();
  if (!jumpIfTrue && jumpIp > fallIp && whileBottom(f.bc, fallIp, jumpIp))
    return whileLoop(f, fallIp, jumpIp, line, offset);  // `while <tensor>:`
  VarRef c = f.stack.back();
  PyRef cv = hostCall("condition", Py_BuildValue("(OOi)", c->obj.get(), f.code->co_filename, line));
  if (!cv) return giveUp("");
  if (PyUnicode_Check(cv.get())) return giveUp(pyText(cv.get()));
  int cond = static_cast<int>(PyLong_AsLong(cv.get()));
  f.pop();

  Snapshot pre;
  save(f, pre);
  if (failed()) return giveUp("");
  RegionDepth depth(branchDepth_);

  // The fall-through side first: its end tells where the sides join.
  PyRef h = hostCall("begin_region", Py_BuildValue("(s)", "arm"));
  if (!h) return giveUp("");
  ArmEnd e1;
  bool ok = runArm(f, fallIp, [&](size_t ip) { return ip < fallIp || ip >= jumpIp; }, e1);
  if (!ok) return giveUp("");
  PyRef h1 = hostCall("end_region", PyTuple_New(0));
  if (!h1) return giveUp("");
  Snapshot s1;
  save(f, s1);
  if (failed()) return giveUp("");
  restore(f, pre);
  if (failed()) return giveUp("");

  h = hostCall("begin_region", Py_BuildValue("(s)", "arm"));
  if (!h) return giveUp("");
  ArmEnd e2;
  const size_t join = e1.ip;
  const bool returns = e1.returned;
  ok = runArm(f, jumpIp, [&](size_t ip) { return !returns && ip == join; }, e2);
  if (!ok) return giveUp("");
  if (e2.returned != e1.returned) return giveUp("one side returns and the other does not");
  PyRef h2 = hostCall("end_region", PyTuple_New(0));
  if (!h2) return giveUp("");
  if (gradEnabled_ != s1.grad) return giveUp("the sides leave different grad modes");
  if (f.stack.size() != s1.stack.size()) return giveUp("the sides leave different stack depths");

  // Merge the two end states (the second is the current one).
  PyRef binds2 = hostCall("save_binds", PyTuple_New(0));
  if (!binds2) return giveUp("");
  MergeCtx m;
  m.binds1 = s1.binds.get();
  m.binds2 = binds2.get();
  std::vector<VarRef> slots(f.slots.size()), stack(f.stack.size());
  for (size_t i = 0; i < f.slots.size(); ++i) {
    if (!s1.slots[i] && !f.slots[i]) continue;
    slots[i] = mergeVar(s1.slots[i], f.slots[i], m);
    if (!slots[i]) return giveUp(m.why.empty() ? "a local differs between the sides" : m.why);
  }
  for (size_t i = 0; i < f.stack.size(); ++i) {
    stack[i] = mergeVar(s1.stack[i], f.stack[i], m);
    if (!stack[i]) return giveUp(m.why);
  }
  VarRef ret;
  if (returns) {
    ret = mergeVar(e1.result, e2.result, m);
    if (!ret) return giveUp(m.why);
  }
  // Trackers that existed before the branch: their contents after each side.
  std::unordered_map<Var*, const Var*> after1;
  for (const auto& [v, content] : s1.heap) after1[v.get()] = &content;
  std::vector<std::pair<VarRef, Var>> merged;
  for (const auto& [v, before] : pre.heap) {
    auto it = after1.find(v.get());
    if (it == after1.end()) continue;
    const Var& a = *it->second;
    const Var& b = *v;
    if (a.kind != b.kind || a.items.size() != b.items.size() || a.keys.size() != b.keys.size() ||
        a.pos != b.pos || a.iter != b.iter || a.count != b.count || a.kwItems.size() != b.kwItems.size() ||
        a.cells.size() != b.cells.size() ||
        a.obj.get() != b.obj.get())
      return giveUp("the sides change a container or iterator differently");
    for (size_t i = 0; i < a.keys.size(); ++i)  // a dict or object given different keys by each side
      if (a.keys[i].get() != b.keys[i].get() && PyObject_RichCompareBool(a.keys[i].get(), b.keys[i].get(), Py_EQ) != 1) {
        PyErr_Clear();
        return giveUp("the sides store different keys or attributes");
      }
    Var out = b;
    for (size_t i = 0; i < a.items.size(); ++i) {
      out.items[i] = mergeVar(a.items[i], b.items[i], m);
      if (!out.items[i]) return giveUp(m.why);
    }
    if (a.self || b.self) {
      out.self = mergeVar(a.self, b.self, m);
      if (!out.self) return giveUp(m.why);
    }
    if (a.vid != b.vid) out.vid = before.vid;
    merged.emplace_back(v, std::move(out));
  }
  // Tensors changed in place by either side: rebound to the ctrl.if's results.
  PyRef rebound = hostCall("rebound", Py_BuildValue("(OOO)", pre.binds.get(), s1.binds.get(), binds2.get()));
  if (!rebound) return giveUp("");
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rebound.get()); ++i) {
    PyObject* t = PyList_GET_ITEM(rebound.get(), i);
    m.ids1.push_back(static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(t, 1))));
    m.ids2.push_back(static_cast<int>(PyLong_AsLong(PyTuple_GET_ITEM(t, 2))));
    m.fresh.emplace_back();
    m.rebind.push_back(PyRef::borrow(PyTuple_GET_ITEM(t, 0)));
  }
  PyObject* l1 = PyList_New(0);
  PyObject* l2 = PyList_New(0);
  for (int id : m.ids1) PyList_Append(l1, PyRef::steal(PyLong_FromLong(id)).get());
  for (int id : m.ids2) PyList_Append(l2, PyRef::steal(PyLong_FromLong(id)).get());
  f.line = line;
  f.offset = offset;
  host_.setLoc(f.code->co_filename, line);
  // ^then runs when the condition is true: the fall-through side for a jump
  // taken on false, the jump side for a jump taken on true (`if not t:`).
  PyRef res = jumpIfTrue
                  ? hostCall("add_if", Py_BuildValue("(iOONNOi)", cond, h2.get(), h1.get(), l2, l1, f.code->co_filename, line))
                  : hostCall("add_if", Py_BuildValue("(iOONNOi)", cond, h1.get(), h2.get(), l1, l2, f.code->co_filename, line));
  if (!res) return giveUp("");
  if (PyUnicode_Check(res.get())) return giveUp(pyText(res.get()));
  // The joined state: arm metas bound to the results.
  for (size_t k = 0; k < m.fresh.size(); ++k) {
    long id = PyLong_AsLong(PyList_GET_ITEM(res.get(), static_cast<Py_ssize_t>(k)));
    if (m.fresh[k]) {
      PyRef meta = hostCall("bind_fresh", Py_BuildValue("(Ol)", m.fresh[k]->obj.get(), id));
      if (!meta) return giveUp("");
      m.fresh[k]->obj = meta;
    } else {
      PyRef r = hostCall("bind", Py_BuildValue("(Ol)", m.rebind[k].get(), id));
      if (!r) return giveUp("");
    }
  }
  for (auto& [v, content] : merged) *v = std::move(content);
  f.slots = std::move(slots);
  f.stack = std::move(stack);
  if (returns) {
    done = true;
    result = std::move(ret);
  } else {
    f.ip = join;
  }
  return true;
}

// `while <tensor>: body` (a forward jump to the exit, the body, the condition
// again and the bottom at `backIp`: Note [While shapes]) as one ctrl.loop. The
// carried values are the condition (as a bool) and every tensor local; the
// body is traced once, from parameters standing for them, up to the backward
// jump, whose condition the body region yields with the new tensors. Python
// state must not change in the body (the trip count is unknown): locals that
// are not tensors stay the same trackers, containers keep their contents,
// tensors keep their metadata; locals first bound in the body are unbound
// after the loop. In-place ops in the body are not captured yet.
bool Translator::whileLoop(Frame& f, size_t bodyIp, size_t exitIp, int line, int offset) {
  auto giveUp = [&](const std::string& why) { return notCaptured(f, line, offset, why); };
  VarRef c = f.stack.back();
  PyRef cv = hostCall("condition", Py_BuildValue("(OOi)", c->obj.get(), f.code->co_filename, line));
  if (!cv) return giveUp("");
  if (PyUnicode_Check(cv.get())) return giveUp(pyText(cv.get()));
  const int cond0 = static_cast<int>(PyLong_AsLong(cv.get()));
  f.pop();
  Snapshot pre;
  save(f, pre);
  if (failed()) return giveUp("");
  RegionDepth depth(branchDepth_);

  // The carried tensors: locals of this frame.
  const size_t nlocals = static_cast<size_t>(f.code->co_nlocals);
  std::vector<size_t> carried;
  std::vector<int> init{cond0};
  for (size_t i = 0; i < nlocals && i < f.slots.size(); ++i) {
    const VarRef& v = f.slots[i];
    if (!v || !v->is(Var::Kind::Tensor)) continue;
    if (v->isNumpy()) return giveUp("a NumPy array in a loop");
    int vid = valueOf(v);
    if (vid < 0) return giveUp("");
    carried.push_back(i);
    init.push_back(vid);
  }
  auto idList = [](const std::vector<int>& ids, size_t from = 0) {
    PyObject* l = PyList_New(0);
    for (size_t k = from; k < ids.size(); ++k) PyList_Append(l, PyRef::steal(PyLong_FromLong(ids[k])).get());
    return l;
  };
  // ^cond(c, ts...) -> c
  PyObject* specs = PyList_New(0);
  PyList_Append(specs, PyRef::steal(PyUnicode_FromString("bool")).get());
  for (size_t k = 1; k < init.size(); ++k) PyList_Append(specs, PyRef::steal(PyLong_FromLong(init[k])).get());
  PyRef condIds = hostCall("begin_region", Py_BuildValue("(sO)", "cond", specs));
  if (!condIds) {
    Py_DECREF(specs);
    return giveUp("");
  }
  PyRef hc = hostCall("end_region", PyTuple_New(0));
  if (!hc) {
    Py_DECREF(specs);
    return giveUp("");
  }
  // ^body(c, ts...) -> (c', ts'...)
  PyRef bodyIds = hostCall("begin_region", Py_BuildValue("(sN)", "body", specs));
  if (!bodyIds) return giveUp("");
  std::vector<int> bin;
  if (!bindLoopCarried(f, carried, bodyIds.get(), bin)) return giveUp("");
  std::vector<VarRef> entry = f.slots;
  const size_t backIp = whileBottom(f.bc, bodyIp, exitIp);
  ArmEnd e;
  if (!runArm(f, bodyIp, [&](size_t ip) { return ip < bodyIp || ip >= backIp; }, e)) return giveUp("");
  if (e.returned) return giveUp("a return inside the loop");
  if (e.ip != backIp) return giveUp("a break out of the loop");
  if (!f.stack.empty() && f.stack.back()->is(Var::Kind::ItemOf)) f.stack.back() = f.stack.back()->self;
  if (f.stack.empty() || !f.stack.back()->is(Var::Kind::Tensor)) return giveUp("the loop condition is not a tensor");
  PyRef cv2 = hostCall("condition", Py_BuildValue("(OOi)", f.stack.back()->obj.get(), f.code->co_filename, line));
  if (!cv2) return giveUp("");
  if (PyUnicode_Check(cv2.get())) return giveUp(pyText(cv2.get()));
  f.pop();
  std::vector<int> out{static_cast<int>(PyLong_AsLong(cv2.get()))};
  // The Python state must be what it was on entry.
  if (f.stack.size() != pre.stack.size()) return giveUp("the loop body changes the stack");
  for (size_t i = 0; i < f.stack.size(); ++i)
    if (f.stack[i] != pre.stack[i]) return giveUp("the loop body changes the stack");
  std::vector<bool> isCarried(f.slots.size(), false);
  for (size_t k = 0; k < carried.size(); ++k) {
    size_t i = carried[k];
    isCarried[i] = true;
    const VarRef& v = f.slots[i];
    if (!v || !v->is(Var::Kind::Tensor) || v->isNumpy())
      return giveUp("a loop-carried tensor becomes another kind of value");
    PyRef r = hostCall("carried", Py_BuildValue("(OO)", entry[i]->obj.get(), v->obj.get()));
    if (!r) return giveUp("");
    if (PyUnicode_Check(r.get())) return giveUp(pyText(r.get()));
    out.push_back(static_cast<int>(PyLong_AsLong(r.get())));
  }
  for (size_t i = 0; i < f.slots.size(); ++i) {
    if (isCarried[i] || !pre.slots[i] || f.slots[i] == pre.slots[i]) continue;
    const VarRef& a = pre.slots[i];
    const VarRef& b = f.slots[i];
    bool same = a->is(Var::Kind::Const) && b->is(Var::Kind::Const) &&
                Py_TYPE(a->obj.get()) == Py_TYPE(b->obj.get()) &&
                PyObject_RichCompareBool(a->obj.get(), b->obj.get(), Py_EQ) == 1;
    if (PyErr_Occurred()) PyErr_Clear();
    if (!same) return giveUp("the loop body changes a Python value (a local that is not a tensor)");
  }
  PyRef hb;
  if (auto why = endLoopBody(pre, hb)) return giveUp(*why);
  std::vector<int> cids;
  appendIds(condIds.get(), cids);
  f.line = line;
  f.offset = offset;
  PyRef res = hostCall("add_loop", Py_BuildValue("(NOOiNOi)", idList(init), hc.get(), hb.get(), cids[0], idList(out),
                                                 f.code->co_filename, line));
  if (!res) return giveUp("");
  if (PyUnicode_Check(res.get())) return giveUp(pyText(res.get()));
  // After the loop: the entry state with the carried tensors bound to the results.
  restore(f, pre);
  if (failed()) return giveUp("");
  for (size_t k = 0; k < carried.size(); ++k) {
    long id = PyLong_AsLong(PyList_GET_ITEM(res.get(), static_cast<Py_ssize_t>(k + 1)));
    const VarRef& v = f.slots[carried[k]];
    PyRef meta = hostCall("bind_fresh", Py_BuildValue("(Ol)", v->obj.get(), id));
    if (!meta) return giveUp("");
    auto nv = std::make_shared<Var>(*v);
    nv->source = nullptr;
    nv->obj = meta;
    f.slots[carried[k]] = nv;
  }
  f.ip = exitIp;
  return true;
}

// `t.item()` tested right away (`if t.item() > c:`, `while t.item() < c:`,
// `if t.item():`): the Python number never exists at capture time; the
// comparison runs on the tensor, in float64 (or int64 for an integer tensor
// compared with an int), which is exact for what Python compares, and the
// jump becomes a ctrl.if/ctrl.loop on it. Any other use of `.item()` stays a
// GB005 break.
VarRef Translator::itemForBranch(const VarRef& t) {
  Frame* f = current_;
  if (!f || t->isNumpy()) return nullptr;
  const auto& instrs = f->bc->instrs();
  auto isJump = [](Op op) {
    return op == Op::POP_JUMP_FORWARD_IF_FALSE || op == Op::POP_JUMP_FORWARD_IF_TRUE ||
           op == Op::POP_JUMP_BACKWARD_IF_FALSE || op == Op::POP_JUMP_BACKWARD_IF_TRUE ||
           op == Op::POP_JUMP_IF_FALSE || op == Op::POP_JUMP_IF_TRUE;  // 3.12
  };
  size_t i = f->ip;
  bool ok = false;
  if (i < instrs.size() && isJump(instrs[i].op)) {
    ok = true;
  } else if (i + 1 < instrs.size() && instrs[i].op == Op::TO_BOOL && isJump(instrs[i + 1].op)) {
    ok = true;  // 3.13: `if t.item():` tests TO_BOOL's operand (TranslateOps313.cpp)
  } else if (i + 2 < instrs.size() && instrs[i].op == Op::LOAD_CONST && instrs[i + 1].op == Op::COMPARE_OP &&
             isJump(instrs[i + 2].op)) {
    PyObject* c = PyTuple_GetItem(f->code->co_consts, instrs[i].arg);
    if (!c) PyErr_Clear();
    ok = c && (PyLong_CheckExact(c) || PyFloat_CheckExact(c) || PyBool_Check(c));
  } else if (i + 2 < instrs.size() && instrs[i].op == Op::LOAD_FAST && instrs[i + 1].op == Op::COMPARE_OP &&
             isJump(instrs[i + 2].op)) {
    // A local number (a constant or a symbolic argument): checked in itemCompare.
    size_t slot = static_cast<size_t>(instrs[i].arg);
    const VarRef& v = slot < f->slots.size() ? f->slots[slot] : VarRef();
    ok = v && (v->is(Var::Kind::Const) || v->is(Var::Kind::SymScalar));
  }
  if (!ok) return nullptr;
  PyObject* meta = t->obj.get();
  PyObject* n = PyObject_CallMethod(meta, "numel", nullptr);
  long numel = n ? PyLong_AsLong(n) : -1;
  Py_XDECREF(n);
  PyObject* cplx = PyObject_CallMethod(meta, "is_complex", nullptr);
  bool isComplex = cplx == Py_True;
  Py_XDECREF(cplx);
  if (PyErr_Occurred()) PyErr_Clear();
  if (numel != 1 || isComplex) return nullptr;
  auto v = makeVar(Var::Kind::ItemOf);
  v->self = t;
  return v;
}

VarRef Translator::itemCompare(PyObject* op, const VarRef& a, const VarRef& b) {
  const bool itemFirst = a->is(Var::Kind::ItemOf);
  const VarRef& item = itemFirst ? a : b;
  const VarRef& other = itemFirst ? b : a;
  PyObject* cmp[] = {operatorFn("lt"), operatorFn("le"), operatorFn("eq"),
                     operatorFn("ne"), operatorFn("gt"), operatorFn("ge")};
  bool isCmp = std::find(std::begin(cmp), std::end(cmp), op) != std::end(cmp);
  PyObject* c = other->is(Var::Kind::Const) || other->is(Var::Kind::SymScalar) ? other->obj.get() : nullptr;
  if (!isCmp || !c || !(PyLong_CheckExact(c) || PyFloat_CheckExact(c) || PyBool_Check(c))) {
    fail(GB::TensorReadBack, "Tensor.item() used other than in a comparison with a constant");
    return nullptr;
  }
  PyObject* meta = item->self->obj.get();
  PyObject* fp = PyObject_CallMethod(meta, "is_floating_point", nullptr);
  bool floating = fp == Py_True;
  Py_XDECREF(fp);
  if (PyErr_Occurred()) PyErr_Clear();
  const char* conv = floating || PyFloat_CheckExact(c) ? "double" : "long";
  PyRef method = PyRef::steal(PyObject_GetAttrString(pyTypes()->tensor, conv));
  if (!method) {
    failPy(GB::Internal, conv);
    return nullptr;
  }
  VarRef wide = record(method.get(), {item->self}, {});
  if (!wide) return nullptr;
  VarRef r = itemFirst ? record(op, {wide, other}, {}) : record(op, {other, wide}, {});
  if (!r) return nullptr;
  auto v = makeVar(Var::Kind::ItemOf);
  v->self = r;
  return v;
}

}  // namespace xacc::capture::translate

namespace xacc::capture::translate {

// `for i in range(...)` with more iterations than kUnrollBound, as one
// ctrl.loop. The carried values are the index (i64) and every tensor local;
// the condition region compares the index with the last value, the body
// region is the loop body traced once with the index as a region parameter
// (a symbolic number: any use of it as a plain Python number gives up), and
// yields index + step with the new tensors. Python state must not change in
// the body, as for `while` (the loop variable aside: after the loop it is the
// range's last value). Anything else that does not fit gives up quietly and
// the loop unrolls as before (returns 0); -1 is an internal failure.
int Translator::rangeLoop(Frame& f, const Instr& ins) {
  VarRef it = f.stack.back();
  const auto& instrs = f.bc->instrs();
  const size_t bodyIp = f.ip;  // past the FOR_ITER
  const int exitIdx = f.bc->indexOf(ins.target);
  if (exitIdx <= 0 || bodyIp >= instrs.size()) return 0;
  const size_t exitIp = static_cast<size_t>(exitIdx), backIp = exitIp - 1;
  const size_t headIp = bodyIp - 1;
  // 3.12, 3.13: the exhausted FOR_ITER goes on past the END_FOR at its target
  // (and 3.13's POP_TOP after it: forIterSkips).
  const int skips = forIterSkips();
  if (skips > 0 && instrs[exitIp].op != Op::END_FOR) return 0;
  const size_t afterIp = exitIp + static_cast<size_t>(skips);
  if (instrs[backIp].op != Op::JUMP_BACKWARD || static_cast<size_t>(f.bc->indexOf(instrs[backIp].target)) != headIp)
    return 0;
  if (instrs[bodyIp].op != Op::STORE_FAST || f.lazy || branchDepth_ >= kMaxBranchDepth) return 0;
  const size_t target = static_cast<size_t>(instrs[bodyIp].arg);
  const long first = PyLong_AsLong(it->items[it->pos]->obj.get());
  const long second = PyLong_AsLong(it->items[it->pos + 1]->obj.get());
  const long last = PyLong_AsLong(it->items.back()->obj.get());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  const long step = second - first;
  const int line = f.line, offset = f.offset;
  Snapshot pre;
  save(f, pre);
  if (failed()) return -1;
  const size_t stepsBefore = steps;
  bool open = false;  // a region is being traced
  // Gives up: back to the state before the loop, no failure.
  auto quiet = [&](const std::string& why) {
    Failure inner = failure_;
    if (inner.internal) return -1;
    failure_ = Failure();
    restore(f, pre);
    if (failed()) return -1;
    f.ip = bodyIp;
    f.line = line;
    f.offset = offset;
    steps = stepsBefore;
    std::string d = why.empty() ? inner.code + " " + inner.detail : why;
    if (open) {
      hostCall("abandon_region", PyTuple_New(0));
      failure_ = Failure();
    }
    (void)d;
    return 0;
  };
  RegionDepth depth(branchDepth_);

  const size_t nlocals = static_cast<size_t>(f.code->co_nlocals);
  std::vector<size_t> carried;
  std::vector<int> init;
  PyRef firstObj = PyRef::steal(PyLong_FromLong(first));
  int i0 = host_.scalarConst(firstObj.get(), "i64");
  if (i0 < 0) return quiet("the index as a graph value");
  init.push_back(i0);
  for (size_t i = 0; i < nlocals && i < f.slots.size(); ++i) {
    const VarRef& v = f.slots[i];
    if (!v || !v->is(Var::Kind::Tensor) || i == target) continue;
    if (v->isNumpy()) return quiet("a NumPy array in the loop");
    int vid = valueOf(v);
    if (vid < 0) return quiet("");
    carried.push_back(i);
    init.push_back(vid);
  }
  auto idList = [](const std::vector<int>& ids) {
    PyObject* l = PyList_New(0);
    for (int id : ids) PyList_Append(l, PyRef::steal(PyLong_FromLong(id)).get());
    return l;
  };
  auto specs = [&] {
    PyObject* s = PyList_New(0);
    PyList_Append(s, PyRef::steal(PyUnicode_FromString("i64")).get());
    for (size_t k = 1; k < init.size(); ++k) PyList_Append(s, PyRef::steal(PyLong_FromLong(init[k])).get());
    return s;
  };
  // ^cond(i, ts...) -> i <= last (i >= last for a negative step)
  PyRef condIds = hostCall("begin_region", Py_BuildValue("(sN)", "cond", specs()));
  if (!condIds) return quiet("");
  open = true;
  PyRef lastObj = PyRef::steal(PyLong_FromLong(last));
  int lastId = host_.scalarConst(lastObj.get(), "i64");
  int cmp = lastId < 0 ? -1
                       : host_.arith(step > 0 ? "cmp.le" : "cmp.ge",
                                     {static_cast<int>(PyLong_AsLong(PyList_GET_ITEM(condIds.get(), 0))), lastId}, "bool");
  PyRef hc = hostCall("end_region", PyTuple_New(0));
  if (!hc) return quiet("");
  open = false;
  if (cmp < 0) return quiet("the loop condition");
  // ^body(i, ts...) -> (i + step, ts'...)
  PyRef bodyIds = hostCall("begin_region", Py_BuildValue("(sN)", "body", specs()));
  if (!bodyIds) return quiet("");
  open = true;
  std::vector<int> bin;
  if (!bindLoopCarried(f, carried, bodyIds.get(), bin)) return quiet("");
  auto index = makeVar(Var::Kind::SymScalar, firstObj);
  index->vid = bin[0];
  index->name = "loop index";
  std::vector<VarRef> entry = f.slots;
  f.push(index);
  ArmEnd e;
  if (!runArm(f, bodyIp, [&](size_t ip) { return ip <= headIp || ip >= backIp; }, e) || failed()) return quiet("");
  if (e.returned) return quiet("a return inside the loop");
  if (e.ip != backIp && e.ip != headIp) return quiet("a break out of the loop");
  if (f.stack.size() != pre.stack.size()) return quiet("the loop body changes the stack");
  for (size_t i = 0; i < f.stack.size(); ++i)
    if (f.stack[i] != pre.stack[i]) return quiet("the loop body changes the stack");
  std::vector<int> out;
  PyRef stepObj = PyRef::steal(PyLong_FromLong(step));
  int stepId = host_.scalarConst(stepObj.get(), "i64");
  int next = stepId < 0 ? -1 : host_.arith("arith.add", {bin[0], stepId}, "i64");
  if (next < 0) return quiet("the index update");
  out.push_back(next);
  std::vector<bool> isCarried(f.slots.size(), false);
  isCarried[target] = true;
  for (size_t k = 0; k < carried.size(); ++k) {
    size_t i = carried[k];
    isCarried[i] = true;
    const VarRef& v = f.slots[i];
    if (!v || !v->is(Var::Kind::Tensor) || v->isNumpy()) return quiet("a loop-carried tensor becomes another kind of value");
    PyRef r = hostCall("carried", Py_BuildValue("(OO)", entry[i]->obj.get(), v->obj.get()));
    if (!r) return quiet("");
    if (PyUnicode_Check(r.get())) return quiet(pyText(r.get()));
    out.push_back(static_cast<int>(PyLong_AsLong(r.get())));
  }
  std::vector<size_t> fresh;  // locals first bound in the body
  for (size_t i = 0; i < f.slots.size(); ++i) {
    if (isCarried[i] || f.slots[i] == pre.slots[i]) continue;
    if (!pre.slots[i]) {
      fresh.push_back(i);
      continue;
    }
    const VarRef& a = pre.slots[i];
    const VarRef& b = f.slots[i];
    bool same = a->is(Var::Kind::Const) && b->is(Var::Kind::Const) && Py_TYPE(a->obj.get()) == Py_TYPE(b->obj.get()) &&
                PyObject_RichCompareBool(a->obj.get(), b->obj.get(), Py_EQ) == 1;
    if (PyErr_Occurred()) PyErr_Clear();
    if (!same) return quiet("the loop body changes a Python value (a local that is not a tensor)");
  }
  // A local first bound in the body stays unbound after the loop here: only
  // when the code after the loop never reads it.
  for (size_t k = exitIp; k < instrs.size(); ++k)
    if ((opcodeInfo(instrs[k].op).flags & kArgLocal) && instrs[k].op != Op::STORE_FAST &&
        std::find(fresh.begin(), fresh.end(), static_cast<size_t>(instrs[k].arg)) != fresh.end())
      return quiet("a local first bound in the loop body is used after it");
  PyRef hb;
  if (auto why = endLoopBody(pre, hb)) return quiet(*why);
  open = false;
  f.line = line;
  f.offset = offset;
  PyRef res = hostCall("add_loop", Py_BuildValue("(NOOiNOi)", idList(init), hc.get(), hb.get(), cmp, idList(out),
                                                 f.code->co_filename, line));
  if (!res) return quiet("");
  if (PyUnicode_Check(res.get())) return quiet(pyText(res.get()));
  restore(f, pre);
  if (failed()) return -1;
  for (size_t k = 0; k < carried.size(); ++k) {
    long id = PyLong_AsLong(PyList_GET_ITEM(res.get(), static_cast<Py_ssize_t>(k + 1)));
    const VarRef& v = f.slots[carried[k]];
    PyRef meta = hostCall("bind_fresh", Py_BuildValue("(Ol)", v->obj.get(), id));
    if (!meta) return -1;
    auto nv = std::make_shared<Var>(*v);
    nv->source = nullptr;
    nv->obj = meta;
    f.slots[carried[k]] = nv;
  }
  f.slots[target] = it->items.back();
  f.pop();  // the iterator
  f.ip = afterIp;
  return 1;
}

}  // namespace xacc::capture::translate
