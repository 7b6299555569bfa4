"""Python reference classes for `collections.OrderedDict`, `defaultdict`,
`Counter` and `deque`. They join polyfills.REFERENCE when polyfills.py imports
this module.

Calling one of the originals inside traced code makes an object of a model
class below (a user object, Note [User objects] in
csrc/lib/capture/translate/TranslateObjects.cpp): its items live in a plain
dict or list the translator models already, and every method, operator,
`len()`, `in` and iteration runs the Python code here, inlined. Two class
attributes connect a model to the library class (Note [Modelled library
objects] in TranslateModels.cpp):

  * `_xacc_type`: what `type()`, `isinstance()` and `__class__` answer;
  * `_xacc_rebuild`: called on the model object at a graph break or a return,
    it makes the real object (`OrderedDict(items)`, `deque(items, maxlen)`),
    once, so every reference to the model gets that one object.

What the models do not reproduce breaks instead of answering: comparisons and
`repr()` of the containers, their views' types, set operations of views,
Counter arithmetic, and any mutation during iteration (CPython raises a
RuntimeError; `_unmodelled` raises, which breaks the frame before the step,
and Python then runs it on the rebuilt object). Keys are compared as the
translator compares dict keys (constants only: a tensor key breaks).
Objects passed in from outside are not models: their method calls break.
"""

from __future__ import annotations

import collections
from typing import Any, Callable, Iterable

from .polyfill_registry import _MISSING, REFERENCE, _reference


def _unmodelled(what: str) -> None:
    # Never completes under the translator: a raise in inlined code breaks the
    # frame before the instruction that called it, which Python then runs on the
    # rebuilt object (and raises or answers exactly as it does).
    raise TypeError(f"{what} is left to Python")


class _LeftToPython:
    """Comparison, repr() and hashing of a model are left to Python: each
    breaks (`_unmodelled`) and Python answers on the rebuilt object.
    `_xacc_what` names the object in the reason."""

    _xacc_what = "a model"

    def __eq__(self, other: Any) -> bool:
        _unmodelled("comparing " + self._xacc_what)
        return False

    def __repr__(self) -> str:
        _unmodelled("repr() of " + self._xacc_what)
        return ""

    __hash__ = None  # type: ignore[assignment]


# -- views: iteration, len() and `in` only ----------------------------------------------------


class _View(_LeftToPython):
    """`d.keys()`/`values()`/`items()` of a model: live over the model's dict.
    Its type is never answered and it is never rebuilt (a break)."""

    _xacc_what = "a dict view"

    def __init__(self, owner: Any, kind: str) -> None:
        self._xacc_owner = owner
        self._xacc_kind = kind

    def __len__(self) -> int:
        return len(self._xacc_owner._xacc_d)

    def __iter__(self) -> Any:
        owner = self._xacc_owner
        version = owner._xacc_v
        d = owner._xacc_d
        for k in list(d):
            if owner._xacc_v != version:
                _unmodelled("a dict mutated during iteration")
            if self._xacc_kind == "keys":
                yield k
            elif self._xacc_kind == "values":
                yield d[k]
            else:
                yield (k, d[k])
        if owner._xacc_v != version:
            _unmodelled("a dict mutated during iteration")

    def __contains__(self, x: Any) -> bool:
        d = self._xacc_owner._xacc_d
        if self._xacc_kind == "keys":
            return x in d
        _unmodelled("`in` on a values or items view")
        return False



def _plain_mapping(x: Any) -> bool:
    """Answered by the translator (REFERENCE entry "plain_mapping"): True for a
    plain dict or a dict model (read through keys() and []), False for a list,
    tuple, iterator, set, view, tensor or constant string (iterated); any other
    value breaks. Never called for real."""
    raise TypeError("answered by the translator only")


REFERENCE[_plain_mapping] = ("plain_mapping", False)  # type: ignore[assignment]


# -- dict-like models --------------------------------------------------------------------------


