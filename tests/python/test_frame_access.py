"""Note [Frame access]: CPython's frame internals and the private or unstable APIs that
differ per version (co_extra, the PEP 523 eval-frame functions) are reached only from
csrc/lib/capture/EvalFrame3XX.cpp (one file per version) and the version-neutral hook they
include, EvalFrameImpl.inc; the rest of xacc goes through xacc/capture/EvalFrame.h. A
use elsewhere would compile against one version's spelling only (3.11's _PyCode_GetExtra
is PyUnstable_Code_GetExtra from 3.12 on)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION_FILES = re.compile(r"EvalFrame3\d+\.cpp|EvalFrameImpl\.inc")
PER_VERSION = re.compile(r"\b(Py_BUILD_CORE|pycore_\w+|_PyInterpreterFrame|_PyCode_[GS]etExtra|"
                         r"_PyEval_RequestCodeExtraIndex|PyUnstable_\w+|_PyInterpreterState_\w+EvalFrameFunc)\b")


def test_version_internals_only_in_the_frame_access_files():
    found = []
    for path in sorted((ROOT / "csrc").rglob("*")):
        if path.suffix not in (".cpp", ".h", ".inc", ".def") or VERSION_FILES.fullmatch(path.name):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            code = line.split("//", 1)[0]
            if m := PER_VERSION.search(code):
                found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)}")
    assert not found, "per-version CPython API outside EvalFrame3XX.cpp:\n" + "\n".join(found)
