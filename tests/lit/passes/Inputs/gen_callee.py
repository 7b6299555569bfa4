"""Prints a module whose @main calls @body, a chain of N arith.add nodes."""
import sys

n = int(sys.argv[1])
print("graph @body(%a: i64) -> i64 {")
prev = "%a"
for i in range(n):
    print(f"  %v{i} = arith.add({prev}, %a) : i64")
    prev = f"%v{i}"
print(f"  return {prev}")
print("}")
print("graph @main(%x: i64) -> i64 {")
print("  %r = func.call(%x) {callee = @body} : i64")
print("  return %r")
print("}")
