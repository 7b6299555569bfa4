"""Note [Instance dicts of outside objects] (TranslateValues.cpp): the frame's
attribute writes to an object from outside are replayed after the graph, so
the object's real `__dict__` (or `vars(obj)`) read in the frame would miss
them. Before the rule, `self.flag = 7; self.__dict__.get("flag")` gave None
where eager gives 7: a silently wrong value. Now such a read, or a write after
the dict was read, breaks, and Python gives eager's answer."""

import torch

import xacc


class WriteThenRead(torch.nn.Module):
    def forward(self, x):
        self.flag = 7
        return x + 1, self.__dict__.get("flag"), "flag" in vars(self)


class ReadThenWrite(torch.nn.Module):
    def forward(self, x):
        d = self.__dict__
        self.flag = 8
        return x * 2, d.get("flag"), len(d) == len(vars(self))


class StateThenDict(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        y = self.lin(x)
        self.state = y * 2
        return y, self.__dict__.get("state")


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, torch.Tensor):
            assert isinstance(g, torch.Tensor) and torch.equal(g, w), (g, w)
        else:
            assert g == w and type(g) is type(w), (g, w)


def test_dict_read_after_a_replayed_write_sees_it():
    for cls in (WriteThenRead, ReadThenWrite):
        m, e = cls(), cls()
        f = xacc.jit(m)
        x = torch.ones(2)
        for _ in range(2):
            _same(f(x), e(x))
        assert m.flag == e.flag


def test_computed_tensor_state_read_through_the_dict():
    torch.manual_seed(0)
    m = StateThenDict()
    e = StateThenDict()
    e.load_state_dict(m.state_dict())
    f = xacc.jit(m)
    x = torch.ones(1, 2)
    for _ in range(2):
        got, want = f(x), e(x)
        assert torch.allclose(got[0], want[0]) and got[1] is not None and torch.allclose(got[1], want[1])
