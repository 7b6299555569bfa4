"""Issue 19, `python -m xjit script.py` is indistinguishable from `python
script.py`: a missing script, a syntax error, sys.exit(3) and an uncaught
exception print exactly what python prints with the same exit status;
__file__, sys.argv, sys.path[0], __main__ and warnings are those python gives.
The capture summary follows (on stderr) only when the script ran. Real
processes, run from the script's directory with a relative script path."""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fidelity_proc import env  # noqa: E402

SUMMARY = "\n== xjit summary =="


def _both(tmp: Path, name: str, *args: str) -> tuple:
    def go(cmd):
        return subprocess.run([sys.executable, *cmd, name, *args], cwd=tmp, env=env(), capture_output=True,
                              text=True, timeout=600)
    return go([]), go(["-m", "xjit"])


def _check(eager, xj, ran: bool) -> None:
    detail = f"--- python (rc {eager.returncode}) ---\n{eager.stderr}\n--- xjit (rc {xj.returncode}) ---\n{xj.stderr}"
    err = xj.stderr
    if ran:
        assert SUMMARY in err, detail
        err = err[:err.index(SUMMARY)]
    else:
        assert "xjit summary" not in err, detail
    assert xj.stdout == eager.stdout, detail + f"\nstdout python:\n{eager.stdout}\nstdout xjit:\n{xj.stdout}"
    assert err == eager.stderr, detail
    assert xj.returncode == eager.returncode, detail


def test_missing_script(tmp_path):
    eager, xj = _both(tmp_path, "nothere.py")
    assert eager.returncode == 2 and "can't open file" in eager.stderr
    _check(eager, xj, ran=False)


def test_syntax_error(tmp_path):
    (tmp_path / "bad.py").write_text("import torch\n\ndef f(x):\n    return (x +\n")
    eager, xj = _both(tmp_path, "bad.py")
    assert eager.returncode == 1 and "SyntaxError" in eager.stderr
    _check(eager, xj, ran=False)


SCRIPT = '''\
import os
import sys
import warnings

import torch


def f(x):
    return x.sin() * 2 + 1


def fail(n):
    raise ValueError(f"bad value {n}")


print("file", __file__, os.path.isabs(__file__))
print("argv", sys.argv)
print("path0", sys.path[0])
print("main", __name__, sys.modules["__main__"].__file__ == __file__, __spec__, __package__)
print("value", round(float(f(torch.ones(3)).sum()), 4))
warnings.warn("a module-level warning")
'''


def test_sys_exit(tmp_path):
    (tmp_path / "ex.py").write_text(SCRIPT + "sys.exit(3)\n")
    eager, xj = _both(tmp_path, "ex.py", "--flag", "arg")
    assert eager.returncode == 3
    _check(eager, xj, ran=True)


def test_uncaught_exception(tmp_path):
    (tmp_path / "exc.py").write_text(SCRIPT + "f(torch.ones(2))\nfail(7)\n")
    eager, xj = _both(tmp_path, "exc.py")
    assert eager.returncode == 1 and "ValueError: bad value 7" in eager.stderr
    _check(eager, xj, ran=True)


def test_clean_exit(tmp_path):
    (tmp_path / "ok.py").write_text(SCRIPT)
    eager, xj = _both(tmp_path, "ok.py")
    assert eager.returncode == 0
    _check(eager, xj, ran=True)
