// Exceptions raised and caught by traced code (Note [Traced exceptions]): the
// Exception tracker, `raise`, the 3.11 exception-table jump to a handler and
// the handler's opcodes (PUSH_EXC_INFO, CHECK_EXC_MATCH, POP_EXCEPT, RERAISE).
// Invariant: an exception is caught only where the translator knows exactly
// what eager Python raises and that the handler is the one CPython would run;
// anything else stays the failure it was (a graph break).
#include "Translator.h"

#include "PyTypes.h"

namespace xacc::capture::translate {

// Note [Traced exceptions]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A `try` in 3.11 bytecode is no instruction: co_exceptiontable maps ranges of
// offsets to a handler, the stack depth to unwind to, and whether the raising
// instruction's offset is pushed (Bytecode::handlerAt). The translator models
// a raise as a failure that carries the exception eager raises (Failure::exc):
// `raise E(args)` of a plain exception class (BaseException's own __new__ and
// __init__, so making it again from its args gives the same object but for
// its traceback), or a modelled operation that raises (a missing dict key, a
// list index out of range, an operator on constants). runFrame then asks
// catchException: when the failing instruction of this frame is covered by a
// handler, the stack is unwound as CPython unwinds it, the exception pushed,
// and translation goes on at the handler, whose opcodes are modelled below:
// CHECK_EXC_MATCH answers from the classes (constants at trace time), RERAISE
// raises the same tracker again (another handler may catch it). An exception
// leaves an inlined frame for its caller's handlers only when that frame is
// user code inlined by inlineCode (Frame::passesExceptions) and the grad mode
// is what it was before the call: C++ wrappers around other inlined calls (a
// grad-mode decorator) do not undo their state on failure. A lazily run
// generator (Note [Lazy generators]) catches in its own frame like any frame
// (Sequence.__iter__ ends on the IndexError of self[i]); an exception leaving
// it is not passed on (it would reach whichever frame resumes it). Nothing is
// caught inside a captured tensor branch or loop body, or by a `with` block's
// handler (WITH_EXCEPT_START is not modelled).
//
// An exception that leaves the captured frame itself (no handler in it) ends
// the frame as eager ends it: GB027, a split at the raising instruction that
// is not counted as a break. The graph runs the code before it and Python
// runs the instruction, which raises the same exception (a fresh
// `cls(*args)` for a `raise`: the tracker of an exception not yet raised is
// rebuilt that way; one raised before carries a traceback and is never
// rebuilt). The exception's traceback then points at the user's line.
// Not modelled (breaks as before): a bare `raise` and `raise ... from ...`,
// reading an exception's attributes, exception classes with their own
// __init__/__new__ (StopIteration, OSError, AttributeError, user classes
// defining __init__), and exceptions raised by calls the translator does not
// run itself.

namespace {

/// Whether instances of `cls` are made by BaseException's own __new__ and
/// __init__ (ValueError, KeyError, `class MyError(Exception): pass`): making
/// one runs no user code, and `cls(*args)` made again is the same exception.
bool plainExceptionClass(PyObject* cls) {
  if (!cls || !PyType_Check(cls)) return false;
  auto* tp = reinterpret_cast<PyTypeObject*>(cls);
  auto* base = reinterpret_cast<PyTypeObject*>(PyExc_BaseException);
  return PyType_IsSubtype(tp, base) && tp->tp_init == base->tp_init && tp->tp_new == base->tp_new;
}

std::string className(PyObject* cls) { return reinterpret_cast<PyTypeObject*>(cls)->tp_name; }

/// The classes an `except` clause names (a class or a tuple of them), or false.
bool matchClasses(const VarRef& v, std::vector<PyObject*>& out) {
  if (v->is(Var::Kind::Tuple)) {
    for (const VarRef& i : v->items)
      if (!matchClasses(i, out)) return false;
    return true;
  }
  if (!(v->is(Var::Kind::Object) || v->is(Var::Kind::Const)) || !v->obj || !PyType_Check(v->obj.get())) return false;
  if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(v->obj.get()),
                        reinterpret_cast<PyTypeObject*>(PyExc_BaseException)))
    return false;
  out.push_back(v->obj.get());
  return true;
}

}  // namespace

