"""References of torch.distributed collectives (issue 25): a collective called
inside captured code becomes graph nodes (Note [Collectives as nodes] in
csrc/lib/backend/aten/AtenOps.cpp), as PyTorch's functional collectives:

* `dist.all_reduce(t, op, group)` (in place, synchronous) is
  `t.copy_(wait_tensor(_c10d_functional.all_reduce(t, op, group_name)))`, and
  returns None as it does;
* `_functional_collectives.all_reduce` is the functional op followed by
  `wait_tensor`. Eagerly it returns an AsyncCollectiveTensor (a tensor
  subclass that waits on first use); in a graph the waited plain tensor is
  returned -- the same values, and the same choice torch.compile makes when it
  traces it;
* the operators themselves (`torch.ops._c10d_functional.all_reduce`,
  `all_gather_into_tensor`, `reduce_scatter_tensor`, `wait_tensor`) need no
  reference: the recorder records them (recorder.COLLECTIVES).

The process group becomes its registered name, a string attribute, resolved
at capture time (`_group_name`, a pure function of a constant group); the
executor's operator finds the group by that name in the process that runs the
graph. Calls the graph does not hold -- `async_op=True` (the caller gets a
Work object), a reduce op without a functional form (a premultiplied sum),
tensors that require grad -- go to the original function, whose dispatcher
call (`c10d::allreduce_`, with a process-group object) the recorder turns into
graph break GB026: the call runs in Python, exactly as written."""

from __future__ import annotations

from typing import Any

import torch

from xacc._src.capture.polyfill_registry import REFERENCE, _reference, when_imported

try:
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d
    _AVAILABLE = dist.is_available()
except ImportError:  # pragma: no cover - a torch built without distributed
    _AVAILABLE = False


def _group_name(group: Any, tag: str = "") -> str:
    """The registered name of `group` (None: the default group). Called at
    capture time, natively: the functional collectives are imported here, the
    first time a captured collective needs them, not with the references
    (Note [References of modules imported later] in polyfill_registry.py)."""
    import torch.distributed._functional_collectives as funcol
    return funcol._resolve_group_name(dist.group.WORLD if group is None else group, tag)


def _reduce_name(op: Any) -> str | None:
    """The functional collectives' name of a ReduceOp; None when it has none."""
    names = {dist.ReduceOp.SUM: "sum", dist.ReduceOp.AVG: "avg", dist.ReduceOp.PRODUCT: "product",
             dist.ReduceOp.MIN: "min", dist.ReduceOp.MAX: "max"}
    try:
        return names.get(op)
    except TypeError:  # an unhashable premultiplied-sum op
        return None


if _AVAILABLE:
    _functional = torch.ops._c10d_functional
    _eager_all_reduce = c10d.all_reduce.__wrapped__ if hasattr(c10d.all_reduce, "__wrapped__") \
        else c10d.all_reduce
    for _pure in (_group_name, _reduce_name):
        REFERENCE[_pure] = (None, True)  # called at capture time on constant arguments

    @_reference(c10d.all_reduce)
    def all_reduce(tensor: torch.Tensor, op: Any = None, group: Any = None, async_op: bool = False) -> None:
        # op=None stands for the original's default, ReduceOp.SUM: a constant the
        # translator folds (a ReduceOp object it sees only through _reduce_name).
        name = "sum" if op is None else _reduce_name(op)
        if async_op or name is None or tensor.requires_grad:  # graph break GB026 (recorder.py)
            if op is None:
                return _eager_all_reduce(tensor, group=group, async_op=async_op)
            return _eager_all_reduce(tensor, op, group, async_op)
        out = _functional.wait_tensor(_functional.all_reduce(tensor, name, _group_name(group)))
        tensor.copy_(out)
        return None

    def funcol_all_reduce(self: torch.Tensor, reduceOp: str, group: Any, tag: str = "") -> torch.Tensor:
        return _functional.wait_tensor(_functional.all_reduce(self, reduceOp.lower(), _group_name(group, tag)))

    @when_imported("torch.distributed._functional_collectives")
    def _register_funcol(funcol: Any) -> None:
        _reference(funcol.all_reduce)(funcol_all_reduce)
