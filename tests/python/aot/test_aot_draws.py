"""AOT artifacts of frames with draws from NumPy's and Python's global random
generators (Note [Global RNG draws at run time] in TranslateDraws.cpp): the
call the frame's code makes (a draws.Draw) is stored by the generator's names,
so a loaded one draws from the loading process's global generator, not from a
copy pickled into the artifact (a bound method pickles a copy of its
generator); and a loaded artifact leaves the generators as eager does."""

import random

import numpy as np

from test_aot import run_py
from xacc._src.aot import codec
from xacc._src.capture.draws import Draw


def test_a_stored_draw_draws_from_the_global_generators():
    for gen, where, args in ((np.random.mtrand._rand, ("numpy.random.mtrand", "_rand", "uniform"), (0, 1)),
                             (random._inst, ("random", "_inst", "random"), ())):
        d = codec.decode(codec.encode(Draw(getattr(gen, where[2]), where, args, {})))
        assert d.method.__self__ is gen
        np.random.seed(7)
        random.seed(7)
        want = getattr(gen, where[2])(*args)
        np.random.seed(7)
        random.seed(7)
        assert d() == want


BUILD = """
    import torch, xacc, models
    info = xacc.aot(models.with_draw, (torch.randn(4, 8),), "draw.xacc", device="cpu")
"""

LOAD = """
    import random
    import numpy as np
    import torch, xacc, models
    f = xacc.load("draw.xacc")
    x = torch.randn(4, 8)
    for seed in (1, 2):
        np.random.seed(seed); random.seed(seed)
        want = models.with_draw(x)
        want_state = np.random.get_state()[1].tolist(), np.random.get_state()[2], random.getstate()
        np.random.seed(seed); random.seed(seed)
        got = f(x)
        got_state = np.random.get_state()[1].tolist(), np.random.get_state()[2], random.getstate()
        print("equal", torch.equal(got, want), got_state == want_state)
"""


def test_a_loaded_artifact_draws_as_eager(tmp_path):
    run_py(BUILD, tmp_path)
    p = run_py(LOAD, tmp_path)
    assert p.stdout.count("equal True True") == 2, p.stdout + p.stderr
