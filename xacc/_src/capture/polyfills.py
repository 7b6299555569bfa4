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
calls the original itself at capture time (exact and cheaper).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Callable, Iterable, Iterator

REFERENCE: dict[Any, tuple[Callable[..., Any], bool]] = {}

_MISSING = object()


def _reference(original: Any, native_on_constants: bool = False) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        REFERENCE[original] = (fn, native_on_constants)
        return fn
    return register


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
