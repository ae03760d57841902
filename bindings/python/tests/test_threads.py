"""The GIL is released while vouch checks: other Python threads run, and
threads calling `check` concurrently use more than one core."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, List, Tuple

import vouch

CONTRACT = vouch.Contract(
    {
        "type": "object",
        "required": ["items"],
        "properties": {"items": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+[0-9]*$"}}},
    }
)
BIG = '{"items": [' + ",".join(f'"item{i}"' for i in range(200_000)) + "]}"


def _spins_while(work: Callable[[], List[vouch.Verdict]]) -> Tuple[int, List[vouch.Verdict]]:
    """Run `work` in a thread and count this thread's loop turns meanwhile.
    With the GIL held for the whole check, the loop would only run in the
    gaps between calls (a handful of spins); released, it runs throughout."""
    done = threading.Event()
    verdicts: List[vouch.Verdict] = []

    def run() -> None:
        try:
            verdicts.extend(work())
        finally:
            done.set()

    spins = 0
    t = threading.Thread(target=run)
    t.start()
    while not done.is_set():
        spins += 1
    t.join()
    return spins, verdicts


def test_another_python_thread_runs_while_a_check_runs() -> None:
    spins, verdicts = _spins_while(lambda: [CONTRACT.check(BIG) for _ in range(3)])
    assert len(verdicts) == 3 and all(v.accepted for v in verdicts)
    assert spins > 10_000, spins


def test_check_many_releases_the_gil_too() -> None:
    spins, verdicts = _spins_while(lambda: CONTRACT.check_many([BIG] * 4))
    assert len(verdicts) == 4 and all(v.accepted for v in verdicts)
    assert spins > 10_000, spins


def test_threads_checking_concurrently_run_at_once() -> None:
    """Two threads calling `check` run on two cores at once: the CPU time the
    two spend inside their checks adds up to clearly more than the wall time
    they took. With the GIL held through a check, the waiting thread sleeps
    on the lock (no CPU), so the sum stays at the wall time, however fast or
    slow the machine is; the wall-clock speed-up is printed, not asserted
    (bench/python measures speed)."""
    replies = [BIG] * 6

    def both(threads: int) -> Tuple[float, float]:
        """The threads' CPU time inside their checks, summed, and the wall
        time from the first start to the last end."""
        start_line = threading.Barrier(threads)

        def run(_: int) -> Tuple[float, float, float]:
            start_line.wait()
            begin, cpu = time.perf_counter(), time.thread_time()
            assert all(CONTRACT.check(r).accepted for r in replies)
            return time.thread_time() - cpu, begin, time.perf_counter()

        with ThreadPoolExecutor(threads) as pool:
            times = list(pool.map(run, range(threads)))
        return sum(t[0] for t in times), max(t[2] for t in times) - min(t[1] for t in times)

    both(2)  # warm up
    _, one_wall = min(both(1) for _ in range(3))
    runs = [both(2) for _ in range(3)]
    overlap = max(cpu / wall for cpu, wall in runs)
    two_wall = min(wall for _, wall in runs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(
        f"\nthreads calling check: 1 thread {one_wall:.3f} s, 2 threads {two_wall:.3f} s for twice the replies "
        f"({2 * one_wall / two_wall:.2f}x the throughput); CPU time / wall time with 2 threads {overlap:.2f} on {cores} cores"
    )
    if cores >= 2:
        assert overlap > 1.5, runs


class Tagged(vouch.Contract):
    pass


def _check_in_child(contract: vouch.Contract, raw: str) -> str:
    return contract.check(raw).to_json()


def test_a_contract_pickles_as_its_document_and_checks_alike_in_another_process() -> None:
    # multiprocessing, joblib and Ray send a contract by pickling it: compiled again there.
    import copy
    import multiprocessing
    import pickle

    contract = Tagged({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "x-vouch": {"repair": ["coerce"]}}}})
    again = pickle.loads(pickle.dumps(contract))
    assert type(again) is Tagged and again.document == contract.document
    assert copy.deepcopy(contract).document == contract.document
    raws = ['{"n": "80"}', '{"n": "x"}', "{}", "not json"]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.starmap(_check_in_child, [(contract, raw) for raw in raws])
    assert got == [contract.check(raw).to_json() for raw in raws]
