#!/usr/bin/env bash
# Installs what xacc's build and tests need and is missing: Debian packages through
# apt-get, Python packages through pip. Idempotent and quick on a ready machine: it
# asks dpkg and importlib.metadata what is there and runs apt-get/pip only for what is
# not (no `apt-get update` and no pip resolution when nothing is missing).
#
# torch is pinned to 2.13.0 and installed first, from the CPU wheel pip's find-links
# points at; every later pip call carries a constraint so nothing can replace it.
# PYTHON (default: python3) selects the interpreter to install into.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
TORCH_VERSION="2.13.0"

APT_PACKAGES=(
  # toolchain
  build-essential cmake ninja-build ccache git pkg-config
  # MLIR/LLVM 22: libraries, mlir-opt, FileCheck, not, lit-22
  libmlir-22-dev llvm-22-dev mlir-22-tools llvm-22-tools
  # runtime, formatting, JSON, CLI, unit tests, pictures
  libtbb-dev libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev graphviz
  # headless rendering of the export report (tests/python/export)
  chromium
)

# Python packages after torch: "import-name:pip-name".
PIP_PACKAGES=(
  pybind11:pybind11 pytest:pytest hypothesis:hypothesis lit:lit numpy:numpy
  onnx:onnx onnxruntime:onnxruntime matplotlib:matplotlib
  # GPT-2 small from a config with random weights (benchmarks/models)
  transformers:transformers
)

log() { printf -- '-- install-deps: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "install-deps: need root (or sudo) to run: $*" >&2
    exit 1
  fi
}

# --- Debian packages -------------------------------------------------------------
missing_apt=()
installed="$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${APT_PACKAGES[@]}" 2>/dev/null || true)"
for pkg in "${APT_PACKAGES[@]}"; do
  if ! grep -qE "^${pkg} ii" <<<"$installed"; then
    missing_apt+=("$pkg")
  fi
done
if [ ${#missing_apt[@]} -gt 0 ]; then
  log "apt packages missing: ${missing_apt[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing_apt[@]}"
else
  log "apt packages: all present"
fi

# --- Python packages -------------------------------------------------------------
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "install-deps: $PYTHON not found (set PYTHON=...)" >&2
  exit 1
fi

constraints="$(mktemp)"
trap 'rm -f "$constraints"' EXIT
echo "torch==${TORCH_VERSION}" >"$constraints"
pip_install() {
  "$PYTHON" -m pip install --disable-pip-version-check --constraint "$constraints" "$@"
}

# Ask importlib.metadata (no imports, no resolution) what is installed.
status="$("$PYTHON" - "$TORCH_VERSION" "${PIP_PACKAGES[@]}" <<'EOF'
import importlib.metadata as md
import importlib.util
import sys

want_torch, specs = sys.argv[1], sys.argv[2:]
try:
    torch_ok = md.version("torch").split("+")[0] == want_torch
except md.PackageNotFoundError:
    torch_ok = False
print("torch" if torch_ok else "torch-missing")
# Editable installs need PEP 660 support and a built-in bdist_wheel (setuptools >= 70.1).
try:
    have = tuple(int(x) for x in md.version("setuptools").split(".")[:2])
except (md.PackageNotFoundError, ValueError):
    have = (0, 0)
if have < (70, 1):
    print("missing setuptools>=70.1")
for spec in specs:
    module, dist = spec.split(":")
    if importlib.util.find_spec(module) is None:
        print("missing", dist)
EOF
)"

if grep -qx "torch-missing" <<<"$status"; then
  log "installing torch==${TORCH_VERSION}"
  pip_install "torch==${TORCH_VERSION}"
else
  log "torch ${TORCH_VERSION}: present"
fi

mapfile -t missing_pip < <(sed -n "s/^missing //p" <<<"$status")
if [ ${#missing_pip[@]} -gt 0 ]; then
  log "installing ${missing_pip[*]}"
  pip_install "${missing_pip[@]}"
else
  log "python packages: all present"
fi

# A last guard: the torch that is importable now is the pinned one.
"$PYTHON" - "$TORCH_VERSION" <<'EOF'
import importlib.metadata as md
import sys

have = md.version("torch")
if have.split("+")[0] != sys.argv[1]:
    sys.exit(f"install-deps: torch {have} is installed, need {sys.argv[1]}")
EOF
