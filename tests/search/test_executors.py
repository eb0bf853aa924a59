"""Where a candidate's task runs happen: in process or as Ray tasks, with the same records.

The evaluator has its executor run the smallest task twice, then the others by size, under the
compute lock; the first failure in that order decides the outcome whichever executor ran it.
The Ray tests start a local Ray (the executor's, or the command's) and compare with the
in-process executor on two real tasks with the fast packaged encoder.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from embedding_ttc.encoders.named import NamedEncoder
from embedding_ttc.errors import EmbeddingTTCError, MissingExtraError, UnknownNameError
from embedding_ttc.executors import InProcessExecutor, Lost, RayExecutor, open_executor
from embedding_ttc.program_files.sandbox.limits import SandboxLimits
from embedding_ttc.program_files.sandbox.program import SandboxedProgram
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.outcome import CandidateError, Status
from embedding_ttc.runs.config import RUN_CONFIG_FILE
from embedding_ttc.runs.ledger import Ledger
from embedding_ttc.runs.split import SPLIT_FILE
from embedding_ttc.search.evaluator import ComputeLock, SuiteEvaluator
from embedding_ttc.search.loop import Budget
from embedding_ttc.search.open import PURPOSE, SearchSetup, open_search
from embedding_ttc.search.task_runs import TaskJob
from embedding_ttc.tasks.catalog import load_task

from .specs import run_config
from fakes import HashingEncoder

FAST_ENCODER = "tokenlearn-static-64"
TASKS = ("aila_statutes", "legal_summarization")  # 82 and 445 documents: aila_statutes is smallest
PROGRAMS = Path(__file__).resolve().parents[1] / "program_files" / "programs"
# The ledger fields that may differ: timings, of the generation and of each task's algebra.
TIMING: dict[str, Any] = {
    "seconds": True,
    "llm_seconds": True,
    "per_task": {"__all__": {"algebra_seconds", "reference_algebra_seconds"}},
}

NONDETERMINISTIC = """import numpy as np


def program(Q, D, S, ctx):
    salt = int(repr(object()).split()[-1][:-1], 16) % 9973
    return S + np.float32(salt * 1e-7)
"""

# The smallest task (run first) fails late; the other fails at once. Under Ray the second
# failure arrives first, and the first in the evaluator's order must still decide.
LATE_ON_THE_SMALLEST = """def program(Q, D, S, ctx):
    if len(ctx.doc_ids) < 100:
        total = 0
        for i in range(5_000_000):
            total += i
        raise ValueError(f"late, after {total}")
    raise ValueError("at once")
"""

# The smallest task fails at once; the other never ends: the Ray executor must cancel it.
ENDLESS_ON_THE_OTHER = """def program(Q, D, S, ctx):
    if len(ctx.doc_ids) < 100:
        raise ValueError("at once")
    while True:
        pass
