"""A launch that never ends (test_dist_proc.py): the parent spawns one child and
both wait in functions named for the test to find in their stack dumps.

    python hang.py"""

import multiprocessing as mp
import time

import teardown  # noqa: F401  registers the stack dump (teardown.STACK_SIGNAL)


def child_waits_forever():
    while True:
        time.sleep(1)


def parent_waits_forever():
    while True:
        time.sleep(1)


if __name__ == "__main__":
    mp.set_start_method("spawn")
    mp.Process(target=child_waits_forever).start()
    parent_waits_forever()
