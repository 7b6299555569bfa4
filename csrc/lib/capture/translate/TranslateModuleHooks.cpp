// Note [Module hooks]: nn.Module.__call__ (`_call_impl` in torch/nn/modules/module.py)
// runs, around `self.forward(*args, **kwargs)`:
//   - the forward pre-hooks, torch's global ones then the module's, each dict
//     in its own (OrderedDict) order: `hook(module, args)`, whose result, when
//     not None, replaces args (a value that is not a tuple becomes a 1-tuple);
//     or, for ids in `_forward_pre_hooks_with_kwargs`, `hook(module, args,
//     kwargs)`, whose result, when not None, must be a 2-tuple (args, kwargs);
//   - the forward hooks, global then own: `hook(module, args, result)`, or
//     `hook(module, args, kwargs, result)` for ids in `_forward_hooks_with_kwargs`
//     (or the global one); a result that is not None replaces the result.
// The hooks are Python functions: each is inlined like any call, in that order.
// Not modelled, so guarded empty (a module or torch with any is called
// natively, a GB012 break): backward hooks, and forward hooks registered with
// `always_call=True` (they run when forward raises, which a captured call
// never lets happen in place). What the call relied on is guarded: the keys
// of every hook dict it read, in order (a hook registered or removed later
// fails them), and each hook's identity.
#include <iterator>

#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {
const char* const kUnmodelledModuleDicts[] = {"_backward_hooks", "_backward_pre_hooks",
                                              "_forward_hooks_always_called"};
const char* const kUnmodelledGlobalDicts[] = {"_global_backward_hooks", "_global_backward_pre_hooks",
                                              "_global_forward_hooks_always_called"};

/// One hook dict read from `owner.__dict__`, with its source.
struct HookDict {
  PyRef dict;  // null: this torch has none (an empty dict)
  SourceRef source;
};

bool hasKey(const HookDict& d, PyObject* key) {
  if (!d.dict) return false;
  int in = PyDict_Contains(d.dict.get(), key);
  if (in < 0) PyErr_Clear();
  return in == 1;
}

bool isNone(const VarRef& v) { return v->is(Var::Kind::Const) && v->obj.get() == Py_None; }
}  // namespace

