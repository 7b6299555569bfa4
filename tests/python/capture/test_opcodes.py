"""The C++ translator's opcode table (csrc/lib/capture/translate/Opcodes311.def)
is generated from CPython's own `opcode` module and must match it."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_opcode_table_matches_cpython():
    r = subprocess.run([sys.executable, str(ROOT / "scripts/gen_opcodes311.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_opcode_is_in_the_table():
    import opcode

    text = (ROOT / "csrc/lib/capture/translate/Opcodes311.def").read_text()
    for num, name in enumerate(opcode.opname):
        if not name.startswith("<"):
            assert f"XACC_OPCODE({name}, {num}, " in text, name
