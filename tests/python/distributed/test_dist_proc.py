"""dist_proc.run on a launch that hangs: the failure names where every process
of the launch waited (each writes its threads' Python stacks before the session
is killed), and no process of it outlives the test."""

from __future__ import annotations

import os
import uuid

import pytest

from dist_proc import SCRIPTS, run


def test_a_hang_reports_every_process_stack():
    # A token in the launch's environment marks its processes (the spawned child's command
    # line does not name hang.py), so another test run on this machine does not count.
    mark = uuid.uuid4().hex
    token = f"XACC_HANG_TEST={mark}".encode()
    with pytest.raises(AssertionError) as e:
        run([str(SCRIPTS / "hang.py")], timeout=20, env={"XACC_HANG_TEST": mark}, relaunch_hang=False)
    msg = str(e.value)
    assert "ran past 20 s" in msg
    assert "in parent_waits_forever" in msg, msg
    assert "in child_waits_forever" in msg, msg
    assert "thread 0x" in msg.lower()  # faulthandler's dump of every thread, not a traceback
    # Nothing of the launch is left: no process carries its token any more.
    left = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if token in f.read().split(b"\0"):
                        left.append(pid)
            except OSError:
                pass
    assert not left
