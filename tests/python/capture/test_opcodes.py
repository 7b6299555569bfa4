"""The C++ translator's opcode tables (csrc/lib/capture/translate/Opcodes3XX.def,
one per CPython minor version, and OpcodeNames.def, their union) are generated
from each CPython's own `opcode` module and must match the running one."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / f"csrc/lib/capture/translate/Opcodes{sys.version_info[0]}{sys.version_info[1]}.def"


def test_opcode_table_matches_cpython():
    r = subprocess.run([sys.executable, str(ROOT / "scripts/gen_opcodes.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_every_opcode_is_in_the_table():
    import opcode

    text = TABLE.read_text()
    names = (ROOT / "csrc/lib/capture/translate/OpcodeNames.def").read_text()
    for num, name in enumerate(opcode.opname[:256]):
        if not name.startswith("<") and not name.startswith("INSTRUMENTED_"):
            assert f"XACC_OPCODE({name}, {num}, " in text, name
            assert f"XACC_OPNAME({name})" in names, name