VarRef Translator::callModuleHooks(const VarRef& mod, std::vector<VarRef>& args,
                                   std::vector<std::pair<PyRef, VarRef>>& kwargs) {
  static PyObject* dictName = PyUnicode_InternFromString("__dict__");
  PyObject* mm = pyTypes()->moduleModule;
  int ci = mm ? host_.constIndex(mm) : -1;
  if (ci < 0) {
    fail(GB::ModuleHooks, "torch.nn.modules.module");
    return nullptr;
  }
  SourceRef globalSrc = Source::root(Access::Const, ci);
  PyObject* m = mod->obj.get();
  std::string what = Py_TYPE(m)->tp_name;
  if (!guardEmptyDicts(mm, globalSrc, kUnmodelledGlobalDicts, std::size(kUnmodelledGlobalDicts),
                       "global backward or always-called module hooks") ||
      !guardEmptyDicts(m, mod->source, kUnmodelledModuleDicts, std::size(kUnmodelledModuleDicts),
                       what + " with backward or always-called hooks"))
    return nullptr;

  // The dicts read as items of the owner's `__dict__`, their keys guarded.
  auto read = [&](PyObject* owner, const SourceRef& src, const char* name, HookDict& out) -> bool {
    PyRef ns = PyRef::steal(PyObject_GetAttr(owner, dictName));
    if (!ns || !PyDict_CheckExact(ns.get())) {
      PyErr_Clear();
      return fail(GB::ModuleHooks, what + ": hooks without a __dict__");
    }
    PyRef key = PyRef::steal(PyUnicode_InternFromString(name));
    PyObject* d = PyDict_GetItemWithError(ns.get(), key.get());  // borrowed
    if (!d) {
      PyErr_Clear();
      return true;  // a torch without this dict
    }
    if (!PyDict_Check(d)) return fail(GB::ModuleHooks, what + "." + name + " is not a dict");
    out.dict = PyRef::borrow(d);
    out.source = src ? Source::item(Source::attr(src, dictName), key.get()) : nullptr;
    if (PyDict_GET_SIZE(d) == 0)
      guardLen(out.source, 0);
    else
      guardKeys(out.source, d);
    return true;
  };
  HookDict gPre, gFwd, gFwdKw, pre, preKw, fwd, fwdKw;
  if (!read(mm, globalSrc, "_global_forward_pre_hooks", gPre) || !read(mm, globalSrc, "_global_forward_hooks", gFwd) ||
      !read(m, mod->source, "_forward_pre_hooks", pre) || !read(m, mod->source, "_forward_hooks", fwd))
    return nullptr;
  auto empty = [](const HookDict& d) { return !d.dict || PyDict_GET_SIZE(d.dict.get()) == 0; };
  if (empty(gPre) && empty(gFwd) && empty(pre) && empty(fwd)) return callForward(mod, args, kwargs);
  if (!read(mm, globalSrc, "_global_forward_hooks_with_kwargs", gFwdKw) ||
      !read(m, mod->source, "_forward_pre_hooks_with_kwargs", preKw) ||
      !read(m, mod->source, "_forward_hooks_with_kwargs", fwdKw))
    return nullptr;
  if (!mod->source && (!empty(pre) || !empty(fwd))) {
    fail(GB::ModuleHooks, what + " made while tracing, with hooks");
    return nullptr;
  }

  // (id, hook tracker) of each dict, in the order `d.items()` walks it.
  auto hooksOf = [&](const HookDict& d, std::vector<std::pair<PyRef, VarRef>>& out) -> bool {
    if (empty(d)) return true;
    PyRef items = PyRef::steal(PySequence_List(d.dict.get()));  // the keys, in the dict's order
    if (!items) return failPy(GB::ModuleHooks, what + " hook ids");
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items.get()); ++i) {
      PyObject* id = PyList_GET_ITEM(items.get(), i);
      PyRef hook = PyRef::steal(PyObject_GetItem(d.dict.get(), id));
      if (!hook) return failPy(GB::ModuleHooks, what + " hook");
      SourceRef src = Source::dictItem(d.source, id);  // the storage, as items() reads it
      guardId(src, hook.get());
      VarRef h = wrap(hook.get(), src);
      if (!h) return false;
      out.emplace_back(PyRef::borrow(id), std::move(h));
    }
    return true;
  };
  std::vector<std::pair<PyRef, VarRef>> preHooks, fwdHooks;
  if (!hooksOf(gPre, preHooks) || !hooksOf(pre, preHooks) || !hooksOf(gFwd, fwdHooks) || !hooksOf(fwd, fwdHooks))
    return nullptr;

  // args and kwargs as the hooks see them: a tuple and a dict (which a hook
  // may change in place: forward then gets it as changed).
  VarRef argsT = makeSeq(Var::Kind::Tuple, args);
  VarRef kw = makeVar(Var::Kind::Dict);
  for (auto& [k, v] : kwargs) {
    kw->keys.push_back(k);
    kw->items.push_back(v);
  }
  Frame& f = *current_;
  for (auto& [id, hook] : preHooks) {
    if (hasKey(preKw, id.get())) {
      VarRef r = call(f, hook, {mod, argsT, kw}, {});
      if (!r) return nullptr;
      if (isNone(r)) continue;
      if (!r->is(Var::Kind::Tuple) || r->items.size() != 2 || !r->items[1]->is(Var::Kind::Dict)) {
        fail(GB::ModuleHooks, what + ": a forward pre-hook's result that is not (args, kwargs)");
        return nullptr;
      }
      std::vector<VarRef> newArgs;
      if (!unpack(r->items[0], newArgs)) return nullptr;
      argsT = makeSeq(Var::Kind::Tuple, std::move(newArgs));
      kw = r->items[1];
      continue;
    }
    VarRef r = call(f, hook, {mod, argsT}, {});
    if (!r) return nullptr;
    if (isNone(r)) continue;
    if (r->is(Var::Kind::Tuple) && !r->obj) {  // a plain tuple
      argsT = r;
    } else if (r->is(Var::Kind::Tensor) || r->is(Var::Kind::List) || r->is(Var::Kind::Dict) ||
               (r->is(Var::Kind::Const) && !PyTuple_Check(r->obj.get()))) {
      argsT = makeSeq(Var::Kind::Tuple, {r});  // `(args_result,)`
    } else {
      fail(GB::ModuleHooks, what + ": a forward pre-hook's result of an unmodelled kind");
      return nullptr;
    }
  }
  std::vector<VarRef> callArgs = argsT->items;
  std::vector<std::pair<PyRef, VarRef>> callKw;
  for (size_t i = 0; i < kw->keys.size(); ++i) {
    if (!PyUnicode_Check(kw->keys[i].get())) {
      fail(GB::ModuleHooks, what + ": forward keywords that are not strings");
      return nullptr;
    }
    callKw.emplace_back(kw->keys[i], kw->items[i]);
  }
  VarRef result = callForward(mod, callArgs, callKw);
  if (!result) return nullptr;
  for (auto& [id, hook] : fwdHooks) {
    bool withKw = hasKey(fwdKw, id.get()) || hasKey(gFwdKw, id.get());
    VarRef r = withKw ? call(f, hook, {mod, argsT, kw, result}, {}) : call(f, hook, {mod, argsT, result}, {});
    if (!r) return nullptr;
    if (!isNone(r)) result = r;
  }
  return result;
}

}  // namespace xacc::capture::translate
