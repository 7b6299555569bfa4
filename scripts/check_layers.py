#!/usr/bin/env python3
"""Checks the layering of the sources (issue #21): C++ includes and Python
imports may only point down the stack

    support <- ir <- {camel, passes, runtime, capture} <- backends <- python, tools

and Python modules may not import each other in a cycle.

C++ components are the folders of `csrc/lib/` and `csrc/include/xacc/` (`backend`,
`onnx` and `executors` are backends), plus `csrc/python` and `csrc/tools`. An
include is resolved to its component by its path (`"xacc/<component>/..."` or a
relative `"../<component>/..."`). Components of one layer may use each other, but
not in a cycle.

Python: every `import` and `from ... import` of the packages `xacc`, `xjit` and
`camel_lang`, wherever it stands in a module (a lazy import in a function is a
dependency too), forms a graph over modules; a cycle in it fails the check, and
so does an import of a tool (`xjit`, `camel_lang`) from the library (`xacc`).
A module's import of its own package's `__init__` is not counted (a package
importing its submodules is how packages are built), nor is `if TYPE_CHECKING:`.

Usage: check_layers.py [ROOT]   (exit 0: clean; 1: violations, one a line)
"""

from __future__ import annotations

import ast
import os
import re
import sys
from pathlib import Path

# Layer of each C++ component: an include may go to the same or a lower layer.
LAYERS = {
    "support": 0,
    "ir": 1,
    "camel": 2, "passes": 2, "runtime": 2, "capture": 2,
    "backend": 3, "onnx": 3, "executors": 3,
    "python": 4, "tools": 4,
}
PY_PACKAGES = ("xacc", "xjit", "camel_lang")
# Python packages by layer: the library below the tools built on it.
PY_LAYERS = {"xacc": 0, "xjit": 1, "camel_lang": 1}
CPP_SUFFIXES = (".cpp", ".h", ".def", ".inc", ".in")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)


def cpp_component(rel: Path) -> str | None:
    """The component of a source file (path relative to the root)."""
    p = rel.parts
    if len(p) >= 3 and p[0] == "csrc" and p[1] == "lib":
        return p[2]
    if len(p) >= 4 and p[0] == "csrc" and p[1] == "include" and p[2] == "xacc":
        return p[3]
    if len(p) >= 2 and p[0] == "csrc" and p[1] in ("python", "tools"):
        return p[1]
    return None


def include_component(root: Path, src: Path, inc: str) -> str | None:
    if inc.startswith("xacc/"):
        return inc.split("/")[1]
    if inc.startswith(".."):
        target = (src.parent / inc).resolve()
        try:
            return cpp_component(target.relative_to(root.resolve()))
        except ValueError:
            return None
    return None  # same folder, or a system/third-party header


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check_cpp(root: Path) -> list[str]:
    problems = []
    edges: dict[str, set[str]] = {}
    for path in sorted((root / "csrc").rglob("*")):
        if path.suffix not in CPP_SUFFIXES or not path.is_file():
            continue
        rel = path.relative_to(root)
        src = cpp_component(rel)
        if src is None:
            continue
        text = path.read_text(errors="replace")
        for m in INCLUDE.finditer(text):
            dst = include_component(root, path, m.group(1))
            if dst is None or dst == src:
                continue
            if dst not in LAYERS or src not in LAYERS:
                problems.append(f"{rel}: include \"{m.group(1)}\": component '{dst if dst not in LAYERS else src}' "
                                "has no layer (add it to LAYERS in scripts/check_layers.py)")
                continue
            line = text.count("\n", 0, m.start(1)) + 1
            if LAYERS[dst] > LAYERS[src]:
                problems.append(f"{rel}:{line}: {src} (layer {LAYERS[src]}) includes \"{m.group(1)}\" of "
                                f"{dst} (layer {LAYERS[dst]}): an include against the layering")
            elif LAYERS[dst] == LAYERS[src]:
                edges.setdefault(src, set()).add(dst)
    for cyc in find_cycles(edges):
        problems.append("C++ components include each other in a cycle: " + " <-> ".join(cyc))
    return problems


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def py_imports(tree: ast.Module, name: str, is_pkg: bool) -> list[tuple[str, int]]:
    """(imported module, line) for every import in the module, TYPE_CHECKING blocks left out."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                for n in ast.walk(sub):
                    skip.add(id(n))
    package = name if is_pkg else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((mod, node.lineno))
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one.
            out += [(f"{mod}.{a.name}", node.lineno) for a in node.names]
    return out


def check_python(root: Path) -> list[str]:
    modules: dict[str, Path] = {}
    for pkg in PY_PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            if "__pycache__" not in path.parts:
                modules[module_name(root, path)] = path
    edges: dict[str, set[str]] = {}
    problems = []
    for name, path in modules.items():
        try:
            tree = ast.parse(path.read_text(), str(path))
        except SyntaxError as e:
            problems.append(f"{path.relative_to(root)}:{e.lineno}: syntax error: {e.msg}")
            continue
        is_pkg = path.name == "__init__.py"
        for mod, line in py_imports(tree, name, is_pkg):
            top, dst_top = name.split(".")[0], mod.split(".")[0]
            if dst_top in PY_LAYERS and top in PY_LAYERS and PY_LAYERS[dst_top] > PY_LAYERS[top]:
                problems.append(f"{path.relative_to(root)}:{line}: {top} imports {mod} "
                                "(a tool): an import against the layering")
                continue
            if mod not in modules or mod == name:
                continue
            if name.startswith(mod + "."):
                continue  # a submodule importing its own package (__init__)
            edges.setdefault(name, set()).add(mod)
    for cyc in find_cycles(edges):
        problems.append("Python modules import each other in a cycle: " + " <-> ".join(cyc))
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    problems = check_cpp(root) + check_python(root)
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} violation(s)" if problems else "check_layers: clean",
          file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
