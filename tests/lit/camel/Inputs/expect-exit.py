"""Runs a command and succeeds only if it exits with the given status:
    expect-exit.py STATUS COMMAND [ARGS...]
(lit's internal shell has no `$?`.)"""
import subprocess
import sys

want = int(sys.argv[1])
got = subprocess.run(sys.argv[2:]).returncode
if got != want:
    print(f"expected exit status {want}, got {got}: {' '.join(sys.argv[2:])}", file=sys.stderr)
    sys.exit(1)
