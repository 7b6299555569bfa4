// Loops captured as one ctrl.loop region: `while <tensor>:` and
// `for i in range(n)` past the unroll bound (Note [While shapes]); the state
// they share with ctrl.if is in ControlRegions.h.
#include <algorithm>

#include "BytecodeFacts.h"
#include "ControlRegions.h"
#include "PyTypes.h"

namespace xacc::capture::translate {

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

// `while <tensor>: body` (a forward jump to the exit, the body, the condition
// again and the bottom at `backIp`: Note [While shapes]) as one ctrl.loop. The
// carried values are the condition (as a bool) and every tensor local; the
// body is traced once, from parameters standing for them, up to the backward
// jump, whose condition the body region yields with the new tensors. Python
// state must not change in the body (the trip count is unknown): locals that
// are not tensors stay the same trackers, containers keep their contents,
// tensors keep their metadata; locals first bound in the body are unbound
// after the loop. In-place ops in the body are not captured yet.
//
// Note [Loop-carried numbers]: a Python int local the body stores to (a
// counter, `n += 1`) is carried too, as an i64 value: in the body it is a
// SymScalar named "loop carried" standing for the region parameter, so Python
// arithmetic on it records `arith.*` nodes, and after the loop it is the
// loop's result. Its value is not known while tracing (the trip count is
// data-dependent), so any use of it as a plain Python number (a branch, an
// index, range()) fails (concrete(), TranslateScalars.cpp) and the loop is a
// break as before. It must stay an int through the body (a float gives up).
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
  // The int locals the body stores to (Note [Loop-carried numbers]).
  std::vector<bool> storedInBody(nlocals, false);
  for (size_t k = bodyIp; k < exitIp; ++k) {
    const Instr& ins = f.bc->instrs()[k];
    if (ins.op == Op::STORE_FAST && static_cast<size_t>(ins.arg) < nlocals) storedInBody[static_cast<size_t>(ins.arg)] = true;
  }
  std::vector<size_t> numbers;
  for (size_t i = 0; i < nlocals && i < f.slots.size(); ++i) {
    const VarRef& v = f.slots[i];
    if (!v || !storedInBody[i] || !(v->is(Var::Kind::Const) || v->is(Var::Kind::SymScalar)) ||
        !PyLong_CheckExact(v->obj.get()))
      continue;
    int vid = v->is(Var::Kind::Const) ? host_.scalarConst(v->obj.get(), "i64") : scalarVid(v);
    if (vid < 0) return giveUp("a loop-carried number as a graph value");
    numbers.push_back(i);
    init.push_back(vid);
  }
  const size_t nTensors = carried.size();
  auto idList = [](const std::vector<int>& ids, size_t from = 0) {
    PyObject* l = PyList_New(0);
    for (size_t k = from; k < ids.size(); ++k) PyList_Append(l, PyRef::steal(PyLong_FromLong(ids[k])).get());
    return l;
  };
  // ^cond(c, ts...) -> c
  PyObject* specs = PyList_New(0);
  PyList_Append(specs, PyRef::steal(PyUnicode_FromString("bool")).get());
  for (size_t k = 1; k <= nTensors; ++k) PyList_Append(specs, PyRef::steal(PyLong_FromLong(init[k])).get());
  for (size_t k = 0; k < numbers.size(); ++k) PyList_Append(specs, PyRef::steal(PyUnicode_FromString("i64")).get());
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
  for (size_t k = 0; k < numbers.size(); ++k) {
    auto n = makeVar(Var::Kind::SymScalar, f.slots[numbers[k]]->obj);
    n->vid = bin[1 + nTensors + k];
    n->name = "loop carried";
    f.slots[numbers[k]] = n;
  }
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
  for (size_t i : numbers) {
    isCarried[i] = true;
    const VarRef& v = f.slots[i];
    if (!v || !(v->is(Var::Kind::Const) || v->is(Var::Kind::SymScalar)) || !PyLong_CheckExact(v->obj.get()))
      return giveUp("a loop-carried int becomes another kind of value");
    int id = v->is(Var::Kind::Const) ? host_.scalarConst(v->obj.get(), "i64") : scalarVid(v);
    if (id < 0) return giveUp("a loop-carried number as a graph value");
    out.push_back(id);
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
  for (size_t k = 0; k < numbers.size(); ++k) {
    auto n = makeVar(Var::Kind::SymScalar, f.slots[numbers[k]]->obj);  // its type; the value is the loop's
    n->vid = static_cast<int>(PyLong_AsLong(PyList_GET_ITEM(res.get(), static_cast<Py_ssize_t>(1 + nTensors + k))));
    n->name = "loop carried";
    f.slots[numbers[k]] = n;
  }
  f.ip = exitIp;
  return true;
}


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
