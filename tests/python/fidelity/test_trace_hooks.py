"""Issue 19, trace and profile hooks: under sys.settrace / sys.setprofile a
jitted function gives the call, line, return (and C call) events eager Python
gives, whether it was compiled before the hook was set or is first called under
it; breakpoint() inside a jitted function stops pdb in the user's frame, as in
eager (pdb driven through stdin). Events are those of the script's own file:
the frames of the jit wrapper itself are not the user's. Eager and jitted runs
each in their own process."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import devices, run, same, write  # noqa: E402

BODY = '''\
import sys

import torch


def helper(y):
    return y * 2


@jit
def f(x):
    y = x + 1
    z = helper(y)
    return z.sum()


@jit
def g(x):
    a = x.cos()
    return a - 1


events = []


def hook(frame, event, arg):
    if frame.f_code.co_filename == __file__ and frame.f_code.co_name != "hook":
        name = getattr(arg, "__name__", "") if event.startswith("c_") else ""
        events.append((event, frame.f_code.co_name, frame.f_lineno, name))
    return hook


x = torch.ones(3)
print(float(f(x)))  # f compiled (and cached) before any hook is set
for install, remove in ((lambda: sys.settrace(hook), lambda: sys.settrace(None)),
                        (lambda: sys.setprofile(hook), lambda: sys.setprofile(None))):
    events.clear()
    install()
    r1 = f(x)  # a cached function
    r2 = g(x)  # first called under the hook
    remove()
    print(float(r1), [round(v, 4) for v in r2.tolist()])
    for e in events:
        print(*e)
print(round(float(g(x).sum()), 4))  # no hook: compiled as usual (xpu0: cos to float tolerance)
'''

PDB = '''\
import torch


@jit
def f(x):
    y = x * 2
    breakpoint()
    z = y + 1
    return z.sum()


print("result", float(f(torch.ones(4))))
'''


@pytest.mark.parametrize("device", devices())
def test_settrace_and_setprofile_events(tmp_path, device):
    script = write(tmp_path, BODY)
    eager, jitted = run(script), run(script, device)
    assert "\nline f " in eager.stdout and "c_call" in eager.stdout
    same(eager, jitted, device)


@pytest.mark.parametrize("device", devices())
def test_breakpoint_stops_pdb_in_the_users_frame(tmp_path, device):
    script = write(tmp_path, PDB)
    commands = "p y.tolist()\nn\np sorted(locals())\nn\np z.tolist()\nc\n"
    eager, jitted = run(script, stdin=commands), run(script, device, stdin=commands)
    assert "[2.0, 2.0, 2.0, 2.0]" in eager.stdout and "result 12.0" in eager.stdout
    same(eager, jitted, device)
