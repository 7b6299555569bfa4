"""The end of every distributed test script: all ranks meet and the process group is
destroyed (`finish`), and no thread of a process group may run when the interpreter
exits (checked at exit; see the Note). Imported by the scripts before they call
`init_process_group`.

# Note [Gloo group at exit]: `torch.distributed.nn.functional` binds
# `group.WORLD` as the default argument of ten functions when it is first
# imported. torch._dynamo imports it, and a first functional collective, DDP and
# FSDP import torch._dynamo: imported after `init_process_group`, those defaults
# hold the default group, so `destroy_process_group` does not free it (its
# refcount went 10 -> 20 at the import, 12 after destroy). The group, its two
# `pt_gloo_runloop` threads, `gloo_tcp_loop` and rank 0's `pt_tcpstore_uv` then
# ran until the interpreter's finalization, where ~ProcessGroupGloo ran inside
# Py_FinalizeEx's module garbage collection (gdb breakpoint on the destructor).
# That is the state "a rank still connected at its exit" that came with gloo's
# exit abort ('terminate called without an active exception', issue 25): 5 in
# 30 runs of plain PyTorch before the scripts' barrier, a few per hundred after
# it. Imported before `init_process_group` the defaults are None (the default
# group at call time), `destroy_process_group` frees the group and joins its
# threads while Python runs; a group a live object still holds (a DDP module in
# the worker's frame) goes when the frame does. At exit this module checks that no
# thread of a group is left, and fails the process if one is. xacc holds
# no reference to a group (refcount unchanged by capture and runs on cpu and
# xpu0). FSDP2 (fully_shard, plain PyTorch, scripts/fsdp_*.py) still keeps its
# group's threads to the exit from a reference no Python object holds. One such
# holder is DTensor's thread-local native sharding-propagation cache (1-rank
# script under gdb: ~ProcessGroupGloo ran under
# cleanup_thread_local_native_sharding_propagator_caches at finalization, and
# torch._C._clear_DTensor_sharding_propagator_cache() before destroy freed the
# group); in fsdp_cpu.py clearing it, at finish or at exit, was not enough, so
# another holder remains (not located). Those scripts pass `group_at_exit`, the
# check reports instead of failing, and dist_proc.run relaunches once a run
# that reported it and ended in the abort. Every other launch is made once.
"""

import atexit
import faulthandler
import gc
import glob
import os
import signal
import sys

import torch.distributed as dist
import torch.distributed.nn  # noqa: F401  before init_process_group: Note [Gloo group at exit]

# A launch that runs past its time bound is sent STACK_SIGNAL before it is killed
# (dist_proc.run): every process of it writes every thread's Python stack to stderr,
# so a hang reports where each rank waits (a collective one rank never joined, or a
# teardown) instead of an empty stderr.
STACK_SIGNAL = signal.SIGUSR1
faulthandler.register(STACK_SIGNAL, all_threads=True)

# Thread names of a gloo process group and of the TCP store it rendezvoused on.
_GROUP_THREADS = ("pt_gloo", "gloo_", "pt_tcpstore")


def group_threads() -> list[str]:
    """Names of this process's threads that belong to a process group."""
    names = []
    for task in glob.glob("/proc/self/task/*/comm"):
        try:
            with open(task) as f:
                name = f.read().strip()
        except OSError:  # the thread ended while we listed them
            continue
        if name.startswith(_GROUP_THREADS):
            names.append(name)
    return sorted(names)


# What the at-exit check writes when a script allowed a group at exit: dist_proc
# relaunches such a run once if it also ended in gloo's exit abort.
GROUP_AT_EXIT = "process group threads still run at the interpreter's exit"
_allowed_at_exit = ""


def finish(group_at_exit: str = "") -> None:
    """Every rank is done before any leaves (rank 0 hosts the store); then the
    group is destroyed. `group_at_exit`: why this script's group may outlive
    destroy_process_group (then the at-exit check reports instead of failing)."""
    global _allowed_at_exit
    _allowed_at_exit = group_at_exit
    dist.barrier()
    dist.destroy_process_group()


def _check_at_exit() -> None:
    gc.collect()  # a group held only by a reference cycle (DDP's hooks) goes now
    left = group_threads()
    if not left:
        return
    sys.stderr.write(f"{GROUP_AT_EXIT}: {left} (Note [Gloo group at exit]; "
                     f"{'allowed: ' + _allowed_at_exit if _allowed_at_exit else 'a failure'})\n")
    sys.stderr.flush()
    if not _allowed_at_exit:
        os._exit(70)  # an exception in an atexit callback would not change the exit status


atexit.register(_check_at_exit)  # registered at import, so it runs after later callbacks
