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
#include <unordered_map>

#include "BytecodeFacts.h"
#include "ControlRegions.h"
#include "PyTypes.h"

namespace xacc::capture::translate {

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

void appendIds(PyObject* list, std::vector<int>& out) {
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(list); ++k)
    out.push_back(static_cast<int>(PyLong_AsLong(PyList_GET_ITEM(list, k))));
}

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

// `t.item()` tested right away (`if t.item() > c:`, `while t.item() < c:`,
// `if t.item():`): the Python number never exists at capture time; the
// comparison runs on the tensor, in float64 (or int64 for an integer tensor
// compared with an int), which is exact for what Python compares, and the
// jump becomes a ctrl.if/ctrl.loop on it. Any other use of `.item()` stays a
// GB005 break.
PyRef Translator::knownValue(const VarRef& t, const char* conv) {
  if (!t || !t->is(Var::Kind::Tensor) || t->isNumpy()) return {};
  PyObject* args = Py_BuildValue("(Os)", t->obj.get(), conv);
  if (!args) {
    PyErr_Clear();
    return {};
  }
  std::string code, detail;
  PyRef r = host_.call("known_value", args, code, detail);
  Py_DECREF(args);
  if (!r || r.get() == Py_None) return {};
  return r;
}

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
  if (!noFunctionMode("a comparison of Tensor.item()")) return nullptr;
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
