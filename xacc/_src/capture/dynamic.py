"""Automatic dynamic shapes.

Per code object we remember the sizes of every tensor argument (sources rooted
at the frame's arguments) seen by past compiles. When a recompile sees a size
that changed, those dims become *dynamic*; `dynamic=True` makes every dim
dynamic from the first compile. Dims of size 0 or 1 never are (broadcasting
and empty tensors trace differently), nor are dims of non-contiguous tensors
that another stride depends on (Note [Dynamic dims of strided tensors]).

A frame with dynamic dims is translated twice. The *shadow* run uses meta
tensors whose dynamic dims are multiplied by a prime per symbol (2, 3, 5, ...); the real run records the graph and
compares itself against the shadow op by op (`Recorder.dispatch`): the same
ATen ops with the same attributes, and the same values read by Python code
(`x.shape`, `x.size(0)`, `len(x)`, ...). When both agree, nothing the trace
did depends on the dynamic sizes, so replaying its ATen ops is exact for any
size; result dims that differ between the runs get the symbol of the input
dim they follow (`s0`, `s1`; dims of equal size share a symbol) or `?`. When
they disagree (a `view` with sizes computed from a dynamic dim, a branch on a
size, a graph break), the frame is compiled static and the code object stops
trying (`State.failed`). Guards on a dynamic dim check rank, dtype, device,
contiguity and `size >= 2` instead of the size.

Note [Fragment groups]: a frame that breaks is run as several code objects,
its *fragments*: the break function's resume functions and loop bodies (each
with its own cache entries). They form one `Group` with the user's code object
(`register_fragments`, called when a break function is installed), and a
dynamic-dim decision made by any of them is the group's: (1) dims it made
dynamic (by argument path: resume functions and loop bodies keep the user's
local names) and the sizes those dims had are *inherited* candidates of every
fragment's next compile, so a fragment first compiled after the decision is
dynamic from that compile; (2) the size changes (old size, new size) behind
the decision are recorded, so a fragment (never the user's code object itself,
nor another module instance of it) that recompiles because of the same size
change is a *follow-up* of the decision, not a recompile of its own
(`Plan.followup`; counted as `dynamic_followups`, see convert.py). Inherited
candidates are only candidates: the shadow run still decides, and when it
rejects them the compile is retried with the fragment's own history only.
"""

from __future__ import annotations

import types
import weakref
from typing import Any

import torch


# Weak: a deleted function's history goes with its code object.
_STATES: "weakref.WeakKeyDictionary[types.CodeType, State]" = weakref.WeakKeyDictionary()


class Mismatch(Exception):
    """The real run diverged from the shadow run."""


class State:
    """What past compiles of one code object saw."""

    def __init__(self, parent: "State | None" = None) -> None:
        self.seen: dict[tuple, tuple[int, ...]] = {}
        self.dyn: dict[tuple, set[int]] = {}
        self._failed = False
        # A method of a module (Linear.forward) keeps one history per module
        # instance (`instances`): modules of different shapes share the code
        # object, and their sizes differing is no size changing. The code's
        # own state (`parent`) sums them up for PGO profiles.
        self.parent = parent
        self.instances: dict[int, State] = {}
        self.group: Group = parent.group if parent is not None else Group()
        # A resume function or loop body (Note [Fragment groups]): only these follow a decision.
        self.fragment = parent.fragment if parent is not None else False

    @property
    def failed(self) -> bool:
        return self._failed

    @failed.setter
    def failed(self, v: bool) -> None:
        self._failed = v
        if v and self.parent is not None:
            self.parent._failed = True


class Group:
    """What the fragments of one user code object decided together (Note [Fragment groups])."""

    def __init__(self) -> None:
        self.dyn: dict[Any, set[int]] = {}  # argument path -> dims some fragment made dynamic
        self.sizes: set[int] = set()  # the sizes of those dims at the group's latest decision
        self.changes: set[tuple[int, int]] = set()  # (old, new) size changes decided dynamic


# fragment code -> the code whose break function made it (a resume function's
# or loop body's parent); weak both ways: fragments live as long as the registry keeps them
# Fragment -> the user's code object it was made from, set once when the fragment
# is registered (its parent's root is known then), so a lookup is one step
# however long the chain of breaks: a frame with N breaks makes chains of depth N.
# Weak on both sides: a strong root here would keep the user's code object (and
# through its cache entry, the break function and this very fragment) alive.
_ROOT: "weakref.WeakKeyDictionary[types.CodeType, weakref.ref]" = weakref.WeakKeyDictionary()
_GROUPS: "weakref.WeakKeyDictionary[types.CodeType, Group]" = weakref.WeakKeyDictionary()


def register_fragments(code: types.CodeType, fragments: list) -> None:
    """Records that `code`'s break function calls the resume functions and loop
    bodies `fragments` (code objects): they join `code`'s group."""
    r = root(code)
    for f in fragments:
        if f is not code and f is not r:
            _ROOT[f] = weakref.ref(r)


def root(code: types.CodeType) -> types.CodeType:
    """The user's code object a fragment was made from (itself for user code)."""
    w = _ROOT.get(code)
    r = w() if w is not None else None
    return code if r is None else r


