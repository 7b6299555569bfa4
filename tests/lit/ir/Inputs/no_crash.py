"""Runs a command and succeeds when it exits 0, or 1 with a located
`file:line:col: error[Ennnn]` diagnostic on stderr -- fails on a crash (signal),
any other exit status or an unlocated error. Prints what it saw.

Usage: no_crash.py CMD ARGS...
"""
import re
import subprocess
import sys

r = subprocess.run(sys.argv[1:], capture_output=True, timeout=120)
err = r.stderr.decode("utf-8", errors="replace")
located = re.search(r"^[^:\n]+:\d+:\d+: error\[E\d{4}\]", err, re.M)
if r.returncode == 0:
    print("exit 0")
elif r.returncode == 1 and located:
    print("exit 1:", located.group(0))
else:
    print(f"FAIL: exit status {r.returncode}" + (" (crash)" if r.returncode < 0 else ""))
    print(err[-2000:])
    sys.exit(1)
