"""Python reference implementations of builtins and standard-library helpers.

The translator cannot look inside a function written in C (`itertools.chain`,
`functools.reduce`, `sorted` with a `key=` ...). For each one listed here it
inlines the Python function below instead, with the arguments the program
passed, so the call stays in the graph and the translator's own model of lists,
tuples, dicts, iterators and tensors decides what happens: a data-dependent
comparison of tensors is a graph break exactly where the C function would have
made one. A newly met helper costs one function here, not translator code.

Every function has the documented semantics of its original, including the
order in which it consumes its arguments and calls `key`/`function` (which
side effects and tensor ops depend on), and its laziness: iterator-returning
helpers are generators, which the translator runs one step at a time (Note
[Lazy generators] in csrc/lib/capture/translate/Translator.h). What they do not
reproduce is the type of an iterator object (a generator here, an
`itertools.chain` there); the translator never answers `type()`/`isinstance()`
of such an iterator from this table.

`REFERENCE` maps each original to `(reference, native_on_constants)`: when
`native_on_constants` is true and every argument is a constant, the translator
calls the original itself at capture time (exact and cheaper). The originals
are looked up where the translator meets them:
  * a called function or class (`itertools.chain`, `map`, `operator.add`);
  * a method of a list, tuple or plain dict, by the descriptor on the value's
    exact type (`list.sort`, `dict.popitem`), and `del x[i]` / `x[a:b] = v` by
    `list.__delitem__` / `list.__setitem__`;
  * `("containers", op)`: the operator `op` between two lists, tuples, dicts or
    dict views, which the translator does not model itself.
A reference of None marks a pure function of constants whose result is an
immutable value (`chr`, `torch.device`, `np.finfo`): called now on constant
arguments, a graph break on anything else.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from typing import Any, Callable, Iterable, Iterator

from xacc._src.capture.polyfill_registry import _MISSING, REFERENCE, _reference  # noqa: F401 - the translator reads REFERENCE here


# -- builtins whose C versions take callables or compare values ----------------------------


def _merge_sort(items: list, keys: list, reverse: bool) -> list:
    """Stable merge sort of `items` by `keys`, comparing keys with `<` only (as
    list.sort does); `reverse` keeps equal items in their original order."""
    n = len(items)
    order = list(range(n))
    width = 1
    while width < n:
        merged = []
        for lo in range(0, n, 2 * width):
            left = order[lo:lo + width]
            right = order[lo + width:lo + 2 * width]
            i = 0
            j = 0
            while i < len(left) and j < len(right):
                a = keys[left[i]]
                b = keys[right[j]]
                # Take from the right only when it must come strictly first.
                take_right = (a < b) if reverse else (b < a)
                if take_right:
                    merged.append(right[j])
                    j += 1
                else:
                    merged.append(left[i])
                    i += 1
            merged.extend(left[i:])
            merged.extend(right[j:])
        order = merged
        width *= 2
    return [items[k] for k in order]


@_reference(sorted, native_on_constants=True)
def sorted_(iterable: Iterable, /, *, key: Callable | None = None, reverse: bool = False) -> list:
    items = list(iterable)
    keys = items if key is None else [key(x) for x in items]
    return _merge_sort(items, keys, bool(reverse))


def _extreme(name: str, greater: bool, args: tuple, key: Callable | None, default: Any) -> Any:
    if len(args) == 1:
        items = iter(args[0])
    elif len(args) == 0:
        raise TypeError(f"{name} expected at least 1 argument, got 0")
    else:
        if default is not _MISSING:
            raise TypeError(f"Cannot specify a default for {name}() with multiple positional arguments")
        items = iter(args)
    best = _MISSING
    best_key = None
    for x in items:
        k = x if key is None else key(x)
        if best is _MISSING or ((k > best_key) if greater else (k < best_key)):
            best = x
            best_key = k
    if best is _MISSING:
        if default is not _MISSING:
            return default
        raise ValueError(f"{name}() iterable argument is empty")
    return best


@_reference(min, native_on_constants=True)
def min_(*args: Any, key: Callable | None = None, default: Any = _MISSING) -> Any:
    return _extreme("min", False, args, key, default)


@_reference(max, native_on_constants=True)
def max_(*args: Any, key: Callable | None = None, default: Any = _MISSING) -> Any:
    return _extreme("max", True, args, key, default)


@_reference(any, native_on_constants=True)
def any_(iterable: Iterable, /) -> bool:
    for x in iterable:
        if x:
            return True
    return False


@_reference(all, native_on_constants=True)
def all_(iterable: Iterable, /) -> bool:
    for x in iterable:
        if not x:
            return False
    return True


@_reference(math.prod, native_on_constants=True)
def prod(iterable: Iterable, /, *, start: Any = 1) -> Any:
    # math.prod multiplies left to right from `start` with `*` (its int and
    # float fast paths give what `*` gives): symbolic sizes and tensors stay
    # symbolic, as in `x.reshape(-1, math.prod(x.shape[1:]))`.
    result = start
    for x in iterable:
        result = result * x
    return result


@_reference(dict.fromkeys, native_on_constants=True)
def dict_fromkeys(iterable: Iterable, value: Any = None, /) -> dict:
    d = {}
    for k in iterable:
        d[k] = value
    return d


# -- functools -----------------------------------------------------------------------------


@_reference(functools.reduce)
def reduce(function: Callable, iterable: Iterable, initial: Any = _MISSING, /) -> Any:
    it = iter(iterable)
    if initial is _MISSING:
        acc = _MISSING
        for acc in it:
            break
        if acc is _MISSING:
            raise TypeError("reduce() of empty iterable with no initial value")
    else:
        acc = initial
    for x in it:
        acc = function(acc, x)
    return acc


# -- itertools (generators: lazy, one item per step) ---------------------------------------


@_reference(itertools.chain)
def chain(*iterables: Iterable) -> Iterator:
    for it in iterables:
        for x in it:
            yield x


@_reference(itertools.chain.from_iterable)
def chain_from_iterable(iterables: Iterable, /) -> Iterator:
    for it in iterables:
        for x in it:
            yield x


@_reference(itertools.product)
def product(*iterables: Iterable, repeat: int = 1) -> Iterator:
    # itertools.product reads every argument to the end before its first item.
    pools = [tuple(p) for p in iterables] * repeat
    result = [()]
    for pool in pools:
        result = [r + (x,) for r in result for x in pool]
    for r in result:
        yield r


@_reference(itertools.accumulate)
def accumulate(iterable: Iterable, func: Callable | None = None, *, initial: Any = None) -> Iterator:
    it = iter(iterable)
    total = initial
    if initial is None:
        total = _MISSING
        for total in it:
            break
        if total is _MISSING:
            return
    yield total
    for x in it:
        total = total + x if func is None else func(total, x)
        yield total


@_reference(itertools.pairwise)
def pairwise(iterable: Iterable, /) -> Iterator:
    it = iter(iterable)
    a = _MISSING
    for a in it:
        break
    if a is _MISSING:
        return
    for b in it:
        yield a, b
        a = b


@_reference(itertools.zip_longest)
def zip_longest(*iterables: Iterable, fillvalue: Any = None) -> Iterator:
    its = [iter(x) for x in iterables]
    active = len(its)
    if not active:
        return
    while True:
        values = []
        for i in range(len(its)):
            v = _MISSING
            if its[i] is not None:
                for v in its[i]:
                    break
                if v is _MISSING:
                    its[i] = None
                    active -= 1
                    if not active:
                        return
            values.append(fillvalue if v is _MISSING else v)
        yield tuple(values)


@_reference(itertools.starmap)
def starmap(function: Callable, iterable: Iterable, /) -> Iterator:
    for args in iterable:
        yield function(*args)


@_reference(itertools.repeat)
def repeat(obj: Any, times: int | None = None) -> Iterator:
    if times is None:
        while True:
            yield obj
    for _ in range(times):
        yield obj


@_reference(itertools.islice)
def islice(iterable: Iterable, *args: Any) -> Iterator:
    if len(args) == 1:
        start, stop, step = None, args[0], None
    elif 2 <= len(args) <= 3:
        start, stop = args[0], args[1]
        step = args[2] if len(args) == 3 else None
    else:
        raise TypeError("islice expected 2 to 4 arguments")
    start = 0 if start is None else start
    step = 1 if step is None else step
    if start < 0 or (stop is not None and stop < 0) or step <= 0:
        raise ValueError("Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.")
    nxt = start
    i = 0
    for x in iterable:
        if stop is not None and i >= stop:
            return
        if i == nxt:
            yield x
            nxt += step
        i += 1
        if stop is not None and i >= stop:
            return


@_reference(itertools.takewhile)
def takewhile(predicate: Callable, iterable: Iterable, /) -> Iterator:
    for x in iterable:
        if not predicate(x):
            return
        yield x


@_reference(itertools.dropwhile)
def dropwhile(predicate: Callable, iterable: Iterable, /) -> Iterator:
    it = iter(iterable)
    for x in it:
        if not predicate(x):
            yield x
            break
    for x in it:
        yield x


@_reference(itertools.compress)
def compress(data: Iterable, selectors: Iterable) -> Iterator:
    for d, s in zip(data, selectors):
        if s:
            yield d


@_reference(itertools.filterfalse)
def filterfalse(function: Callable | None, iterable: Iterable, /) -> Iterator:
    for x in iterable:
        if not (bool(x) if function is None else function(x)):
            yield x


@_reference(itertools.combinations)
def combinations(iterable: Iterable, r: int) -> Iterator:
    pool = tuple(iterable)
    n = len(pool)
    if r > n:
        return
    indices = list(range(r))
    yield tuple(pool[i] for i in indices)
    while True:
        i = r - 1
        while i >= 0 and indices[i] == i + n - r:
            i -= 1
        if i < 0:
            return
        indices[i] += 1
        for j in range(i + 1, r):
            indices[j] = indices[j - 1] + 1
        yield tuple(pool[i] for i in indices)


@_reference(itertools.permutations)
def permutations(iterable: Iterable, r: int | None = None) -> Iterator:
    pool = tuple(iterable)
    n = len(pool)
    r = n if r is None else r
    if r > n:
        return
    for idx in product(range(n), repeat=r):
        if len(set(idx)) == r:
            yield tuple(pool[i] for i in idx)


@_reference(itertools.count)
def count(start: Any = 0, step: Any = 1) -> Iterator:
    n = start
    while True:
        yield n
        n += step


@_reference(itertools.cycle)
def cycle(iterable: Iterable, /) -> Iterator:
    # itertools.cycle saves each item as the first pass yields it.
    saved = []
    for x in iterable:
        yield x
        saved.append(x)
    if not saved:
        return
    while True:
        for x in saved:
            yield x




# -- builtins that take callables or iterators -----------------------------------------------


@_reference(map)
def map_(function: Callable, iterable: Iterable, /, *iterables: Iterable) -> Iterator:
    if not iterables:
        for x in iterable:
            yield function(x)
        return
    for args in zip(iterable, *iterables):
        yield function(*args)


@_reference(filter)
def filter_(function: Callable | None, iterable: Iterable, /) -> Iterator:
    for x in iterable:
        if (bool(x) if function is None else function(x)):
            yield x


@_reference(next, native_on_constants=True)
def next_(iterator: Iterator, default: Any = _MISSING, /) -> Any:
    for x in iterator:
        return x
    if default is _MISSING:
        raise StopIteration
    return default


@_reference(bool, native_on_constants=True)
def bool_(x: Any = False, /) -> bool:
    # A container's truth is its length; a tensor's is its value (a graph break
    # where the translator cannot know it, as for `if x:`).
    return True if x else False


@_reference(pow, native_on_constants=True)
def pow_(base: Any, exp: Any, mod: Any = None) -> Any:
    if mod is None:
        return base ** exp
    return type(base).__pow__(base, exp, mod)


# -- operator: each function is its operator (operator module documentation) ----------------


_OPERATORS: dict[Callable, Callable] = {
    operator.add: lambda a, b: a + b, operator.sub: lambda a, b: a - b, operator.mul: lambda a, b: a * b,
    operator.truediv: lambda a, b: a / b, operator.floordiv: lambda a, b: a // b,
    operator.mod: lambda a, b: a % b, operator.pow: lambda a, b: a ** b, operator.matmul: lambda a, b: a @ b,
    operator.lshift: lambda a, b: a << b, operator.rshift: lambda a, b: a >> b,
    operator.and_: lambda a, b: a & b, operator.or_: lambda a, b: a | b, operator.xor: lambda a, b: a ^ b,
    operator.eq: lambda a, b: a == b, operator.ne: lambda a, b: a != b, operator.lt: lambda a, b: a < b,
    operator.le: lambda a, b: a <= b, operator.gt: lambda a, b: a > b, operator.ge: lambda a, b: a >= b,
    operator.is_: lambda a, b: a is b, operator.is_not: lambda a, b: a is not b,
    operator.contains: lambda a, b: b in a, operator.getitem: lambda a, b: a[b],
    operator.neg: lambda a: -a, operator.pos: lambda a: +a, operator.invert: lambda a: ~a,
    operator.not_: lambda a: not a, operator.truth: lambda a: True if a else False, operator.abs: lambda a: abs(a),
}


# The in-place forms: `a op= b; return a` (the object's in-place method where it has one).
def _iadd(a, b): a += b; return a  # noqa: E702
def _isub(a, b): a -= b; return a  # noqa: E702
def _imul(a, b): a *= b; return a  # noqa: E702
def _itruediv(a, b): a /= b; return a  # noqa: E702
def _ifloordiv(a, b): a //= b; return a  # noqa: E702
def _imod(a, b): a %= b; return a  # noqa: E702
def _ipow(a, b): a **= b; return a  # noqa: E702
def _imatmul(a, b): a @= b; return a  # noqa: E702
def _iand(a, b): a &= b; return a  # noqa: E702
def _ior(a, b): a |= b; return a  # noqa: E702
def _ixor(a, b): a ^= b; return a  # noqa: E702
def _ilshift(a, b): a <<= b; return a  # noqa: E702
def _irshift(a, b): a >>= b; return a  # noqa: E702


_OPERATORS.update({
    operator.iadd: _iadd, operator.isub: _isub, operator.imul: _imul, operator.itruediv: _itruediv,
    operator.ifloordiv: _ifloordiv, operator.imod: _imod, operator.ipow: _ipow, operator.imatmul: _imatmul,
    operator.iand: _iand, operator.ior: _ior, operator.ixor: _ixor, operator.ilshift: _ilshift,
    operator.irshift: _irshift,
})

for _op, _ref in _OPERATORS.items():
    REFERENCE[_op] = (_ref, False)


# -- list and dict methods and item deletion (looked up on the value's exact type) -----------


@_reference(list.__setitem__)
def list_setitem(lst: list, index: Any, value: Any, /) -> None:
    if not isinstance(index, slice):
        lst[index] = value
        return
    values = list(value)  # first: `xs[1:] = xs` reads xs before it changes
    start, stop, step = index.indices(len(lst))
    if step == 1:
        for _ in range(max(stop - start, 0)):
            lst.pop(start)
        for i, v in enumerate(values):
            lst.insert(start + i, v)
        return
    positions = range(start, stop, step)
    if len(values) != len(positions):
        raise ValueError(f"attempt to assign sequence of size {len(values)} to extended slice of size "
                         f"{len(positions)}")
    for p, v in zip(positions, values):
        lst[p] = v


@_reference(list.__delitem__)
def list_delitem(lst: list, index: Any, /) -> None:
    if isinstance(index, slice):
        start, stop, step = index.indices(len(lst))
        for p in reversed(range(start, stop, step)) if step > 0 else range(start, stop, step):
            lst.pop(p)
        return
    if not -len(lst) <= index < len(lst):
        raise IndexError("list assignment index out of range")
    lst.pop(index)


@_reference(dict.__delitem__)
def dict_delitem(d: dict, key: Any, /) -> None:
    if key not in d:
        raise KeyError(key)
    d.pop(key)


@_reference(list.remove)
def list_remove(lst: list, value: Any, /) -> None:
    for i, x in enumerate(lst):
        if x is value or x == value:
            lst.pop(i)
            return
    raise ValueError("list.remove(x): x not in list")


@_reference(list.sort)
def list_sort(lst: list, /, *, key: Callable | None = None, reverse: bool = False) -> None:
    lst[:] = sorted(lst, key=key, reverse=reverse)


@_reference(dict.popitem)
def dict_popitem(d: dict, /) -> tuple:
    if not d:
        raise KeyError("popitem(): dictionary is empty")
    key = list(d)[-1]
    return key, d.pop(key)


# -- pure functions of constants: no reference (None); the translator calls the
# original at capture time when every argument is a constant, else breaks. Each
# result is an immutable value (a number, string, torch.device, dtype info). --


def _pure(*originals: Any) -> None:
    for o in originals:
        REFERENCE[o] = (None, True)


_pure(chr, ord, format, ascii, bin, oct, hex)
try:
    import torch as _torch
    _pure(_torch.device, _torch.Size)
except ImportError:  # pragma: no cover - torch is a dependency
    pass
try:
    import numpy as _np
    _pure(_np.iinfo, _np.finfo, _np.dtype)
except ImportError:  # NumPy is optional
    pass


# -- copy: polyfills_copy.py (Note [Copies of instances]) ----------------------------------


# -- comparisons and `|` between containers (keyed ("containers", operator)): the
# translator asks these only when both operands are lists, tuples, dicts or dict
# views; any other pairing raises here, so the frame breaks and Python answers. --

_KEYS = type({}.keys())


def _sequence_compare(op: Callable, a: Any, b: Any) -> bool:
    # As list/tuple rich comparison: lengths first for ==/!=, then the first
    # pair of items that are neither identical nor equal decides.
    if len(a) != len(b) and (op is operator.eq or op is operator.ne):
        return op is operator.ne
    for x, y in zip(a, b):
        if not (x is y or x == y):
            if op is operator.eq:
                return False
            if op is operator.ne:
                return True
            return op(x, y)
    return op(len(a), len(b))


def _dict_equal(a: dict, b: dict) -> bool:
    if len(a) != len(b):
        return False
    for k in a:
        if k not in b:
            return False
        x = a[k]
        y = b[k]
        if not (x is y or x == y):
            return False
    return True


def _containers(op: Callable) -> Callable:
    equality = op is operator.eq or op is operator.ne
    ordering = op is operator.lt or op is operator.le or op is operator.gt or op is operator.ge

    def compare(a: Any, b: Any) -> Any:
        # torch.Size compares as the tuple it is (its items may be symbolic sizes).
        ta = tuple if type(a) is _torch.Size else type(a)
        tb = tuple if type(b) is _torch.Size else type(b)
        if ta is tb and (ta is list or ta is tuple) and (equality or ordering):
            return _sequence_compare(op, a, b)
        if ta is dict and tb is dict and equality:
            return _dict_equal(a, b) == (op is operator.eq)
        if ta is _KEYS and tb is _KEYS and equality:  # keys views compare as sets
            same = len(a) == len(b) and all(k in b for k in a)
            return same == (op is operator.eq)
        if ta is dict and tb is dict and op is operator.or_:
            merged = dict(a)
            merged.update(b)
            return merged
        if equality and ta is not tb and _plain(ta) and _plain(tb):
            return op is operator.ne  # a list, a tuple and a dict are never equal to each other
        raise TypeError(f"unsupported operand types for {op.__name__}: '{ta.__name__}' and '{tb.__name__}'")
    return compare


def _plain(t: type) -> bool:
    return t is list or t is tuple or t is dict

for _op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge, operator.or_):
    REFERENCE[("containers", _op)] = (_containers(_op), False)


# References kept in modules of their own register themselves into REFERENCE on
# import: dataclasses; functools, operator's callable classes, itertools.groupby/tee;
# context managers; collections' containers; copy.copy/deepcopy; torch.distributed calls;
# torch's higher-order operators; torch.vmap; torch.autograd.Function.apply.
from . import polyfills_autograd, polyfills_collections, polyfills_context, polyfills_copy, polyfills_dataclasses, polyfills_dist, polyfills_hops, polyfills_stdlib, polyfills_vmap  # noqa: E402,F401,I001
