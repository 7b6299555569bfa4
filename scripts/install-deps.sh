#!/usr/bin/env bash
# Installs what xacc's build and tests need, at the versions pinned in requirements/:
# Debian packages from requirements/debian.txt through apt-get, PyPI packages from
# requirements/lock.txt through pip. Idempotent and quick on a ready machine: it asks
# dpkg and importlib.metadata what is there and runs apt-get/pip only for what is
# missing or at another version (no `apt-get update`, no pip resolution otherwise).
#
# torch is pinned to 2.13.0 and installed first, from the CPU wheel pip's find-links
# points at; every later pip call carries the lock as a constraint so nothing can
# replace it. PYTHON (default: python3) selects the interpreter to install into.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCK="$REPO/requirements/lock.txt"
DEBIAN_LOCK="$REPO/requirements/debian.txt"

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
mapfile -t apt_pins < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$DEBIAN_LOCK")
apt_names=("${apt_pins[@]%%=*}")
installed="$(dpkg-query -W -f='${Package}=${Version} ${db:Status-Abbrev}\n' "${apt_names[@]}" 2>/dev/null || true)"
missing_apt=()
for pin in "${apt_pins[@]}"; do
  if ! grep -qxF "$pin ii " <<<"$installed"; then
    missing_apt+=("$pin")
  fi
done
if [ ${#missing_apt[@]} -gt 0 ]; then
  log "apt packages missing or at another version: ${missing_apt[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends --allow-downgrades "${missing_apt[@]}"; then
    # The mirror keeps only each suite's newest version; say which pins moved.
    for pin in "${missing_apt[@]}"; do
      served="$(apt-cache policy "${pin%%=*}" | sed -n 's/^  Candidate: //p')"
      if [ "$served" != "${pin#*=}" ]; then
        echo "install-deps: WARNING: ${pin%%=*} ${pin#*=} is pinned in requirements/debian.txt" \
             "but the mirror serves ${served:-nothing}; installing that (update the pin)" >&2
      fi
    done
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      "${missing_apt[@]%%=*}"
  fi
else
  log "apt packages: all present at their pinned versions"
fi

# --- Python packages -------------------------------------------------------------
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "install-deps: $PYTHON not found (set PYTHON=...)" >&2
  exit 1
fi

# Every lock line that is not installed at exactly its version (torch's +cpu tag aside).
mapfile -t wrong < <("$PYTHON" - "$LOCK" <<'PYEOF'
import importlib.metadata as md
import sys

for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    name, want = line.split("==")
    try:
        have = md.version(name).split("+")[0]
    except md.PackageNotFoundError:
        have = None
    if have != want:
        print(line)
PYEOF
)

pip_install() {
  "$PYTHON" -m pip install --disable-pip-version-check --constraint "$LOCK" "$@"
}

torch_pin="$(grep -E '^torch==' "$LOCK")"
if printf '%s\n' "${wrong[@]}" | grep -qx "$torch_pin"; then
  log "installing $torch_pin"
  pip_install "$torch_pin"
fi
rest=()
for pin in "${wrong[@]}"; do
  [ "$pin" = "$torch_pin" ] || rest+=("$pin")
done
if [ ${#rest[@]} -gt 0 ]; then
  log "installing the pinned ${rest[*]}"
  pip_install --no-deps "${rest[@]}"
else
  log "python packages: all at their pinned versions"
fi

# A last guard: what is importable now is what the lock says.
"$PYTHON" -m pip check --disable-pip-version-check >/dev/null 2>&1 \
  || log "note: pip check reports conflicts outside the lock (packages this image had)"
"$PYTHON" - "$LOCK" <<'PYEOF'
import importlib.metadata as md
import sys

bad = []
for line in open(sys.argv[1]):
    line = line.split("#", 1)[0].strip()
    if line:
        name, want = line.split("==")
        have = md.version(name).split("+")[0]
        if have != want:
            bad.append(f"{name} {have} (lock: {want})")
if bad:
    sys.exit("install-deps: not at the locked versions: " + ", ".join(bad))
PYEOF
