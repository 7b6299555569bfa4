"""Profile-guided optimization: `xacc.jit(fn, pgo=True)` (see docs/pgo.md).

    model = xacc.jit(model, pgo=True)                 # ./xacc_pgo.json: record if missing, else use
    model = xacc.jit(model, pgo="run.json")           # the same with a named file
    model = xacc.jit(model, pgo=xacc.pgo.Config("run.json", mode="record"))

* ``Config(path=None, mode="auto")`` - mode "record", "use" or "auto";
* ``load(path)`` - the profile as a dict (validated; ``ProfileError`` names the file);
* ``flush()`` - write recorded profiles now (they are written at exit anyway);
* ``THRESHOLDS`` - the knobs of the decisions (cold calls, region margin, ...).
"""

from xacc._src.pgo import THRESHOLDS, Config, PGOWarning, ProfileError, Thresholds, flush, load

__all__ = ["Config", "load", "flush", "ProfileError", "PGOWarning", "Thresholds", "THRESHOLDS"]