def group(code: types.CodeType) -> Group:
    r = root(code)
    g = _GROUPS.get(r)
    if g is None:
        g = _GROUPS[r] = Group()
    return g


def state(code: types.CodeType, args: tuple = ()) -> State:
    s = _STATES.get(code)
    if s is None:
        s = _STATES[code] = State()
        s.group = group(code)
        s.fragment = root(code) is not code
    if args and isinstance(args[0], torch.nn.Module):
        inst = s.instances.get(id(args[0]))
        if inst is None:
            inst = s.instances[id(args[0])] = State(s)
        return inst
    return s


def reset() -> None:
    _STATES.clear()
    _ROOT.clear()
    _GROUPS.clear()


class Plan:
    """The dynamic dims of one compile and their symbols."""

    def __init__(self, st: State, all_dims: bool, inherit: bool = True) -> None:
        self.state = st
        # Candidates from the group's decisions (Note [Fragment groups]); the
        # compile is retried without them when the shadow run rejects them.
        self.inherit = inherit
        self.inherited = False  # whether a dim is a candidate through the group only
        # "all" (dynamic=True), its fallbacks "lead" (all but the last dim, which
        # usually meets a weight) and "dim0" (leading dims only), or False
        self.all: Any = "all" if all_dims else False
        self.symbols: dict[int, str] = {}  # size -> symbol
        self.seen: dict[tuple, tuple[int, ...]] = {}
        self.dims: dict[tuple, set[int]] = {}
        self.ints: set = set()  # idents of int arguments (int_dynamic)

    def dims_for(self, value: torch.Tensor, ident: Any) -> list[int]:
        """Dynamic dims of an argument-rooted tensor known by `ident`."""
        sizes = tuple(int(s) for s in value.shape)
        if _is_state(ident):
            # Module state keeps static dims: one code object (Linear.forward)
            # serves modules of several shapes, which is no size changing.
            self.dims[ident] = set()
            return []
        cand = self._candidates(ident, sizes)
        if self.all:
            n = len(sizes)
            cand = set(range(n)) if self.all == "all" else set(range(n - 1)) if self.all == "lead" else {0} & set(range(n))
        self.dims[ident] = cand
        if not value.is_contiguous():
            # Strides are guarded exactly: only dims no other stride depends on
            # (Note [Dynamic dims of strided tensors]).
            strides = value.stride()
            return sorted(i for i in cand if sizes[i] >= 2 and _outer(i, sizes, strides))
        return sorted(i for i in cand if sizes[i] >= 2)

    def int_dynamic(self, value: int, ident: Any) -> bool:
        """Whether int argument `ident` of a fragment is a size of its own in
        this compile (Note [Size arguments] in host.py): its history is that of a 1-d
        tensor's dim, so it is dynamic once its value changed (or, in a
        fragment's first compile, when it has the size of the group's decision)."""
        if _is_state(ident) or not self.state.fragment:
            return False
        cand = self._candidates(ident, (value,))
        self.dims[ident] = cand
        self.ints.add(ident)
        return 0 in cand and value >= 2

    def _candidates(self, ident: Any, sizes: tuple[int, ...]) -> set[int]:
        """Records `sizes` of `ident` and returns its candidate dynamic dims."""
        self.seen[ident] = sizes
        prev = self.state.seen.get(ident)
        cand = set(self.state.dyn.get(ident, ()))
        if prev is not None and len(prev) == len(sizes):
            cand |= {i for i, (a, b) in enumerate(zip(prev, sizes)) if a != b}
        elif prev is None and self.inherit and not self.state.failed:
            # No history of its own (a fragment's first compile): the group's
            # decisions. The dims of this path some fragment made dynamic, and
            # dims with the size a dynamic dim had at the group's latest
            # decision (a graph output computed from it, passed through the break).
            g = self.state.group
            extra = {i for i in g.dyn.get(ident, ()) if i < len(sizes)}
            extra |= {i for i, n in enumerate(sizes) if n in g.sizes}
            if extra - cand:
                self.inherited = True
                cand |= extra
        return cand

    def any_candidates(self) -> bool:
        """Whether a shadow run may find dynamic dims: dynamic=True, a recompile,
        or a group that made dims dynamic (Note [Fragment groups])."""
        g = self.state.group
        return bool(self.all) or bool(self.state.dyn) or bool(self.state.seen) or (
            self.inherit and bool(g.dyn or g.sizes))

    def symbol(self, size: int) -> str:
        s = self.symbols.get(size)
        if s is None:
            s = self.symbols[size] = f"s{len(self.symbols)}"
        return s

    def perturb(self, size: int) -> int:
        """The shadow run's size for a dim of capture-time `size`: the size
        times a prime of its own per symbol, so that sizes computed from
        different symbols (`2 * s0` and `s1`) differ in the shadow run even
        when they are equal at capture time (see `resolve` in recorder.py)."""
        return size * _PRIMES[int(self.symbols[size][1:]) % len(_PRIMES)]

    def pairs(self) -> dict[tuple[int, int], str]:
        return {(a, self.perturb(a)): s for a, s in self.symbols.items()}

    def changes(self) -> dict[tuple, dict[int, tuple[int, int]]]:
        """Per argument path, the dims whose size differs from the last compile: dim -> (old, new)."""
        out: dict[tuple, dict[int, tuple[int, int]]] = {}
        for ident, sizes in self.seen.items():
            prev = self.state.seen.get(ident)
            if prev is not None and len(prev) == len(sizes):
                ch = {i: (a, b) for i, (a, b) in enumerate(zip(prev, sizes)) if a != b}
                if ch:
                    out[ident] = ch
        return out

    def followup(self, used: bool) -> bool:
        """Whether this compile of a fragment follows a dynamic-dim decision its
        group already made (Note [Fragment groups]): sizes changed, every changed dim is
        dynamic in this compile (`used`: the shadow run's dims were used), and
        the group decided each of those size changes before. Call before commit()."""
        # An int argument's change (`2 * n` carried across the break) need not be
        # one the group decided: the tensors' changes say whether this follows.
        ch = {k: v for k, v in self.changes().items() if k not in self.ints}
        if not used or not ch or not self.state.fragment:
            return False
        g = self.state.group
        for ident, dims in ch.items():
            made = self.dynamic_dims(ident)
            for i, pair in dims.items():
                if i not in made or pair not in g.changes:
                    return False
        return True

    def dynamic_dims(self, ident: Any) -> set[int]:
        """The dims of `ident` this compile made dynamic (with a symbol)."""
        sizes = self.seen.get(ident, ())
        return {i for i in self.dims.get(ident, ()) if i < len(sizes) and sizes[i] in self.symbols}

    def commit(self, used: bool = False) -> None:
        """Records this compile's sizes and dynamic dims for the next recompile,
        and (when `used`: the compile has dynamic dims) the group's decisions."""
        st = self.state
        g = st.group
        for ident, dims in self.changes().items():
            changed = set(dims)
            st.dyn.setdefault(ident, set()).update(changed)
            if st.parent is not None:
                st.parent.dyn.setdefault(ident, set()).update(changed)
            if used:
                g.changes.update(p for i, p in dims.items() if i in self.dynamic_dims(ident))
        if used:
            sizes = set()
            for ident in self.seen:
                made = self.dynamic_dims(ident)
                if made:
                    g.dyn.setdefault(ident, set()).update(made)
                    sizes.update(self.seen[ident][i] for i in made)
            if sizes:
                g.sizes = sizes
        for ident, sizes in self.seen.items():
            st.seen[ident] = sizes


