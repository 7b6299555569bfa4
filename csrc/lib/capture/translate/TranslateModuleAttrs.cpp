// Attribute writes on nn.Modules reached from a source (`self.name = value` in
// a forward): which ones the translator models as a write replayed after the
// graph (Note [Replayed attribute writes]), and which stay GB007. The rules
// follow nn.Module.__setattr__ (torch/nn/modules/module.py): a write is
// modelled only where that method's effect on later reads is known at capture
// time; the replay runs the real __setattr__, so its bookkeeping (the
// non-persistent buffer set, an nn.Buffer's own `persistent` flag) is eager's.
//
// Note [Buffer stored back]: `self.pos_enc = self.extend_pos_enc(x, self.pos_enc)`
// (FastSpeech2Conformer) hands the buffer back when it is long enough. Storing
// the very tensor a buffer holds goes through register_buffer, which runs
// torch's global buffer registration hooks (guarded empty: a hook could swap
// the tensor) and stores the same object again: later reads see that object,
// as the translator's recorded write says. So the write is modelled when the
// value is the buffer read from the same module under the same name (its
// source is `<module>._buffers[name]`), the object is no Parameter (which
// __setattr__ would move into `_parameters`) and the module's register_buffer
// is nn.Module's. Any other tensor stored into a buffer breaks (GB007): the
// graph holds buffers it read as inputs, and a new buffer object on every call
// would need guards this write does not give.
#include "PyTypes.h"
#include "Translator.h"

namespace xacc::capture::translate {

namespace {

/// Why storing tensor `value` as `obj.name` (nn.Module.__setattr__) is not
/// modelled, or "" when it is the buffer stored back (Note [Buffer stored back]).
std::string bufferStoreRefusal(const VarRef& obj, PyObject* name, const VarRef& value, const PyTypes* T) {
  static PyObject* buffersName = PyUnicode_InternFromString("_buffers");
  const Source* s = value->source.get();
  const Source* parent = s ? s->parent.get() : nullptr;
  bool same = s && s->access == Access::Item && s->key && PyUnicode_Check(s->key.get()) &&
              PyUnicode_Compare(s->key.get(), name) == 0 && parent && parent->access == Access::Attr &&
              parent->key && PyUnicode_Compare(parent->key.get(), buffersName) == 0 &&
              parent->parent.get() == obj->source.get();
  if (!same) return "other than the buffer it holds";
  PyObject* o = obj->obj.get();
  PyObject** dp = _PyObject_GetDictPtr(o);
  PyObject* buffers = dp && *dp ? PyDict_GetItemWithError(*dp, buffersName) : nullptr;
  PyObject* held = buffers && PyDict_Check(buffers) ? PyDict_GetItemWithError(buffers, name) : nullptr;
  if (!held) {
    PyErr_Clear();
    return "for a name that is no buffer";
  }
  for (const char* reg : {"_parameters", "_modules"}) {
    PyObject* d = PyDict_GetItemString(*dp, reg);
    if (!d || !PyDict_Check(d) || PyDict_Contains(d, name) != 0) return "for a parameter or child module";
  }
  if (PyObject_TypeCheck(held, reinterpret_cast<PyTypeObject*>(T->parameter)))
    return "that is a Parameter held as a buffer";
  static PyObject* registerName = PyUnicode_InternFromString("register_buffer");
  if (PyDict_Contains(*dp, registerName) != 0 ||
      _PyType_Lookup(Py_TYPE(o), registerName) !=
          _PyType_Lookup(reinterpret_cast<PyTypeObject*>(T->module), registerName))
    return "on a module with its own register_buffer";
  return "";
}

}  // namespace

bool Translator::moduleAttrWritable(const VarRef& obj, PyObject* name, const VarRef& value) {
  const PyTypes* T = pyTypes();
  std::string what = std::string(".") + PyUnicode_AsUTF8(name) + " = ...";
  PyObject* o = obj->obj.get();
  // nn.Module.__setattr__ stores a plain Python value (not a tensor or a
  // module) under a name that is no parameter, buffer or child in the
  // instance dict, like object.__setattr__ (swin's `self.shift_size = 0`).
  static PyObject* setattrName = PyUnicode_InternFromString("__setattr__");
  if (_PyType_Lookup(Py_TYPE(o), setattrName) !=
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(T->module), setattrName))
    return fail(GB::AttributeWrite, what);
  if (value->is(Var::Kind::Tensor)) {
    // Note [Computed tensors stored on modules]: a tensor the graph computes is
    // a plain torch.Tensor (never a Parameter, never marked `_is_buffer`, which
    // nn.Buffer's isinstance asks), so nn.Module.__setattr__ sends it, under a
    // name that is no parameter, buffer or child, to object.__setattr__, as it
    // does a number (RecurrentGemma's `self.recurrent_states = states`). A
    // tensor read from outside may be either: only the buffer stored back is
    // modelled for those.
    bool computed = !value->isNumpy() && !inputSource(value) && typeOf(value) == T->tensor;
    if (!computed) {
      std::string why = bufferStoreRefusal(obj, name, value, T);
      if (!why.empty()) return fail(GB::AttributeWrite, what + " (a tensor " + why + ")");
      return guardNoRegistrationHooks();
    }
  } else if (!value->is(Var::Kind::Const)) {
    return fail(GB::AttributeWrite, what);
  }
  PyObject* dict = PyObject_GenericGetDict(o, nullptr);
  if (!dict) {
    PyErr_Clear();
    return fail(GB::AttributeWrite, what);
  }
  bool registered = false;
  for (const char* reg : {"_parameters", "_buffers", "_modules"}) {
    PyObject* d = PyDict_GetItemString(dict, reg);
    registered = registered || !d || !PyDict_Check(d) || PyDict_Contains(d, name) != 0;
  }
  Py_DECREF(dict);
  if (registered) return fail(GB::AttributeWrite, what + " (a parameter, buffer or child module)");
  return true;
}

}  // namespace xacc::capture::translate
