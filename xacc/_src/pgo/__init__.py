"""Profile-guided optimization (docs/pgo.md).

The small API other parts of xacc build on (the capture in convert.py, the
explain report, and passes that want measurements of "profiled inputs"):

  profile.load(path) -> dict        read + validate a profile; ProfileError names the file
  profile.save(data, path)          atomic write
  profile.code_key(code) -> str     "<file>:<qualname>:<firstlineno>", the frame key
  profile.graph_hash(gir) -> str    the graph key inside a frame record
  session.resolve(pgo) -> Session   for a `pgo=` argument (True, a path, Config); None: no PGO
  session.flush()                   write every recording session's profile now
  Session.mode                      "record" or "use"
  Session.profile                   the profile read (use mode), else None
  Session.decisions(code, device)   decisions.FrameDecisions for a frame, or None
  Session.frames()                  this run's frame records (record mode), as written
  Session.device_options()          options for CompiledGraph compiles (profile=1 when recording)

A frame record (profile["frames"][code_key]) holds per graph (by graph_hash) its
call count, the shapes and dtypes of its inputs per call, its run time and, on
xpu devices, per region ("regions": key, ops, kernel and aten times) and per
fallback op times: what a pass needs to judge a region on the profiled inputs.
Passes may keep their own data in profile["extra"][<pass name>].
"""

from xacc._src.pgo.decisions import THRESHOLDS, FrameDecisions, Thresholds
from xacc._src.pgo.profile import ProfileError, code_key, graph_hash, load, save
from xacc._src.pgo.session import Config, PGOWarning, Session, flush, resolve

__all__ = ["Config", "Session", "ProfileError", "PGOWarning", "FrameDecisions", "Thresholds", "THRESHOLDS",
           "resolve", "flush", "load", "save", "code_key", "graph_hash"]
