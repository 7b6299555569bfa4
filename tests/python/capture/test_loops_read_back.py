"""A loop whose body reads a value back from a tensor (GB005: `.item()`,
`int(t)`, an op whose output size depends on the data) runs in Python as a
whole (Note [Loops left to Python] in
csrc/lib/capture/translate/CodegenLoops.cpp): one break for the frame, the
graphs before and after the loop kept, and no recompile when the data (and so
the value read back) changes. Before, the body was captured per iteration: a
second break (the body's own) and a recompile of the body's resume function
for every new value or size read back."""

import torch

from harness import check
from xacc._src.capture import convert
from xacc.jit import counters


def repeat_rows(x, counts):
    y = x * 2
    out = []
    for row, c in zip(y, counts):
        # The size of the result depends on the values of c.
        out.append(torch.repeat_interleave(row, c, dim=0).sum(0))
    return torch.stack(out) + 1


def rows_and_counts(i):
    g = torch.Generator().manual_seed(i)
    return torch.randn(3, 4, 5, generator=g), torch.randint(0, 4, (3, 4), generator=g)


def test_data_dependent_size_in_a_loop_costs_one_break():
    c = check(repeat_rows, rows_and_counts, calls=4, breaks=1, max_recompiles=0)
    assert c["dynamic_followups"] == 0, c
    # The graph before the loop (x * 2) and the one after it (stack + 1).
    assert c["graphs"] == 2, c
    codes = [b.code for e in convert.EVENTS for b in e.breaks]
    assert codes == ["GB005"], codes
    assert all("its body too" in b.detail for e in convert.EVENTS for b in e.breaks), convert.EVENTS


def roll_by_steps(x, steps):
    x = x.sin()
    for s in steps:
        # A Python int read back from the tensor, then used as an op's argument.
        x = torch.roll(x, shifts=int(s)) * 0.5
    return x.cos()


def test_item_read_back_in_a_loop_does_not_recompile_per_value():
    def args(i):
        g = torch.Generator().manual_seed(i)
        return torch.randn(6, generator=g), torch.randint(0, 6, (4,), generator=g)

    c = check(roll_by_steps, args, calls=4, breaks=1, max_recompiles=0)
    assert c["dynamic_followups"] == 0 and c["graphs"] == 2, c


def helper(row, c):
    return torch.repeat_interleave(row.exp(), c, dim=0).mean(0, keepdim=True) * 3


def calls_in_the_loop(x, counts):
    out = x.new_zeros(0, x.shape[-1])
    for row, c in zip(x, counts):
        if c.sum() == 0:
            continue
        out = torch.cat([out, helper(row, c)])
    return out.tanh()


def test_a_function_called_in_the_loop_is_still_captured():
    def args(i):
        g = torch.Generator().manual_seed(i)
        counts = torch.randint(0, 3, (4, 5), generator=g)
        counts[i % 4] = 0  # one row skipped by `continue`
        return torch.randn(4, 5, 3, generator=g), counts

    check(calls_in_the_loop, args, calls=3, max_recompiles=10)
    # helper's own frame is translated (it breaks at repeat_interleave by
    # itself), though the loop calling it runs in Python.
    assert any(e.function.startswith("helper") for e in convert.EVENTS), [e.function for e in convert.EVENTS]
    assert counters()["internal_errors"] == 0


def leaves_early(x, limits):
    total = x.sum()
    for k, lim in enumerate(limits):
        n = int(lim)
        if n > 4:
            return total * k
        if n == 0:
            break
        total = total + x[:n].sum()
    else:
        return total - 1
    return total + 1


def test_return_break_and_else_in_a_loop_left_to_python():
    for limits in ([1, 2, 5, 3], [2, 0, 3], [1, 1, 1]):
        def args(i, limits=limits):
            return torch.randn(6), torch.tensor(limits)
        check(leaves_early, args, calls=2, max_recompiles=10)