_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29)


def _outer(d: int, sizes: tuple, strides: tuple) -> bool:
    """Note [Dynamic dims of strided tensors]: a dim of a non-contiguous tensor
    may be dynamic when no other dim's stride depends on its size: a broadcast
    dim (stride 0, from `expand`), or the outermost dim of the layout (its
    stride spans every other dim: `mask[:, 0, 0, :]` of a contiguous
    (b, 1, n, n) tensor is (b, n) with strides (n * n, 1)). Such a tensor's
    guard keeps its strides exactly, with the dynamic sizes (leaf_tensor in
    capture_bindings.cpp), and the shadow run's meta has the same strides
    (shadow_meta); a layout whose strides do change with the size (a
    transposed (n, b) buffer) fails that guard and compiles again."""
    if strides[d] == 0:
        return True
    return all(strides[d] >= strides[i] * sizes[i] for i in range(len(sizes)) if i != d and sizes[i] > 1)


def _is_state(ident: Any) -> bool:
    """A module's parameter or buffer (`L['self']._parameters['w']`): its dims stay static."""
    return isinstance(ident, str) and ("._parameters[" in ident or "._buffers[" in ident)


def shadow_meta(t: torch.Tensor, dims: list[int], plan: Plan) -> torch.Tensor:
    sizes = [plan.perturb(int(s)) if i in dims else int(s) for i, s in enumerate(t.shape)]
    if t.is_contiguous():
        m = torch.empty(sizes, dtype=t.dtype, device="meta")
    else:  # dynamic dims no stride depends on (Plan.dims_for): the strides stay
        m = torch.empty_strided(sizes, tuple(t.stride()), dtype=t.dtype, device="meta")
    if t.requires_grad:
        m.requires_grad_(True)
    return m


class Shadow:
    """What the shadow run recorded: per ATen op (name, attributes, result sizes),
    the values Python read from tensor metadata, and per op its known results
    (Note [Known tensor values] in known.py)."""

    def __init__(self, ops: list, reads: list, kind: str = "graph", offset: int = -1,
                 known: list | None = None) -> None:
        self.ops = ops
        self.known = known
        self.reads = reads
        self.kind = kind  # the translation's outcome ("graph", "code", "break")
        self.offset = offset  # "break": the offset of the break


def result_dims(a_sizes: list[int], b_sizes: list[int], pairs: dict) -> list:
    out: list[Any] = []
    for a, b in zip(a_sizes, b_sizes):
        if a == b:
            out.append(a)
        else:
            out.append(pairs.get((a, b), -1))
    return out
