"""The cold build's parsing processes: every job's result comes back once, a job's error is
raised in the building process, and no child process is left behind, whatever happens."""

from __future__ import annotations

import os
import signal

import pytest

from loa_mem.memory import forkjobs


def children() -> set[int]:
    """This process's children, running or not yet reaped (Linux's /proc). Not
    `os.waitpid(-1)`: in the whole suite other tests' processes may be this process's children
    too, and waiting would reap them."""
    found: set[int] = set()
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as listing:
                found.update(map(int, listing.read().split()))
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
    return found


@pytest.fixture(autouse=True)
def before() -> set[int]:
    if not os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
        pytest.skip("needs Linux's /proc/<pid>/task/<tid>/children to see child processes")
    return children()


def square(n: int) -> int:
    return n * n


def big(n: int) -> bytes:
    return bytes([n % 256]) * 300_000  # results larger than a pipe holds


def fails_on_seven(n: int) -> int:
    if n == 7:
        raise ValueError("seven is refused")
    return n


def dies_on_three(n: int) -> int:
    if n == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return n


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_each_result_comes_back_once(processes: int, before: set[int]) -> None:
    assert sorted(forkjobs.imap_unordered(square, list(range(50)), processes)) == [
        n * n for n in range(50)]
    assert children() <= before


def test_results_larger_than_a_pipe_come_back_whole(before: set[int]) -> None:
    found = sorted(forkjobs.imap_unordered(big, list(range(12)), 2))
    assert found == sorted(bytes([n]) * 300_000 for n in range(12))
    assert children() <= before


def test_a_job_that_raises_raises_in_the_parent(before: set[int]) -> None:
    with pytest.raises(ValueError, match="seven is refused"):
        list(forkjobs.imap_unordered(fails_on_seven, list(range(20)), 2))
    assert children() <= before


def test_a_child_that_dies_is_an_error_not_a_wait(before: set[int]) -> None:
    with pytest.raises(forkjobs.WorkerDied):
        list(forkjobs.imap_unordered(dies_on_three, list(range(20)), 2))
    assert children() <= before


def test_a_parent_that_stops_reading_stops_the_children(before: set[int]) -> None:
    results = forkjobs.imap_unordered(big, list(range(40)), 2)
    next(results)
    results.close()
    assert children() <= before
