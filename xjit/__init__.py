"""xjit: run an unmodified PyTorch script with XJIT capture.

    python -m xjit [--device cpu|xpu0] [--backend NAME] [--explain] [--fullgraph]
                   [--export DIR] [--compare] [--hot-calls N] script.py [args...]

--explain prints a readable report at exit (frames, graphs and ops, breaks with
source lines and hints, recompiles with the failing guard, time capturing,
compiling and running); --export DIR (or XACC_DUMP=DIR) writes every artifact of
the run and DIR/index.html; --compare replays every compiled graph on the
reference interpreter and the target's executor and prints the worst divergences.

Module-level code runs normally; every function it calls is eligible for
capture, and a function is translated at its second call (--hot-calls N): code
that runs once (constructors, set-up, argument parsing) runs as plain Python,
and frames without tensor or module arguments are never translated
(Note [Hot frames], xacc/_src/capture/hotness.py; --explain lists them). Device code is erased to the chosen device. A summary is printed to
stderr at exit."""

import os as _os

from xacc._src.capture import convert as _convert

_convert.skip_directory(_os.path.dirname(_os.path.abspath(__file__)))  # xjit's own frames run as plain Python
