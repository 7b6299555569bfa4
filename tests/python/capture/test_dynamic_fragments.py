"""Automatic dynamic shapes across the fragments of a frame that breaks (Note
[Fragment groups] in xacc/_src/capture/dynamic.py): the frame's resume
functions and loop bodies share its dynamic-dim decision.

What the counters count: `recompiles` is the number of compiles of a code
object whose cache entries all failed their guards, except the compiles that
follow a dynamic-dim decision the fragment's group already made for the same
size change (old size -> new size), which are `dynamic_followups`. A batch-size
change therefore costs one recompile per user function; its resume functions
and loop bodies compile once more (dynamic, as follow-ups) and never again."""

import torch

from harness import check, compare_call
from xacc._src.capture import convert
from xacc.jit import counters, jit

W = torch.randn(4, 4)


def two_breaks(x):
    y = torch.relu(x @ W)
    print("first")
    z = y * 2 + 1
    print("second")
    return z.sum(-1)


def batches(*sizes, feat=4):
    return lambda i: (torch.randn(sizes[i], feat),)


def test_break_recompiles_once_for_a_new_batch_size():
    # Batch 2: three fragments compiled (frame, two resume functions). Batch 3:
    # the frame recompiles (1 recompile) and makes dim 0 dynamic; both resume
    # functions follow (2 follow-ups). Batches 4 and 5: no compile at all.
    c = check(two_breaks, batches(2, 3, 4, 5), calls=4, breaks=4, max_recompiles=1)
    assert c["recompiles"] == 1 and c["dynamic_followups"] == 2, c
    assert c["frames"] == 6, c  # nothing compiled for batches 4 and 5
    last = [e for e in convert.EVENTS if e.recompile_reasons]
    assert [e.followup for e in last] == [False, True, True], [(e.function, e.followup) for e in last]
    assert all("=s0" in " ".join(e.dynamic) for e in last), [e.dynamic for e in last]


def loop_with_break(x):
    for i in range(3):
        x = torch.relu(x @ W) + i
        print(i)
    return x


def test_loop_body_recompiles_once_for_a_new_batch_size():
    c = check(loop_with_break, batches(2, 3, 4, 5), calls=4, max_recompiles=1)
    assert c["recompiles"] == 1 and c["dynamic_followups"] == 1, c
    body = [e for e in convert.EVENTS if "loop body" in e.function]
    assert len(body) == 2 and body[1].followup and "=s0" in " ".join(body[1].dynamic), body


class Layer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        print("layer")
        return torch.relu(y)


class Stack(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer() for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_modules_recompile_once_per_function():
    # Stack.forward and Layer.forward are two user functions (each one
    # recompile); Stack's loop body and Layer's resume function follow.
    m = Stack()
    jm = jit(m)
    with torch.no_grad():
        for b in (2, 3, 4, 5):
            compare_call(m, jm, (torch.randn(b, 4),))
    c = counters()
    assert c["recompiles"] == 2 and c["dynamic_followups"] == 2, c
    assert c["internal_errors"] == 0, c


def branch_then_break(x, upper):
    y = x * 2
    if upper:
        print("upper")
        return y + 1
    print("lower")
    return y - 1


def test_fragment_first_compiled_after_the_decision_is_dynamic():
    # The "upper" resume function is first reached at batch 4, after the frame
    # made dim 0 dynamic: it compiles dynamic at once (its input y is a graph
    # output of size s0), so batches 5 and 6 compile nothing. Recompiles: the
    # frame at batch 3 (size) and at batch 4 (`upper` changed).
    args = [(2, False), (3, False), (4, True), (5, True), (6, True)]
    check(branch_then_break, lambda i: (torch.randn(args[i][0], 3), args[i][1]), calls=5, max_recompiles=2)
    c = counters()
    assert c["recompiles"] == 2, c
    upper = [e for e in convert.EVENTS if "resumed" in e.function and e.lineno and not e.recompile_reasons]
    assert len(upper) == 2, [(e.function, e.dynamic) for e in convert.EVENTS]
    assert "=s0" in " ".join(upper[1].dynamic), upper[1].dynamic
    assert c["frames"] == 6, c  # the frame at batches 2, 3, 4; "lower" at 2, 3; "upper" at 4 only


def square_after_break(x, upper):
    y = x * 2
    if upper:
        print("upper")
        return y.sum(1) + y.sum(0)  # needs dims 0 and 1 equal
    print("lower")
    return y - 1


def test_inherited_dims_keep_complete_guards():
    # The "upper" fragment is first compiled at batch 4 with a (4, 4) input:
    # both dims have the size of the group's dynamic dim and become dynamic;
    # the graph adds y.sum(1) and y.sum(0), so they are guarded equal. Later
    # calls with other shapes (dims unequal, size 1, another dtype, another
    # rank) must recompile and stay eager-equal, never reuse that entry.
    shapes = [((2, 4), False), ((3, 4), False), ((4, 4), True), ((5, 5), True), ((6, 1), False),
              ((3, 3), True), ((2, 2), True)]
    jf = jit(square_after_break)
    for i, (shape, upper) in enumerate(shapes):
        torch.manual_seed(i)
        compare_call(square_after_break, jf, (torch.randn(*shape), upper))
    for bad in (torch.randn(5, 4), torch.randn(1, 1), torch.randn(4, 4, dtype=torch.float64)):
        # (5, 4): y.sum(1) + y.sum(0) raises in eager: so it must under xacc
        compare_call(square_after_break, jf, (bad, True))
    assert counters()["internal_errors"] == 0, counters()
    upper = next(e for e in convert.EVENTS if e.lineno and "resumed" in e.function and "L['y'][1]" in " ".join(e.dynamic))
    assert not upper.recompile_reasons, upper.recompile_reasons  # its first compile
    assert "L['y'][0]=s0" in upper.dynamic[0] and "L['y'][1]=s0" in upper.dynamic[0], upper.dynamic
    assert any("size(0) ==" in g and "size(1)" in g for g in upper.guards), upper.guards
