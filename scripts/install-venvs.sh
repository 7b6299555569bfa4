#!/usr/bin/env bash
# Creates build/venv-3.12 and build/venv-3.13 (issue 20): one virtual environment per
# further CPython that xacc builds for, each with torch 2.13.0 (PyPI's build for that
# version: the CUDA one, which runs on the CPU) and the test dependencies, at exactly
# the versions in requirements/lock-cpXY.txt (a `pip freeze` of a working venv, so a
# fresh machine reproduces it). A version whose interpreter is missing is skipped with
# a message. Idempotent: a venv that already matches its lock is left alone.
#
# XACC_VENV_VERSIONS (default "3.12 3.13") selects the versions.
# `install-venvs.sh --which 3.12` prints the interpreter that would be used (exit 1 when
# there is none) and installs nothing: scripts/run_tests.py asks it whether a version
# without a venv is not installed (skipped) or was not set up (failed).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf -- '-- install-venvs: %s\n' "$*"; }

# The interpreter for version $1: pythonX.Y on PATH if it runs, else pyenv's newest.
find_python() {
  local v="$1" cand
  for cand in "$(command -v "python$v" 2>/dev/null || true)" \
              $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v" 2>/dev/null | sort -V -r); do
    if [ -n "$cand" ] && "$cand" -c 'import sys' >/dev/null 2>&1; then
      echo "$cand"
      return 0
    fi
  done
  return 1
}

if [ "${1:-}" = "--which" ]; then
  find_python "${2:?--which needs a version}"
  exit
fi

for v in ${XACC_VENV_VERSIONS:-3.12 3.13}; do
  tag="cp${v/./}"
  lock="$REPO/requirements/lock-$tag.txt"
  venv="$REPO/build/venv-$v"
  if ! py="$(find_python "$v")"; then
    log "python$v not found: no build/venv-$v (install CPython $v, e.g. pyenv install $v)"
    continue
  fi
  if [ ! -f "$lock" ]; then
    log "requirements/lock-$tag.txt missing: no build/venv-$v"
    continue
  fi
  if [ ! -x "$venv/bin/python" ]; then
    log "creating build/venv-$v with $py"
    "$py" -m venv "$venv"
  fi
  # Every lock line the venv does not have at exactly that version.
  wrong="$("$venv/bin/python" - "$lock" <<'PYEOF'
import importlib.metadata as md
import sys

for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        have = None
    if have != want:
        print(line)
PYEOF
)"
  if [ -z "$wrong" ]; then
    log "build/venv-$v: all packages at their pinned versions"
    continue
  fi
  log "build/venv-$v: installing $(wc -l <<<"$wrong") pinned packages (torch first: several minutes)"
  "$venv/bin/python" -m pip install --disable-pip-version-check --constraint "$lock" \
    "$(grep -E '^torch==' "$lock")"
  "$venv/bin/python" -m pip install --disable-pip-version-check --constraint "$lock" -r "$lock"
done
