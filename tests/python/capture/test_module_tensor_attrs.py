"""`self.name = tensor` in a forward, where the tensor is computed by the graph
and `name` is no parameter, buffer or child (RecurrentGemma's
`self.recurrent_states = recurrent_states`): nn.Module.__setattr__ sends a
plain tensor to object.__setattr__, so the write is replayed after the graph
(Note [Computed tensors stored on modules]) and later reads in the frame see
it. What __setattr__ would register (a Parameter, a tensor into a buffer's
name) or what may be either (a tensor read from outside) still breaks (GB007).
Each test fails on 92f448f (GB007 on the first write) and passes now."""

import torch

from xacc.explain import explain
from xacc.jit import counters, jit


class Scan(torch.nn.Module):
    """A recurrent cell keeping its state on the module between steps."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.state = None

    def step(self, x):
        s = self.state
        h = self.lin(x) if s is None else self.lin(x) + s
        self.state = h.tanh()
        return h

    def forward(self, x, reset=True):
        if reset:
            self.state = None
        a = self.step(x)
        b = self.step(x)  # reads the state the first step wrote
        return a + b, self.state


def fresh_pair():
    torch.manual_seed(0)
    m, ref = Scan(), Scan()
    ref.load_state_dict(m.state_dict())
    return m, ref


def test_state_written_and_read_back_in_one_graph():
    m, ref = fresh_pair()
    x = torch.randn(2, 4)
    out = explain(m)(x)
    assert out.break_reasons == [], out.break_reasons
    m, ref = fresh_pair()
    j = jit(m)
    for _ in range(3):
        got, want = j(x), ref(x)
        torch.testing.assert_close(got, want)
        # the module holds the very tensor returned, as in eager
        assert got[1] is m.state and want[1] is ref.state
        assert "state" in m.__dict__ and "state" not in m._buffers
    assert counters()["breaks"] == 0


def test_state_carried_to_the_next_call_is_read_afresh():
    m, ref = fresh_pair()
    j = jit(m)
    x = torch.randn(2, 4)
    for _ in range(3):  # without reset the previous call's state feeds this one
        got, want = j(x, reset=False), ref(x, reset=False)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(m.state, ref.state)


class Stores(torch.nn.Module):
    def __init__(self, what):
        super().__init__()
        self.what = what
        self.register_buffer("buf", torch.zeros(3))
        self.p = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        if self.what == "param":
            self.other = self.p  # a Parameter: __setattr__ registers it
        elif self.what == "buffer":
            self.buf = x * 3  # a new tensor under a buffer's name goes into _buffers
        elif self.what == "input":
            self.kept = x  # read from outside: may be an nn.Buffer-flagged tensor
        return x + 1


def test_what_setattr_registers_still_breaks():
    for what in ("param", "buffer", "input"):
        x = torch.randn(3)
        out = explain(Stores(what))(x)
        assert [b.code for b in out.break_reasons] == ["GB007"], (what, out.break_reasons)
        m, ref = Stores(what), Stores(what)
        ref.load_state_dict(m.state_dict())
        torch.testing.assert_close(jit(m)(x), ref(x))
        assert list(m._parameters) == list(ref._parameters), what
        assert list(m._buffers) == list(ref._buffers), what
        torch.testing.assert_close(m.buf, ref.buf)