bool Translator::raiseException(const VarRef& exc, const std::string& detail) {
  if (failed()) return false;  // the first failure wins: this one never happened
  fail(GB::RaisesException, detail);
  if (branchDepth_ > 0 || !current_) return false;  // see the Note: never inside a captured region
  failure_.exc = exc;
  failure_.excFrame = current_;
  failure_.excOffset = current_->offset;
  return false;
}

bool Translator::raiseNew(PyObject* cls, std::vector<PyRef> args, const std::string& detail) {
  if (!plainExceptionClass(cls)) return fail(GB::RaisesException, detail);
  auto e = makeVar(Var::Kind::Exception, PyRef::borrow(cls));
  e->self = makeVar(Var::Kind::Object, PyRef::borrow(cls));
  for (PyRef& a : args) e->items.push_back(makeConst(std::move(a)));
  return raiseException(e, detail);
}

bool Translator::failPyRaise(const std::string& what) {
  PyObject *et, *ev, *etb;
  PyErr_Fetch(&et, &ev, &etb);
  PyErr_NormalizeException(&et, &ev, &etb);
  PyRef type = PyRef::steal(et), value = PyRef::steal(ev), tb = PyRef::steal(etb);
  std::vector<PyRef> args;
  bool plain = type && value && plainExceptionClass(type.get());
  if (plain) {
    PyRef a = PyRef::steal(PyObject_GetAttrString(value.get(), "args"));
    plain = a && PyTuple_CheckExact(a.get());
    for (Py_ssize_t i = 0; plain && i < PyTuple_GET_SIZE(a.get()); ++i) {
      PyObject* item = PyTuple_GET_ITEM(a.get(), i);
      // The args become constants: immutable values only.
      plain = item == Py_None || PyLong_CheckExact(item) || PyFloat_CheckExact(item) || PyUnicode_CheckExact(item) ||
              PyBool_Check(item);
      if (plain) args.push_back(PyRef::borrow(item));
    }
  }
  if (PyErr_Occurred()) PyErr_Clear();
  std::string msg = what;
  if (type) {
    msg += ": " + className(type.get());
    PyRef s = value ? PyRef::steal(PyObject_Str(value.get())) : PyRef();
    if (s && PyUnicode_Check(s.get())) {
      std::string text = PyUnicode_AsUTF8(s.get());
      if (!text.empty()) msg += ": " + text.substr(0, text.find('\n'));
    }
    PyErr_Clear();
  }
  if (!plain) return fail(GB::RaisesException, msg);
  return raiseNew(type.get(), std::move(args), msg);
}

VarRef Translator::newException(const VarRef& cls, std::vector<VarRef>& args,
                                std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  PyObject* c = cls->obj.get();
  if (!plainExceptionClass(c)) {
    fail(GB::UntraceableCall, className(c) + "(...): an exception class with its own __init__ or __new__");
    return nullptr;
  }
  if (!kwargs.empty()) {  // BaseException.__init__ raises TypeError: left to Python
    fail(GB::UntraceableCall, className(c) + "(...) with keyword arguments");
    return nullptr;
  }
  for (const VarRef& a : args)
    if (!(a->is(Var::Kind::Const) || a->is(Var::Kind::SymScalar) || a->is(Var::Kind::Tensor))) {
      // Containers and objects would be shared with the code that made them:
      // the exception made again at a split would not hold the same objects.
      fail(GB::UntraceableCall, className(c) + "(...) with an argument that is not a number, string or tensor");
      return nullptr;
    }
  auto e = makeVar(Var::Kind::Exception, PyRef::borrow(c));
  e->self = cls;
  e->items = args;
  return e;
}