class _DictModel(_LeftToPython):
    """The dict behaviour shared by the models; `_xacc_d` holds the items in
    insertion order, `_xacc_v` counts changes to the set or order of keys
    (what CPython's iterators check)."""

    _xacc_what = "a dict"

    def _xacc_init(self, args: tuple, kwds: dict) -> None:
        self._xacc_d = {}
        self._xacc_v = 0
        if len(args) > 1:
            raise TypeError(f"expected at most 1 argument, got {len(args)}")
        if args:
            self.update(args[0])
        if kwds:
            self.update(kwds)

    def __getitem__(self, key: Any) -> Any:
        d = self._xacc_d
        if key in d:
            return d[key]
        return self.__missing__(key)

    def __missing__(self, key: Any) -> Any:
        raise KeyError(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        d = self._xacc_d
        if key not in d:
            self._xacc_v += 1
        d[key] = value

    def __delitem__(self, key: Any) -> None:
        d = self._xacc_d
        if key not in d:
            raise KeyError(key)
        self._xacc_v += 1
        del d[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._xacc_d

    def __len__(self) -> int:
        return len(self._xacc_d)

    def __iter__(self) -> Any:
        return iter(self.keys())

    def keys(self) -> _View:
        return _View(self, "keys")

    def values(self) -> _View:
        return _View(self, "values")

    def items(self) -> _View:
        return _View(self, "items")

    def get(self, key: Any, default: Any = None) -> Any:
        d = self._xacc_d
        if key in d:
            return d[key]
        return default

    def pop(self, key: Any, default: Any = _MISSING) -> Any:
        d = self._xacc_d
        if key in d:
            self._xacc_v += 1
            return d.pop(key)
        if default is _MISSING:
            raise KeyError(key)
        return default

    def setdefault(self, key: Any, default: Any = None) -> Any:
        d = self._xacc_d
        if key in d:
            return d[key]
        self[key] = default
        return default

    def update(self, other: Any = (), /, **kwds: Any) -> None:
        if _plain_mapping(other):
            for k in list(other.keys()):
                self[k] = other[k]
        else:
            for k, v in other:
                self[k] = v
        for k in kwds:
            self[k] = kwds[k]

    def clear(self) -> None:
        self._xacc_v += 1
        self._xacc_d.clear()



class _OrderedDict(_DictModel):
    _xacc_type = collections.OrderedDict

    def __init__(self, *args: Any, **kwds: Any) -> None:
        self._xacc_init(args, kwds)

    @staticmethod
    def _xacc_rebuild(m: Any) -> Any:
        return collections.OrderedDict(m._xacc_d)

    def move_to_end(self, key: Any, last: bool = True) -> None:
        d = self._xacc_d
        if key not in d:
            raise KeyError(key)
        self._xacc_v += 1
        value = d.pop(key)
        if last:
            d[key] = value
        else:
            rest = list(d.items())
            d.clear()
            d[key] = value
            for k, v in rest:
                d[k] = v

    def popitem(self, last: bool = True) -> tuple:
        d = self._xacc_d
        if not d:
            raise KeyError("dictionary is empty")
        key = list(d)[-1] if last else list(d)[0]
        self._xacc_v += 1
        return key, d.pop(key)

    def copy(self) -> Any:
        return _OrderedDict(self)


class _DefaultDict(_DictModel):
    _xacc_type = collections.defaultdict

    def __init__(self, default_factory: Any = None, /, *args: Any, **kwds: Any) -> None:
        if default_factory is not None and not callable(default_factory):
            raise TypeError("first argument must be callable or None")
        self.default_factory = default_factory
        self._xacc_init(args, kwds)

    @staticmethod
    def _xacc_rebuild(m: Any) -> Any:
        return collections.defaultdict(m.default_factory, m._xacc_d)

    def __missing__(self, key: Any) -> Any:
        if self.default_factory is None:
            raise KeyError(key)
        value = self.default_factory()
        self[key] = value
        return value

    def popitem(self) -> tuple:
        d = self._xacc_d
        if not d:
            raise KeyError("popitem(): dictionary is empty")
        key = list(d)[-1]
        self._xacc_v += 1
        return key, d.pop(key)

    def copy(self) -> Any:
        return _DefaultDict(self.default_factory, self)


class _Counter(_DictModel):
    _xacc_type = collections.Counter

    def __init__(self, iterable: Any = None, /, **kwds: Any) -> None:
        self._xacc_d = {}
        self._xacc_v = 0
        self.update(iterable, **kwds)

    @staticmethod
    def _xacc_rebuild(m: Any) -> Any:
        c = collections.Counter()
        dict.update(c, m._xacc_d)  # the counts as they are, in their order
        return c

    def __missing__(self, key: Any) -> int:
        return 0  # Counter.__missing__: absent counts are zero, and not stored

    def update(self, iterable: Any = None, /, **kwds: Any) -> None:
        # Counter.update: a mapping's counts are added, an iterable's elements counted.
        if iterable is not None:
            if _plain_mapping(iterable):
                for elem in list(iterable.keys()):
                    self[elem] = self.get(elem, 0) + iterable[elem]
            else:
                for elem in iterable:
                    self[elem] = self.get(elem, 0) + 1
        if kwds:
            self.update(kwds)

    def subtract(self, iterable: Any = None, /, **kwds: Any) -> None:
        if iterable is not None:
            if _plain_mapping(iterable):
                for elem in list(iterable.keys()):
                    self[elem] = self.get(elem, 0) - iterable[elem]
            else:
                for elem in iterable:
                    self[elem] = self.get(elem, 0) - 1
        if kwds:
            self.subtract(kwds)

    def most_common(self, n: Any = None) -> list:
        # Documented as sorted(items, key=count, reverse=True)[:n]: a stable
        # sort, so equal counts stay in insertion order (heapq.nlargest agrees).
        pairs = sorted(list(self.items()), key=_count, reverse=True)
        return pairs if n is None else pairs[:n]

    def elements(self) -> Any:
        d = self._xacc_d
        for k in list(d):
            for _ in range(d[k]):
                yield k

    def total(self) -> Any:
        return sum(list(self.values()))

    def popitem(self) -> tuple:
        d = self._xacc_d
        if not d:
            raise KeyError("popitem(): dictionary is empty")
        key = list(d)[-1]
        self._xacc_v += 1
        return key, d.pop(key)

    def copy(self) -> Any:
        c = _Counter()
        for k in list(self._xacc_d):
            c[k] = self._xacc_d[k]
        return c


def _count(pair: tuple) -> Any:
    return pair[1]


@_reference(collections.OrderedDict)
def ordered_dict(*args: Any, **kwds: Any) -> _OrderedDict:
    return _OrderedDict(*args, **kwds)


@_reference(collections.defaultdict)
def defaultdict(default_factory: Any = None, /, *args: Any, **kwds: Any) -> _DefaultDict:
    return _DefaultDict(default_factory, *args, **kwds)


@_reference(collections.Counter)
def counter(iterable: Any = None, /, **kwds: Any) -> _Counter:
    return _Counter(iterable, **kwds)


# -- deque -------------------------------------------------------------------------------------


class _Deque(_LeftToPython):
    _xacc_type = collections.deque
    _xacc_what = "a deque"

    def __init__(self, iterable: Iterable = (), maxlen: Any = None) -> None:
        if maxlen is not None:
            if not isinstance(maxlen, int):
                raise TypeError("an integer is required")
            if maxlen < 0:
                raise ValueError("maxlen must be non-negative")
        self._xacc_items = []
        self._xacc_maxlen = maxlen
        self._xacc_v = 0
        self.extend(iterable)

    @staticmethod
    def _xacc_rebuild(m: Any) -> Any:
        return collections.deque(m._xacc_items, m._xacc_maxlen)

    @property
    def maxlen(self) -> Any:
        return self._xacc_maxlen

    def append(self, x: Any) -> None:
        self._xacc_v += 1
        items = self._xacc_items
        items.append(x)
        if self._xacc_maxlen is not None and len(items) > self._xacc_maxlen:
            items.pop(0)

    def appendleft(self, x: Any) -> None:
        self._xacc_v += 1
        items = self._xacc_items
        items.insert(0, x)
        if self._xacc_maxlen is not None and len(items) > self._xacc_maxlen:
            items.pop()

    def extend(self, iterable: Iterable) -> None:
        if iterable is self:
            iterable = list(self._xacc_items)
        for x in iterable:
            self.append(x)

    def extendleft(self, iterable: Iterable) -> None:
        if iterable is self:
            iterable = list(self._xacc_items)
        for x in iterable:
            self.appendleft(x)

    def pop(self) -> Any:
        if not self._xacc_items:
            raise IndexError("pop from an empty deque")
        self._xacc_v += 1
        return self._xacc_items.pop()

    def popleft(self) -> Any:
        if not self._xacc_items:
            raise IndexError("pop from an empty deque")
        self._xacc_v += 1
        return self._xacc_items.pop(0)

    def clear(self) -> None:
        self._xacc_v += 1
        self._xacc_items.clear()

    def rotate(self, n: int = 1) -> None:
        items = self._xacc_items
        if not isinstance(n, int):
            raise TypeError("an integer is required")
        self._xacc_v += 1
        if items:
            n = n % len(items)
            if n:
                rotated = items[-n:] + items[:-n]
                items.clear()
                items.extend(rotated)

    def count(self, x: Any) -> int:
        return self._xacc_items.count(x)

    def index(self, x: Any, *args: Any) -> int:
        return self._xacc_items.index(x, *args)

    def __len__(self) -> int:
        return len(self._xacc_items)

    def __getitem__(self, i: Any) -> Any:
        if not isinstance(i, int):
            raise TypeError("sequence index must be integer, not slice")
        return self._xacc_items[i]

    def __setitem__(self, i: Any, x: Any) -> None:
        if not isinstance(i, int):
            raise TypeError("sequence index must be integer, not slice")
        self._xacc_items[i] = x

    def __contains__(self, x: Any) -> bool:
        return x in self._xacc_items

    def __iter__(self) -> Any:
        version = self._xacc_v
        items = self._xacc_items
        for x in list(items):
            if self._xacc_v != version:
                _unmodelled("a deque mutated during iteration")
            yield x
        if self._xacc_v != version:
            _unmodelled("a deque mutated during iteration")



@_reference(collections.deque)
def deque(iterable: Iterable = (), maxlen: Any = None) -> _Deque:
    return _Deque(iterable, maxlen)


_ = Callable  # typing only
