"""NumPy capture: NumPy calls inside a captured frame recorded as ATen ops.

An ndarray in a captured frame is a tensor that shares the array's memory
(inputs enter through a zero-copy `torch.from_numpy`, see Guards.cpp's
`Access::AsTensor`) with a "numpy" flag on its tracker (Value.h). Every NumPy
operation on such values goes through `run` below, called by the C++
translator through the host's recorder, so what it dispatches on meta tensors
becomes ATen nodes of the same graph as the surrounding torch code.

The semantics come from `torch._numpy` (NumPy's API over torch tensors: NumPy's
dtype promotion with float64/int64 defaults, `axis`/`keepdims`/`ddof`, views
for slicing and transposes). Two rules keep the capture from ever returning
something NumPy would not:
  * only the names in the tables below are captured; anything else (np.random
    with its global state, I/O, object dtypes, ...) is a graph break GB021
    (a single draw on constants is made at run time instead: Note [Global RNG
    draws at run time] in TranslateDraws.cpp);
  * every call is also run by NumPy itself on stand-in arrays of the same
    dtypes and shapes (zero-stride views, so no memory is touched): the result
    dtypes and shapes must agree, else it is a break. That run also tells
    whether NumPy returns a scalar (`np.float64`) or an array for a 0-d result.
True division of integers is cast to float64 first, as NumPy's loop does (torch
would divide in its default float32).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import torch

from xacc._src.capture.breaks import GraphBreak

# Captured `numpy.*` callables, by public name (ufuncs and functions).
FUNCTIONS = frozenset("""
add subtract multiply divide true_divide floor_divide power float_power mod remainder fmod negative positive
abs absolute exp exp2 expm1 log log2 log10 log1p sqrt square sin cos tan arcsin arccos arctan arctan2
sinh cosh tanh arcsinh arccosh arctanh hypot maximum minimum fmax fmin greater greater_equal less less_equal
equal not_equal logical_and logical_or logical_not logical_xor floor ceil trunc rint sign signbit isnan isinf
isfinite clip where deg2rad rad2deg sum mean max min amax amin argmax argmin prod std var any all cumsum
cumprod matmul dot vdot inner outer tensordot einsum transpose reshape ravel squeeze expand_dims concatenate
stack vstack hstack swapaxes moveaxis flip broadcast_to round around copy zeros ones zeros_like
ones_like arange linspace eye array asarray tril triu trace diag sort count_nonzero meshgrid
""".split())
# Captured functions of NumPy's submodules, by module (a function giving a
# complex array, such as fft.fft, breaks on its dtype like any other).
SUBMODULES = {
    "numpy.linalg": frozenset("norm det".split()),
    "numpy.fft": frozenset("fftshift ifftshift".split()),
}
# Functions whose Python-number operands take the dtype of NumPy's result
# (the values they return are copies of their operands, so a scalar converted
# to the result's dtype is what NumPy returns; torch._numpy would use torch's
# default float32 for it).
SCALARS_AS_RESULT = frozenset("where".split())
# ndarray methods captured (the attribute names of `a.<name>(...)`).
METHODS = frozenset("""
sum mean max min argmax argmin prod std var any all cumsum cumprod reshape transpose astype copy flatten
ravel squeeze clip round dot swapaxes fill
""".split())
# ndarray attributes that are operations (shape, ndim, size, dtype, itemsize
# and nbytes are read from the tracker as constants by the translator).
ATTRS = frozenset("T real imag".split())
# dtypes an ndarray may have in a captured frame (their promotion rules agree
# between NumPy and torch._numpy; uint8 and float16 do not, for reductions).
DTYPES = {np.dtype(n): getattr(torch, n) for n in ("bool", "int32", "int64", "float32", "float64")}
_TO_NP = {t: d for d, t in DTYPES.items()}
_TRUEDIV = (operator.truediv, operator.itruediv, np.divide, np.true_divide)
_INPLACE = {operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
            operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor, operator.setitem}

_tnp = None


def _lib() -> Any:
    global _tnp
    if _tnp is None:
        import torch._numpy as tnp
        from torch._numpy import _dtypes_impl

        # NumPy's defaults (float64, int64), set here: torch._numpy would read
        # them from torch._dynamo.config, importing all of Dynamo (seconds).
        if _dtypes_impl._default_dtypes is None:
            _dtypes_impl._default_dtypes = _dtypes_impl.DefaultDTypes(
                float_dtype=torch.float64, complex_dtype=torch.complex128, int_dtype=torch.int64)
        _tnp = tnp
    return _tnp


def _name(kind: str, target: Any) -> str:
    if kind in ("method", "attr"):
        return f"ndarray.{target}"
    if kind == "op":
        return f"operator.{target.__name__}"
    return f"numpy.{getattr(target, '__name__', target)}"


def supported(fn: Any) -> str:
    """'' when `fn` is a captured NumPy callable, else the reason it is not."""
    name = getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else "")
    if module.startswith("numpy.random"):
        return f"numpy.random.{name} uses NumPy's global random state"
    sub = SUBMODULES.get(module)
    if sub is not None and name in sub and getattr(getattr(np, module[6:], None), name, None) is fn:
        return ""
    if name in FUNCTIONS and getattr(np, name, None) is fn:
        return ""
    return f"numpy function {module}.{name} is not captured"


def _tnp_fn(fn: Any) -> Any:
    tnp = _lib()
    module = getattr(fn, "__module__", "")
    if module in SUBMODULES:
        return getattr(getattr(tnp, module[6:]), fn.__name__)
    name = {"round": "round", "around": "around"}.get(fn.__name__, fn.__name__)
    return getattr(tnp, name)


def _is_dtype_like(v: Any) -> bool:
    return isinstance(v, np.dtype) or (isinstance(v, type) and (issubclass(v, np.generic) or v in (bool, int, float)))


def _np_dtype(v: Any) -> np.dtype:
    d = np.dtype(v)
    if d not in DTYPES:
        raise GraphBreak("GB021", f"dtype {d} is not captured")
    return d


def _to_tnp(v: Any) -> Any:
    tnp = _lib()
    if isinstance(v, torch.Tensor):
        return tnp.ndarray(v)
    if _is_dtype_like(v):
        return tnp.dtype(_np_dtype(v).name)
    if isinstance(v, np.generic):
        return tnp.asarray(torch.tensor(v.item(), dtype=DTYPES[_np_dtype(v.dtype)]))
    if isinstance(v, (list, tuple)) and type(v) in (list, tuple):
        return type(v)(_to_tnp(e) for e in v)
    if type(v) is dict:
        return {k: _to_tnp(e) for k, e in v.items()}
    if isinstance(v, slice):
        return slice(_to_tnp(v.start), _to_tnp(v.stop), _to_tnp(v.step))
    if v is None or isinstance(v, (bool, int, float, str, type(Ellipsis))):
        return v
    raise GraphBreak("GB021", f"argument of type {type(v).__name__} to a NumPy operation")


def _stand_in(v: Any, writable: bool) -> Any:
    """What NumPy runs on for the reference: same dtype and shape, no data."""
    if isinstance(v, torch.Tensor):
        d = _TO_NP.get(v.dtype)
        if d is None:
            raise GraphBreak("GB021", f"dtype {v.dtype} in a NumPy operation")
        if writable:
            return np.zeros(tuple(v.shape), d)
        return np.broadcast_to(np.zeros((), d), tuple(v.shape))
    if isinstance(v, (list, tuple)) and type(v) in (list, tuple):
        return type(v)(_stand_in(e, writable) for e in v)
    if type(v) is dict:
        return {k: _stand_in(e, writable) for k, e in v.items()}
    if isinstance(v, slice):
        return slice(_stand_in(v.start, writable), _stand_in(v.stop, writable), _stand_in(v.step, writable))
    return v


def _from_tnp(v: Any, out: list) -> Any:
    tnp = _lib()
    if isinstance(v, tnp.ndarray):
        out.append(v.tensor)
        return v.tensor
    if isinstance(v, (list, tuple)):
        return type(v)(_from_tnp(e, out) for e in v) if type(v) in (list, tuple) else tuple(
            _from_tnp(e, out) for e in v)
    if v is None or isinstance(v, (bool, int, float)):
        return v
    raise GraphBreak("GB021", f"a NumPy operation returned a {type(v).__name__}")


def _shaped_like(v: Any, ref: Any) -> Any:
    """`v` with the sequence types of NumPy's result `ref` (torch._numpy's
    meshgrid gives a list where NumPy 2 gives a tuple)."""
    if type(v) in (list, tuple) and type(ref) in (list, tuple) and len(v) == len(ref):
        return type(ref)(_shaped_like(e, r) for e, r in zip(v, ref))
    return v


def _flat_ref(v: Any, out: list) -> None:
    if isinstance(v, (np.ndarray, np.generic)):
        out.append(v)
    elif isinstance(v, (list, tuple)):
        for e in v:
            _flat_ref(e, out)


def _call(kind: str, target: Any, args: tuple, kwargs: dict, numpy: bool = False) -> Any:
    if kind == "fn":
        return (target if numpy else _tnp_fn(target))(*args, **kwargs)
    if kind == "method":
        return getattr(args[0], target)(*args[1:], **kwargs)
    if kind == "attr":
        return getattr(args[0], target)
    return target(*args, **kwargs)


def run(kind: str, target: Any, args: tuple, kwargs: dict) -> tuple:
    """One NumPy operation on meta tensors (called under the recorder's
    dispatch mode). kind: "fn" (a numpy callable), "method" (`target` is the
    name, args[0] the array), "attr" (likewise, a property), "op" (an
    `operator` function). Returns (result with meta tensors, kinds): `kinds`
    has one entry per tensor of the result, in order, 1 for an ndarray and 2
    for a NumPy scalar."""
    name = _name(kind, target)
    if kind in ("method", "attr") and target not in (METHODS if kind == "method" else ATTRS):
        raise GraphBreak("GB021", f"{name} is not captured")
    if kind == "fn":
        why = supported(target)
        if why:
            raise GraphBreak("GB021", why)
    inplace = kind == "op" and target in _INPLACE or kind == "method" and target == "fill"
    # NumPy's own answer on stand-ins: result dtypes, shapes, scalar or array.
    try:
        with np.errstate(all="ignore"):
            ref = _call(kind, target, _stand_in(args, inplace), _stand_in(kwargs, inplace), numpy=True)
    except Exception as e:  # eager NumPy raises too (or the call is unsupported)
        raise GraphBreak("GB021", f"{name} raises in NumPy: {type(e).__name__}: {e}") from None
    if kind == "fn" and target.__name__ in ("array", "asarray") and not any(
            isinstance(a, torch.Tensor) for a in args):
        raise GraphBreak("GB021", f"{name} of Python data (builds a constant the graph cannot share)")
    targs, tkwargs = _to_tnp(args), _to_tnp(kwargs)
    if kind in ("fn", "op") and target in _TRUEDIV:
        targs = tuple(_as_float64(a) for a in targs)
    if kind == "fn" and target.__name__ in SCALARS_AS_RESULT and isinstance(ref, np.ndarray):
        targs = tuple(_scalar_as(a, ref.dtype) for a in targs)
    try:
        res = _call(kind, target, targs, tkwargs)
    except GraphBreak:
        raise
    except Exception as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        if "data-dependent" in msg or "meta" in msg.lower():
            raise GraphBreak("GB005", f"{name}: {msg}") from None
        raise GraphBreak("GB021", f"{name}: {type(e).__name__}: {msg}") from None
    tensors: list = []
    if inplace:
        value = None if kind != "op" or target is operator.setitem else _from_tnp(res, tensors)
    else:
        value = _from_tnp(res, tensors)
    value = _shaped_like(value, ref)
    refs: list = []
    if not (inplace and (target is operator.setitem or kind == "method")):
        _flat_ref(ref, refs)
    if len(refs) != len(tensors):
        raise GraphBreak("GB021", f"{name}: results differ in structure from NumPy's")
    kinds = []
    for t, r in zip(tensors, refs):
        if _TO_NP.get(t.dtype) != r.dtype or tuple(t.shape) != r.shape:
            raise GraphBreak("GB021", f"{name}: NumPy gives {r.dtype}{list(r.shape)}, the lowering "
                                      f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}")
        kinds.append(2 if isinstance(r, np.generic) else 1)
    return value, kinds


def _scalar_as(v: Any, dtype: np.dtype) -> Any:
    """A Python number operand as a 0-d array of NumPy's result dtype."""
    if type(v) in (bool, int, float) and dtype in DTYPES:
        return _lib().asarray(torch.tensor(v, dtype=DTYPES[dtype]))
    return v


