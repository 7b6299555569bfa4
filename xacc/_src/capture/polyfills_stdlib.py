"""Python reference implementations of standard-library helpers that return
callables, share state between iterators, or are classes: `functools.partial`,
`wraps`, `lru_cache`, `operator.itemgetter`/`attrgetter`/`methodcaller`,
`itertools.groupby`/`tee`. They join polyfills.REFERENCE (see polyfills.py for
how the translator finds and inlines them) when polyfills.py imports this module.

A callable made here is a closure the translator models only as something to
call: it never answers its type, its attributes or its identity, and never
rebuilds it after a break or at a return (those break the frame), so the
closure standing in for a `functools.partial` or an `itemgetter` object cannot
be observed as a different type.
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Callable, Iterable, Iterator

from .polyfill_registry import _MISSING, REFERENCE, _reference

# -- functools ------------------------------------------------------------------------------


@_reference(functools.partial)
def partial(func: Callable, /, *args: Any, **keywords: Any) -> Callable:
    # A partial object is its function, positional arguments and keywords; a
    # call's keywords override the stored ones. The result is a closure whose
    # type, attributes and identity the translator never answers (reading
    # `.func` or returning it breaks the frame), so only calls are modelled.
    if not callable(func):
        raise TypeError("the first argument must be callable")

    def call(*fargs: Any, **fkeywords: Any) -> Any:
        return func(*args, *fargs, **{**keywords, **fkeywords})
    return call


def _made_while_tracing(fn: Any) -> bool:
    """Answered by the translator (REFERENCE entry "made_while_tracing"): whether
    `fn` is a function the traced code defined, whose attributes it never
    answers. Never called for real."""
    raise TypeError("answered by the translator only")


REFERENCE[_made_while_tracing] = ("made_while_tracing", False)  # type: ignore[assignment]


@_reference(functools.update_wrapper)
def update_wrapper(wrapper: Any, wrapped: Any, assigned: Any = functools.WRAPPER_ASSIGNMENTS,
                   updated: Any = functools.WRAPPER_UPDATES) -> Any:
    # update_wrapper only copies attributes (__name__, __doc__, __wrapped__,
    # __dict__ ...) onto `wrapper`. On a function the traced code defined they
    # are unobservable (the translator breaks on its attributes and never
    # rebuilds it); on any other object Python must set them: a break.
    if not _made_while_tracing(wrapper):
        raise TypeError("functools.update_wrapper of a function from outside is left to Python")
    return wrapper


@_reference(functools.wraps)
def wraps(wrapped: Any, assigned: Any = functools.WRAPPER_ASSIGNMENTS,
          updated: Any = functools.WRAPPER_UPDATES) -> Callable:
    def decorate(wrapper: Any) -> Any:
        return update_wrapper(wrapper, wrapped, assigned, updated)
    return decorate


def _lru_wrapper(user_function: Callable, maxsize: int | None, typed: bool) -> Callable:
    # functools' cache: arguments -> result, looked up by equality; the least
    # recently used entry leaves first once `maxsize` are held (None: never;
    # 0: nothing is kept). Keys as functools._make_key builds them.
    cache = {}

    def call(*args: Any, **kwds: Any) -> Any:
        key = args
        if kwds:
            key = key + (_KWD_MARK,)
            for item in kwds.items():
                key = key + item
        if typed:
            key = key + tuple(type(v) for v in args)
            if kwds:
                key = key + tuple(type(v) for v in kwds.values())
        if maxsize == 0:
            return user_function(*args, **kwds)
        if key in cache:
            result = cache.pop(key)
            cache[key] = result  # most recently used: last
            return result
        result = user_function(*args, **kwds)
        if key not in cache:  # the call may have filled it (recursion)
            cache[key] = result
            if maxsize is not None and len(cache) > maxsize:
                cache.pop(next(iter(cache)))
        return result
    return call


_KWD_MARK = (object(),)


@_reference(functools.lru_cache)
def lru_cache(maxsize: Any = 128, typed: bool = False) -> Callable:
    if isinstance(maxsize, int):
        if maxsize < 0:
            maxsize = 0
    elif callable(maxsize) and isinstance(typed, bool):
        return _lru_wrapper(maxsize, 128, typed)  # @lru_cache without parentheses
    elif maxsize is not None:
        raise TypeError("Expected first argument to be an integer, a callable, or None")

    def decorate(user_function: Callable) -> Callable:
        return _lru_wrapper(user_function, maxsize, typed)
    return decorate


@_reference(functools.cache)
def cache(user_function: Callable, /) -> Callable:
    return _lru_wrapper(user_function, None, False)


# -- itertools: iterators sharing one underlying iterator ------------------------------


@_reference(itertools.groupby)
def groupby(iterable: Iterable, key: Callable | None = None) -> Iterator:
    # One iterator shared by the outer generator and its groups: a group
    # yields until the key changes; moving the outer one on first drains the
    # current group (so an old group is then empty, as in C). Keys compare
    # as PyObject_RichCompareBool(target, key, ==) does: identity first.
    it = iter(iterable)
    state = [_MISSING, _MISSING, False]  # current value, its key, exhausted

    def step() -> bool:
        for v in it:
            state[0] = v
            state[1] = v if key is None else key(v)
            return True
        state[2] = True
        return False

    def group(target: Any) -> Iterator:
        while True:
            yield state[0]
            if not step():
                return
            k = state[1]
            if not (k is target or target == k):
                return

    if not step():
        return
    while not state[2]:
        target = state[1]
        g = group(target)
        yield target, g
        k = state[1]
        if k is target or target == k:
            for _ in g:
                pass
        if state[2]:
            return


@_reference(itertools.tee)
def tee(iterable: Iterable, n: int = 2, /) -> tuple:
    # n iterators over one underlying iterator: each item is read once, when
    # the first copy reaches it, and kept for the others.
    if n < 0:
        raise ValueError("n must be >= 0")
    it = iter(iterable)
    seen = []
    done = [False]

    def copy_() -> Iterator:
        j = 0
        while True:
            if j == len(seen):
                if done[0]:
                    return
                v = _MISSING
                for v in it:
                    break
                if v is _MISSING:
                    done[0] = True
                    return
                seen.append(v)
            yield seen[j]
            j += 1

    copies = []
    for _ in range(n):
        copies.append(copy_())
    return tuple(copies)


# -- operator's callable classes: each instance is a closure over its arguments
# (the operator module documentation gives their Python equivalents) ---------------------


@_reference(operator.itemgetter)
def itemgetter(item: Any, /, *items: Any) -> Callable:
    if not items:
        def get(obj: Any) -> Any:
            return obj[item]
        return get
    keys = (item,) + items

    def get_all(obj: Any) -> tuple:
        return tuple([obj[k] for k in keys])
    return get_all


def _resolve_attr(obj: Any, attr: str) -> Any:
    for name in attr.split("."):
        obj = getattr(obj, name)
    return obj


@_reference(operator.attrgetter)
def attrgetter(attr: Any, /, *attrs: Any) -> Callable:
    names = (attr,) + attrs
    for a in names:
        if not isinstance(a, str):
            raise TypeError("attribute name must be a string")
    if not attrs:
        def get(obj: Any) -> Any:
            return _resolve_attr(obj, attr)
        return get

    def get_all(obj: Any) -> tuple:
        return tuple([_resolve_attr(obj, a) for a in names])
    return get_all


@_reference(operator.methodcaller)
def methodcaller(name: Any, /, *args: Any, **kwargs: Any) -> Callable:
    if not isinstance(name, str):
        raise TypeError("method name must be a string")

    def call(obj: Any) -> Any:
        return getattr(obj, name)(*args, **kwargs)
    return call