bool Translator::catchException(Frame& f, const Instr& ins) {
  if (failure_.excFrame != &f || failure_.excOffset != ins.offset) return false;
  Bytecode::Handler h;
  const auto& instrs = f.bc->instrs();
  bool caught = f.bc->handlerAt(ins.offset, h);
  if (caught) {
    // A `with` block's handler calls __exit__ (WITH_EXCEPT_START): not modelled.
    int hi = f.bc->indexOf(h.target);
    caught = hi >= 0 && static_cast<size_t>(hi) + 1 < instrs.size() &&
             !(instrs[static_cast<size_t>(hi)].op == Op::PUSH_EXC_INFO &&
               instrs[static_cast<size_t>(hi) + 1].op == Op::WITH_EXCEPT_START) &&
             f.stack.size() >= static_cast<size_t>(h.depth);
  }
  if (caught) {
    VarRef exc = failure_.exc;
    failure_ = Failure{};
    f.stack.resize(static_cast<size_t>(h.depth));
    if (h.lasti) f.push(makeConst(PyRef::steal(PyLong_FromLong(ins.offset / 2))));
    f.push(std::move(exc));
    f.ip = static_cast<size_t>(f.bc->indexOf(h.target));
    return true;
  }
  if (&f == top_) {
    // Note [Traced exceptions]: the exception leaves the captured frame. Outside
    // any try range the frame ends there as in eager (GB027, not a break); inside
    // one (a handler that does not match, a `with`) it stays the break it is.
    // A RERAISE is no such end: Python, resuming there, would need the exception
    // as raised before (its traceback), which is not rebuilt.
    if (!f.bc->inTry(ins.offset) && ins.op != Op::RERAISE) failure_.code = gbCode(GB::ExceptionEscapes);
    failure_.exc = nullptr;
    return false;
  }
  if (f.passesExceptions && f.parent) {
    failure_.excFrame = f.parent;
    failure_.excOffset = f.parent->offset;
  } else {
    failure_.exc = nullptr;
  }
  return false;
}

bool Frame::stepExceptions(const Instr& ins, bool& done, VarRef& result) {
  (void)done;
  (void)result;
  switch (ins.op) {
    case Op::RAISE_VARARGS: {
      if (ins.arg != 1) return t.fail(GB::RaiseStatement, ins.arg == 0 ? "bare raise" : "raise ... from ...");
      if (!need(ins, 1)) return false;
      VarRef e = pop();
      if (!e->is(Var::Kind::Exception)) {
        if (!(e->is(Var::Kind::Object) || e->is(Var::Kind::Const)) || !e->obj || !plainExceptionClass(e->obj.get()))
          return t.fail(GB::RaiseStatement, "raise of a value that is no exception the translator models");
        std::vector<VarRef> none;
        std::vector<std::pair<PyRef, VarRef>> noKw;
        e = t.newException(e, none, noKw);  // `raise KeyError`: the class called with no arguments
        if (!e) return false;
      }
      std::string what = "raise " + className(e->obj.get());
      if (!e->items.empty() && e->items[0]->is(Var::Kind::Const) && PyUnicode_Check(e->items[0]->obj.get())) {
        const char* msg = PyUnicode_AsUTF8(e->items[0]->obj.get());  // the message, as Python shows it
        if (msg) what += ": " + std::string(msg).substr(0, 160);
        else PyErr_Clear();
      }
      e->pos = 1;
      return t.raiseException(e, what);
    }
    case Op::PUSH_EXC_INFO: {
      // The exception being handled before (sys.exc_info()) is not modelled: a
      // placeholder, popped again by POP_EXCEPT. Code that reads it breaks.
      if (!need(ins, 1)) return false;
      VarRef e = pop();
      push(makeConst(PyRef::borrow(Py_None)));
      push(std::move(e));
      return true;
    }
    case Op::CHECK_EXC_MATCH: {
      if (!need(ins, 2)) return false;
      VarRef match = pop();
      const VarRef& e = stack.back();
      std::vector<PyObject*> classes;
      if (!e->is(Var::Kind::Exception) || !matchClasses(match, classes))
        return t.fail(GB::UnsupportedType, "except clause on a class the translator does not know");
      bool hit = false;
      for (PyObject* c : classes)
        hit = hit || PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(e->obj.get()), reinterpret_cast<PyTypeObject*>(c));
      push(makeConst(PyRef::borrow(hit ? Py_True : Py_False)));
      return true;
    }
    case Op::POP_EXCEPT:
      if (!need(ins, 1)) return false;
      pop();
      return true;
    case Op::RERAISE: {
      if (!need(ins, 1)) return false;
      VarRef e = pop();
      if (!e->is(Var::Kind::Exception)) return t.fail(GB::RaiseStatement, "re-raise of an exception not modelled");
      return t.raiseException(e, "raise " + className(e->obj.get()) + " (again)");
    }
    default:
      return misrouted(ins);
  }
}

}  // namespace xacc::capture::translate
