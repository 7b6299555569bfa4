"""A broken stand-in for xacc-opt used by roundtrip.test: echoes its input plus
one more line each time (so printing never reaches a fixpoint), or with --garbage
rejects any input it printed itself."""
import sys

text = sys.stdin.read()
if "--garbage" in sys.argv and "#printed" in text:
    sys.stderr.write("<stdin>:1:1: error[E0001]: invalid character '#'\n")
    sys.exit(1)
sys.stdout.write(text + ("#printed\n" if "--garbage" in sys.argv else "// again\n"))