def _as_float64(v: Any) -> Any:
    """True division's operands, cast as NumPy's `dd->d` loop does when no
    operand is a float array."""
    tnp = _lib()
    if isinstance(v, tnp.ndarray) and not v.tensor.dtype.is_floating_point:
        return tnp.ndarray(v.tensor.to(torch.float64))
    return v


def check_dtype(v: Any) -> None:
    """Breaks unless `v`'s dtype (an ndarray's or a tensor's) is one an ndarray
    may have in the graph."""
    if isinstance(v, np.ndarray):
        if v.dtype not in DTYPES:
            raise GraphBreak("GB021", f"ndarray of dtype {v.dtype} is not captured")
    elif v.dtype not in _TO_NP:
        raise GraphBreak("GB021", f"ndarray of dtype {str(v.dtype).removeprefix('torch.')} is not captured")


def np_dtype(t: torch.Tensor) -> np.dtype:
    """The NumPy dtype of a captured ndarray (its `.dtype`)."""
    return _TO_NP[t.dtype]


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A graph output flagged ndarray, as the user sees it (zero-copy)."""
    return t.detach().numpy()


def to_numpy_scalar(t: torch.Tensor) -> Any:
    """A graph output flagged NumPy scalar (`np.float64`, ...)."""
    return t.detach().numpy()[()]
