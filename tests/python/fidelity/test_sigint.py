"""Issue 19, signals: Ctrl-C (SIGINT) while a first call is being captured and
compiled raises KeyboardInterrupt out of that call, as it would out of eager
code; the call does not return normally. The eager reference run is
interrupted inside the same (slow, looping) program."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import devices, env, write  # noqa: E402

# A long straight-line function whose first call (capture and compile) takes
# about a second here, idle (20000 lines of `torch.add(x, i, alpha=...)`: 1.0 s
# on cpu, measured; under the step budget, GB016 at 200000 instructions: about 9
# instructions a line). The signal is sent 0.4 s after the child says it starts
# that call, so it lands inside it however fast the recorder becomes, as long
# as the call takes longer than that (12000 lines and a 1.5 s wait failed in a
# fresh-clone run: that first call takes 0.55-0.7 s).
LINES = 20000
SIGNAL_AFTER_S = 0.4
BODY = '''\
import sys
import time

import torch

src = "def big(x):\\n" + "".join(f"    x = torch.add(x, {{i}}, alpha=1.0001)\\n" for i in range({lines})) + "    return x\\n"
ns = {{"torch": torch}}
exec(compile(src, "<big>", "exec"), ns)
big = jit(ns["big"])
x = torch.ones(2)
calls = 0
try:
    print("start", flush=True)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 30:
        big(x)
        calls += 1
    print("no interrupt", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
print("calls returned normally:", calls, file=sys.stderr)
'''


def _interrupted(script: Path, device: str) -> tuple:
    p = subprocess.Popen([sys.executable, str(script)], cwd=script.parent, env=env(device),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "start\n"
    time.sleep(SIGNAL_AFTER_S)  # into the first call's capture when jitted
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    return p.returncode, out, err


# Once flaky (xpu0 under load: exit -11 in 3 of 6 runs here; reported as -2 before): the
# KeyboardInterrupt raised inside xacc's gc callback was reported as ignored, the
# capture went on into the xpu0 compile, whose recursive emitter overflowed the stack
# on this 12,000-node chain. Now a noted signal stops every stage (Note [Noted
# interrupts stop every stage]) and the emitter is iterative.
@pytest.mark.parametrize("device", devices())
def test_sigint_during_first_compile_raises_keyboardinterrupt(tmp_path, device):
    script = write(tmp_path, BODY.format(lines=LINES))
    rc, out, err = _interrupted(script, "")
    assert (rc, out) == (0, "interrupted\n"), out + err
    assert "calls returned normally: 0" not in err  # eager: interrupted in some later call
    rc, out, err = _interrupted(script, device)
    assert (rc, out) == (0, "interrupted\n"), out + err
    # Jitted: the signal came while the first call compiled, and that call raised.
    assert "calls returned normally: 0" in err, out + err
