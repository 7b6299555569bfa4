"""The per-version build trees (`make venvs`: build-py3.X beside build/, issue 20) compile
the Python-independent core with exactly build/'s command lines, so that ccache serves
those objects from the 3.11 build and a further version compiles only what includes
Python or torch headers (Note [One core build] in cmake/XaccDeps.cmake); and that the
objects including torch but not Python have one command line in every build-py3.X (the
CUDA torch's headers through <tree>/torch-include), so ccache compiles them for one
further version only. Reads the real trees' compile_commands.json; skipped where `make
venvs` has built no further version (or, for the second test, fewer than two)."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _commands(tree: Path) -> dict[str, str]:
    # A source generated into the tree is named by the tree's path, as ccache sees it
    # (CCACHE_BASEDIR: paths relative to the tree).
    def rel(text: str) -> str:
        return text.replace(str(tree.resolve()), "<tree>")
    entries = json.loads((tree / "compile_commands.json").read_text())
    return {rel(e["file"]): rel(e["command"]) for e in entries}


def _includes_torch(command: str) -> bool:
    return "torch/include" in command or "torch-include" in command


def _includes_python(command: str) -> bool:
    return "include/python3" in command


def _version_trees() -> list[Path]:
    return sorted(t for t in ROOT.glob("build-py3.*") if (t / "compile_commands.json").is_file())


@pytest.mark.skipif(not (ROOT / "build" / "compile_commands.json").is_file() or not _version_trees(),
                    reason="no build/ and build-py3.X trees to compare")
@pytest.mark.parametrize("tree", _version_trees(), ids=lambda t: t.name)
def test_core_objects_share_the_311_command_line(tree):
    base = _commands(ROOT / "build")
    core = {f: c for f, c in base.items()
            if not _includes_torch(c) and not _includes_python(c)}
    assert core, "build/ compiles no Python-independent object?"
    mine = _commands(tree)
    shared = [f for f in core if f in mine]
    # The per-version tree builds the core (tests excepted: they are built in build/ only).
    assert len(shared) >= len([f for f in core if "/tests/" not in f]), (tree.name, len(shared))
    differ = {Path(f).name: mine[f] for f in shared if mine[f] != core[f]}
    assert not differ, f"{tree.name}: {len(differ)} core objects compiled differently, e.g. {next(iter(differ.items()))}"


@pytest.mark.skipif(len(_version_trees()) < 2, reason="fewer than two build-py3.X trees to compare")
def test_torch_objects_share_one_command_line_across_versions():
    first, *others = _version_trees()
    torch_only = {f: c for f, c in _commands(first).items() if _includes_torch(c) and not _includes_python(c)}
    assert torch_only, f"{first.name} compiles no object that includes torch but not Python?"
    for tree in others:
        mine = _commands(tree)
        differ = {Path(f).name: mine.get(f) for f, c in torch_only.items() if mine.get(f) != c}
        assert not differ, (f"{tree.name}: {len(differ)} of {len(torch_only)} torch objects compiled "
                            f"differently from {first.name}'s, e.g. {next(iter(differ.items()))}")