"""

FAILING = {
    "encoder_flood": ((PROGRAMS / "encoder_flood.py").read_text(), Status.BUDGET),
    "nondeterministic": (NONDETERMINISTIC, Status.REJECTED),
    "late_on_the_smallest": (LATE_ON_THE_SMALLEST, Status.CRASHED),
    "endless_on_the_other": (ENDLESS_ON_THE_OTHER, Status.CRASHED),
}


def _lock_is_held(path: Path) -> bool:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


class RecordingExecutor:
    """The in-process executor, noting each job as its work starts and whether the lock was held."""

    in_process = True

    def __init__(self, lock: Path) -> None:
        self.inner = InProcessExecutor()
        self.lock = lock
        self.seen: list[tuple[str, int, bool]] = []

    def map(self, work, jobs, *, ordered, shared=()):
        def noted(job, *args):
            self.seen.append((job.task.name, job.repeats, _lock_is_held(self.lock)))
            return work(job, *args)

        return self.inner.map(noted, jobs, ordered=ordered, shared=shared)


class LosesEveryJob:
    """A fake Ray: runs no work, and reports every job lost."""

    in_process = False

    def map(self, work, jobs, *, ordered, shared=()):
        for job in jobs:
            yield job, Lost("WorkerCrashedError: the worker died")


class FailsOn:
    """A fake program: the cosine, except on one task (by its number of documents)."""

    name = "fails-on"

    def __init__(self, n_docs: int) -> None:
        self.n_docs = n_docs

    def __call__(self, Q, D, S, ctx):
        if len(ctx.doc_ids) == self.n_docs:
            raise ValueError("not on this task")
        return S.copy()


@pytest.fixture()
def two_tiny_tasks(tiny_task):
    larger = dataclasses.replace(
        tiny_task,
        name="tiny-plus",
        doc_ids=[*tiny_task.doc_ids, "d6"],
        doc_titles=[*tiny_task.doc_titles, ""],
        doc_bodies=[*tiny_task.doc_bodies, "rates of cats"],
    )
    return [larger, tiny_task]  # suite order: the larger first


def test_the_executor_gets_the_smallest_task_twice_first_under_the_lock(tmp_path, two_tiny_tasks):
    encoder = HashingEncoder()
    lock = tmp_path / "compute.lock"
    executor = RecordingExecutor(lock)
    evaluator = SuiteEvaluator(two_tiny_tasks, encoder, lock=ComputeLock(lock), executor=executor)
    score = evaluator.evaluate(get_program("P0"))
    assert executor.seen == [("tiny", 2, True), ("tiny-plus", 1, True)]
    assert list(score.per_task) == ["tiny-plus", "tiny"]  # scored in suite order
    assert not _lock_is_held(lock)


def test_the_first_failure_in_order_decides_and_the_rest_does_not_run(tmp_path, two_tiny_tasks):
    encoder = HashingEncoder()
    executor = RecordingExecutor(tmp_path / "unused.lock")
    evaluator = SuiteEvaluator(two_tiny_tasks, encoder, executor=executor)
    with pytest.raises(CandidateError) as failed:
        evaluator.evaluate(FailsOn(n_docs=6))
    assert failed.value.status == Status.CRASHED
    assert failed.value.reason == "tiny-plus: ValueError: not on this task"
    assert executor.seen == [("tiny", 2, False), ("tiny-plus", 1, False)]
    executor.seen.clear()
    with pytest.raises(CandidateError, match="tiny: ValueError"):
        evaluator.evaluate(FailsOn(n_docs=5))
    assert executor.seen == [("tiny", 2, False)]  # the smallest failed: nothing else ran


def test_a_job_ray_lost_stops_the_search_naming_program_and_task(two_tiny_tasks):
    encoder = HashingEncoder()
    with pytest.raises(ValueError, match="needs the encoder by name"):
        SuiteEvaluator(two_tiny_tasks, encoder, executor=LosesEveryJob())
    named = NamedEncoder(FAST_ENCODER)
    evaluator = SuiteEvaluator(two_tiny_tasks, encoder, executor=LosesEveryJob(), named=named)
    program = SandboxedProgram(NONDETERMINISTIC, "salted")
    with pytest.raises(EmbeddingTTCError, match=r"^Ray could not run salted on tiny: Worker"):
        evaluator.evaluate(program)
    with pytest.raises(TypeError, match="sandboxed programs"):
        evaluator.evaluate(get_program("P0"))


def test_a_job_runs_at_least_once(tiny_task):
    with pytest.raises(ValueError, match="at least once"):
        TaskJob(tiny_task, repeats=0)


def _search(run: Path, data: Path, **setup: Any) -> None:
    """Three generations of the structural search on :data:`TASKS`, opened from its config."""
    config = run_config(list(TASKS), encoder=FAST_ENCODER)
    with open_search(config, SearchSetup(run_dir=run, data_dir=data, **setup)) as loop:
        loop.run(Budget(3))


def test_an_unknown_executor_is_refused_with_names_before_anything_is_written(
    tmp_path, packaged_datasets
):
    with pytest.raises(UnknownNameError, match=r"unknown executor 'rey'.*Did you mean: ray\?"):
        _search(tmp_path / "run", packaged_datasets, executor="rey")
    assert not (tmp_path / "run" / RUN_CONFIG_FILE).exists()
    with pytest.raises(EmbeddingTTCError, match="--ray-address is for --executor ray"):
        _search(tmp_path / "run", packaged_datasets, ray_address="ray://head:10001")


def test_missing_ray_names_the_extra(tmp_path, packaged_datasets, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(MissingExtraError, match=rf"^{PURPOSE} needs .*pip install -e '\.\[ray\]'"):
        _search(tmp_path / "run", packaged_datasets, executor="ray")
    assert not (tmp_path / "run" / RUN_CONFIG_FILE).exists()


@pytest.mark.ray
def test_failures_read_the_same_under_ray(packaged_datasets, tmp_path):
    pytest.importorskip("ray")
    tasks = [load_task(name, packaged_datasets) for name in TASKS]
    # A wall time far beyond any run here: an endless job left to it (not cancelled) would
    # hold the evaluation for 15 minutes, which the check below tells from seconds even on a
    # loaded machine.
    limits = SandboxLimits(wall_seconds=900.0, memory_bytes=2 * 2**30)
    named = NamedEncoder(FAST_ENCODER, cache_dir=tmp_path / "cache")
    local = SuiteEvaluator(tasks, named.load())
    expected: dict[str, tuple[Status, str]] = {}
    for name, (source, status) in FAILING.items():
        with pytest.raises(CandidateError) as failed:
            local.evaluate(SandboxedProgram(source, name, limits))
        assert failed.value.status == status, failed.value.reason
        assert "aila_statutes" in failed.value.reason, failed.value.reason  # the smallest
        expected[name] = (failed.value.status, failed.value.reason)
    options = {"log_to_driver": False}
    with open_executor("ray", num_cpus=2, init_options=options) as executor:
        assert isinstance(executor, RayExecutor)
        remote = SuiteEvaluator(tasks, local.encoder, executor=executor, named=named)
        for name, (source, _) in FAILING.items():
            started = time.monotonic()
            with pytest.raises(CandidateError) as failed:
                remote.evaluate(SandboxedProgram(source, name, limits))
            assert (failed.value.status, failed.value.reason) == expected[name]
            # The endless job was cancelled, not left to its wall-time limit.
            assert time.monotonic() - started < limits.wall_seconds / 3, name
        with pytest.raises(TypeError, match="sandboxed programs"):
            remote.evaluate(get_program("P0"))


@pytest.mark.ray
def test_ray_writes_the_in_process_ledger_but_for_timings(packaged_datasets, tmp_path, capsys):
    ray = pytest.importorskip("ray")
    local, remote = tmp_path / "local", tmp_path / "ray"
    # Separate embedding caches: the Ray workers encode for themselves.
    _search(local, packaged_datasets, cache_dir=tmp_path / "c1")
    started = time.monotonic()
    _search(remote, packaged_datasets, cache_dir=tmp_path / "c2", executor="ray")
    print(f"search --executor ray, 3 generations on 2 tasks: {time.monotonic() - started:.1f} s")
    assert not ray.is_initialized()  # the search shuts down the Ray it started
    capsys.readouterr()
    a, b = Ledger(local).records, Ledger(remote).records
    assert [r.generation for r in a] == [0, 1, 2, 3]
    assert any(r.status == Status.OK for r in a[1:]), [r.reason for r in a]
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.model_dump(exclude=TIMING) == y.model_dump(exclude=TIMING), x.program_id
    # Nothing of the executor is recorded: the run's settings and split are the same files.
    for name in (RUN_CONFIG_FILE, SPLIT_FILE):
        assert json.loads((local / name).read_text()) == json.loads((remote / name).read_text())
