"""index.html of an export renders in headless Chromium: a screenshot is taken
and the rendered DOM has the expected sections, links and inline SVGs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import torch

import xacc
from corpus import CASES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None,
                                reason="chromium is not installed (scripts/install-deps.sh installs Debian's chromium)")


def _chromium(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    # --no-sandbox: tests may run as root in a container; a profile dir per call
    # keeps parallel runs apart.
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--hide-scrollbars", *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    fn, make_args, _ = CASES["break_print"]
    torch.manual_seed(0)
    r = xacc.export(fn, *make_args(), dir=str(d / "out"))
    return r


def test_screenshot(export_dir, tmp_path):
    shot = tmp_path / "index.png"
    r = _chromium(f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1280,1600",
                  "file://" + os.path.abspath(export_dir.index))
    assert r.returncode == 0, r.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 1600)
    assert len(data) > 20_000  # a blank page compresses to a few KB


def test_rendered_dom_has_every_section(export_dir, tmp_path):
    r = _chromium(f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", "file://" + os.path.abspath(export_dir.index))
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    for section in ('id="summary"', 'id="frames"', 'id="frame-table"', 'id="source"', 'id="graphs"'):
        assert section in dom, section
    m = export_dir.manifest
    # one table row per compiled frame, one inline SVG per rendered graph
    assert len(re.findall(r'<tr class="outcome-', dom)) == len(m["frames"])
    assert dom.count("<svg") == sum(1 for f in m["frames"] if "svg" in f["artifacts"]) >= 2
    # the break line of the user's source is highlighted with its reason
    assert re.search(r'<span class="break" title="GB003[^"]*">.*print\(', dom)
    # every linked artifact exists
    links = re.findall(r'href="([^"#]+)"', dom)
    assert len(links) > 20
    for link in links:
        assert os.path.isfile(os.path.join(export_dir.dir, link)), link
    for kind in ("GIR", "DOT", "SVG", "bytecode", "source-like", "rewritten", "guards", "breaks.json", "resume 0"):
        assert f">{kind}</a>" in dom, kind
