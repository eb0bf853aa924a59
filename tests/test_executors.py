"""The executor's contract: the same outputs in process and on Ray, in job order or as finished.

In process a job's work starts when its outputs are asked for, and an exception of the work
reaches the caller; on Ray every job is submitted at once, a failed task is a ``Lost`` value,
jobs and shared values are put in the object store once, and the jobs still running when the
caller stops are cancelled. The Ray tests share one local Ray for the module (``ray_session``
leaves an initialised Ray alone), but for the first, which lets the executor start its own.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import closing

import pytest

from embedding_ttc.errors import MissingExtraError, UnknownNameError
from embedding_ttc.executors import InProcessExecutor, Lost, RayExecutor, open_executor

OPTIONS = {"log_to_driver": False}
ENDLESS = 600.0
"""Seconds an uncancelled endless job runs: far beyond a cancel, even on a loaded machine (the
cancel is allowed a quarter of it, which covers starting Ray's workers under load)."""


def squares(job: int, offset: int = 0) -> Iterator[int]:
    """Two outputs per job."""
    yield job * job + offset
    yield -job


def noted(job: int, log: list[str]) -> Iterator[int]:
    """One output, noting in ``log`` when the work starts and when it is closed."""
    log.append(f"start {job}")
    try:
        yield job
    finally:
        log.append(f"end {job}")


def failing(job: int) -> Iterator[int]:
    """Job 1 raises."""
    if job == 1:
        raise ValueError("boom")
    yield job


def sleepy(job: float) -> Iterator[float]:
    """Sleeps ``job`` seconds, then yields it."""
    time.sleep(job)
    yield job


def endless(job: int) -> Iterator[int]:
    """Job 0 yields at once; any other runs for :data:`ENDLESS` seconds unless cancelled."""
    if job:
        until = time.monotonic() + ENDLESS
        while time.monotonic() < until:
            time.sleep(0.05)
    yield job


def named(job: tuple[str, int], payload: dict[str, str]) -> Iterator[str]:
    """The job's name and the shared payload's."""
    yield f"{job[0]}:{payload['name']}"


# --- opening by name, without Ray ------------------------------------------------------------


def test_an_executor_is_opened_by_name():
    with open_executor("inprocess") as executor:
        assert isinstance(executor, InProcessExecutor) and executor.in_process
    with (
        pytest.raises(UnknownNameError, match=r"unknown executor 'rey'.*Did you mean: ray\?"),
        open_executor("rey"),
    ):
        pass


def test_missing_ray_names_the_extra_and_the_purpose(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with (
        pytest.raises(MissingExtraError, match=r"^transfer --executor ray needs .*\[ray\]"),
        open_executor("ray", purpose="transfer --executor ray"),
    ):
        pass


def test_the_ray_executor_starts_ray_at_its_first_job_not_when_opened():
    ray = pytest.importorskip("ray")
    with open_executor("ray", address="ray://head:10001") as executor:
        assert isinstance(executor, RayExecutor) and not executor.in_process
        assert executor.address == "ray://head:10001"
        assert list(executor.map(squares, [], ordered=True)) == []
        assert not ray.is_initialized()


# --- in process ------------------------------------------------------------------------------


def test_in_process_a_job_runs_when_its_outputs_are_asked_for():
    log: list[str] = []
    results = InProcessExecutor().map(noted, [1, 2], ordered=True, shared=(log,))
    assert log == []
    assert next(results) == (1, 1)
    assert log == ["start 1"]
    assert next(results) == (2, 2)
    assert log == ["start 1", "end 1", "start 2"]
    results.close()  # the caller stops: the work of the job it was reading is closed
    assert log == ["start 1", "end 1", "start 2", "end 2"]


def test_in_process_the_work_s_exception_reaches_the_caller():
    results = InProcessExecutor().map(failing, [0, 1, 2], ordered=False)
    assert next(results) == (0, 0)
    with pytest.raises(ValueError, match="boom"):
        next(results)


# --- on Ray ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pickled_by_value():
    """This module's work travels by value (Ray's workers cannot import a test module)."""
    ray = pytest.importorskip("ray")
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def ray(pickled_by_value):
    """One local Ray for the module's tests."""
    ray = pickled_by_value
    ray.init(num_cpus=1, include_dashboard=False, **OPTIONS)
    yield ray
    ray.shutdown()


@pytest.mark.ray
def test_a_ray_started_for_a_map_is_shut_down_after_it(pickled_by_value):
    ray = pickled_by_value
    if ray.is_initialized():
        pytest.skip("a Ray is already initialised in this process")
    executor = RayExecutor(num_cpus=1, init_options=OPTIONS)
    assert list(executor.map(squares, [2, 3], ordered=True)) == [(2, 4), (2, -2), (3, 9), (3, -3)]
    assert not ray.is_initialized()


@pytest.mark.ray
def test_ray_gives_the_in_process_outputs(ray):
    jobs = [3, 1, 2]
    here = list(InProcessExecutor().map(squares, jobs, ordered=True, shared=(10,)))
    there = RayExecutor(cpus_per_job=0.5)
    assert list(there.map(squares, jobs, ordered=True, shared=(10,))) == here
    finished = list(there.map(squares, jobs, ordered=False, shared=(10,)))
    assert sorted(finished) == sorted(here)
    for job in jobs:  # a job's outputs come together, in the work's order
        at = finished.index((job, job * job + 10))
        assert finished[at + 1] == (job, -job)


@pytest.mark.ray
def test_ordered_waits_for_the_first_job_as_finished_does_not(ray):
    executor = RayExecutor(cpus_per_job=0.5)  # two jobs at once on the module's one CPU
    jobs = [10.0, 0.0]
    assert [job for job, _ in executor.map(sleepy, jobs, ordered=False)] == [0.0, 10.0]
    assert [job for job, _ in executor.map(sleepy, [0.5, 0.0], ordered=True)] == [0.5, 0.0]


@pytest.mark.ray
def test_a_failed_task_is_a_lost_value_and_the_other_jobs_still_come(ray):
    executor = RayExecutor(cpus_per_job=0.5)
    results = list(executor.map(failing, [0, 1, 2], ordered=True))
    assert results == [(0, 0), (1, Lost("ValueError: boom")), (2, 2)]


def _the_cpu_is_free(started: float) -> bool:
    """Whether a job that takes the module's whole CPU runs at once (nothing else holds it)."""
    whole = RayExecutor(cpus_per_job=1.0)
    assert list(whole.map(squares, [1], ordered=True)) == [(1, 1), (1, -1)]
    return time.monotonic() - started < ENDLESS / 4


@pytest.mark.ray
def test_a_caller_that_stops_cancels_the_jobs_still_running(ray):
    executor = RayExecutor(cpus_per_job=0.5)
    started = time.monotonic()
    results = executor.map(endless, [0, 1, 2], ordered=True)
    assert next(results) == (0, 0)
    results.close()  # jobs 1 (running) and 2 (waiting for a CPU) are cancelled
    assert _the_cpu_is_free(started)
    started = time.monotonic()
    with (
        pytest.raises(RuntimeError, match="the caller's"),
        closing(executor.map(endless, [0, 1], ordered=True)) as results,
    ):
        for _ in results:
            raise RuntimeError("the caller's")
    assert _the_cpu_is_free(started)


@pytest.mark.ray
def test_jobs_and_shared_values_are_put_once(ray, monkeypatch):
    put = ray.put
    puts: list[object] = []

    def counted(value, **kwargs):
        puts.append(value)
        return put(value, **kwargs)

    monkeypatch.setattr(ray, "put", counted)
    jobs = [("a", 1), ("b", 2)]
    first, second = {"name": "first"}, {"name": "second"}
    executor = RayExecutor(cpus_per_job=0.5)
    with executor.open():
        out = [o for _, o in executor.map(named, jobs, ordered=True, shared=(first,))]
        assert out == ["a:first", "b:first"] and len(puts) == 3
        out = [o for _, o in executor.map(named, jobs, ordered=True, shared=(first,))]
        assert out == ["a:first", "b:first"] and len(puts) == 3  # nothing put again
        out = [o for _, o in executor.map(named, jobs, ordered=True, shared=(second,))]
        assert out == ["a:second", "b:second"] and puts[3:] == [second]
    assert ray.is_initialized()  # the module's Ray, left alone
    # Outside a block, each map holds Ray and its objects for itself.
    list(executor.map(named, jobs, ordered=True, shared=(second,)))
    assert len(puts) == 7
