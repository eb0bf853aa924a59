"""Where groups run: the in-process executor and Ray give the same cells, program files' too.

In process an encoder is loaded once per run of groups that use it; a group Ray could not
finish is a failure of each of its cells, and the run goes on. A transfer opens the executor
its config names.
"""

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from embedding_ttc.analysis import transfer
from embedding_ttc.analysis.cells import BootstrapConfig, Cell, CellStore
from embedding_ttc.analysis.groups import CellFailure, GroupStarted, MatrixEnvironment
from embedding_ttc.analysis.matrix import run_matrix
from embedding_ttc.analysis.plan import plan
from embedding_ttc.analysis.transfer import TransferConfig, run_transfer
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.executors import InProcessExecutor, Lost, RayExecutor
from embedding_ttc.program_files.program_file import read_program_files
from embedding_ttc.program_files.sandbox.limits import SandboxLimits

from fakes import HashingEncoder

BOOT = BootstrapConfig(resamples=200, seed=0)
TIMING = {"encode_seconds", "forward_seconds", "algebra_seconds", "total_seconds"}
TASKS = ["aila_statutes", "legal_summarization"]


@dataclass(frozen=True)
class CountingEnvironment(MatrixEnvironment):
    """The real tasks, a fake encoder, and the name of every encoder load."""

    loads: list[str] = field(default_factory=list)

    def encoder(self, name):
        self.loads.append(name)
        return HashingEncoder()


class LosesEveryGroup:
    """A fake Ray: runs no work, and reports every job lost."""

    in_process = False

    def map(self, work, jobs, *, ordered, shared=()):
        assert shared[1] is None  # no encoder is kept between groups outside this process
        for job in jobs:
            yield job, Lost("WorkerCrashedError: the worker died")


def _config(tmp_path, **kwargs):
    return TransferConfig(
        out=tmp_path / "study",
        encoders=("enc-a",),
        programs=("P0",),
        suite="smoke",
        tasks=("aila_statutes",),
        discovery_suite="none",
        data_dir=tmp_path,
        **kwargs,
    )


def test_in_process_an_encoder_loads_once_per_run_of_its_groups(packaged_datasets, tmp_path):
    env = CountingEnvironment(data_root=packaged_datasets)
    the_plan = plan(["enc-a", "enc-b"], TASKS, ["P0", "SoftCentroid"])
    events = []
    outcome = run_matrix(
        the_plan, CellStore(tmp_path), InProcessExecutor(), events.append, env=env, bootstrap=BOOT
    )
    assert len(outcome.computed) == 8 and not outcome.failed
    assert env.loads == ["enc-a", "enc-b"]  # four groups, two encoders
    started = [e.event.job for e in events if isinstance(e.event, GroupStarted)]
    assert [(j.encoder, j.task) for j in started] == [
        (e, t) for e in ("enc-a", "enc-b") for t in TASKS
    ]
    # Each group is announced before its cells.
    kinds = [type(e.event) for e in events]
    assert kinds == [GroupStarted, Cell, Cell] * 4


def test_a_group_ray_lost_fails_its_cells_and_the_run_goes_on(tmp_path):
    the_plan = plan(["enc-a"], TASKS, ["P0", "SoftCentroid"])
    outcome = run_matrix(the_plan, CellStore(tmp_path), LosesEveryGroup(), bootstrap=BOOT)
    assert outcome.computed == ()
    assert [f.key for f in outcome.failed] == list(the_plan)
    assert {(f.status, f.reason) for f in outcome.failed} == {
        ("crashed", "WorkerCrashedError: the worker died")
    }
    assert all(isinstance(f, CellFailure) for f in outcome.failed)


def test_a_transfer_opens_the_executor_its_config_names(tmp_path, monkeypatch):
    opened = []

    def recording(name, *, address=None, purpose="", **kwargs):
        opened.append((name, address, purpose))
        raise KeyboardInterrupt  # stop before anything runs

    monkeypatch.setattr(transfer, "open_executor", recording)
    with pytest.raises(KeyboardInterrupt):
        run_transfer(_config(tmp_path, executor="ray", ray_address="ray://head:10001"))
    assert opened == [("ray", "ray://head:10001", transfer.PURPOSE)]


def test_missing_ray_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(
        MissingExtraError, match=r"transfer matrix needs .*pip install -e '\.\[ray\]'"
    ):
        run_transfer(_config(tmp_path, executor="ray"))


@pytest.mark.ray
def test_ray_and_in_process_give_identical_cells(packaged_datasets, tmp_path):
    ray = pytest.importorskip("ray")
    the_plan = plan(
        ["tokenlearn-static-64"], ["aila_statutes", "legal_summarization"], ["P0", "SoftCentroid"]
    )
    local, remote = CellStore(tmp_path / "local"), CellStore(tmp_path / "ray")
    # Separate embedding caches: the Ray workers encode for themselves.
    env = MatrixEnvironment(data_root=packaged_datasets, cache_dir=tmp_path / "cache-local")
    run_matrix(the_plan, local, env=env, bootstrap=BOOT)
    executor = RayExecutor(num_cpus=1, init_options={"log_to_driver": False})
    env = MatrixEnvironment(data_root=packaged_datasets, cache_dir=tmp_path / "cache-ray")
    outcome = run_matrix(the_plan, remote, executor, env=env, bootstrap=BOOT)
    assert not ray.is_initialized()  # the executor shuts down the Ray it started
    assert not outcome.failed and len(outcome.computed) == 4
    for key in the_plan:
        a, b = local.load(key), remote.load(key)
        assert a.model_dump(exclude=TIMING) == b.model_dump(exclude=TIMING)


@pytest.mark.ray
def test_ray_runs_program_files_as_the_in_process_executor_does(packaged_datasets, tmp_path):
    ray = pytest.importorskip("ray")
    source = Path(__file__).resolve().parents[1] / "program_files" / "programs" / "valid_zscore.py"
    (tmp_path / "zs.py").write_text(source.read_text())
    (tmp_path / "broken.py").write_text("def program(Q, D, S, ctx):\n    return S[:1]\n")
    limits = SandboxLimits(wall_seconds=60.0)
    files = read_program_files(
        [tmp_path / "zs.py", tmp_path / "broken.py"],
        task_names=("aila_statutes",),
        taken=("P0",),
    )
    the_plan = plan(["tokenlearn-static-64"], ["aila_statutes"], ["P0", "zs", "broken"])
    local, remote = CellStore(tmp_path / "local"), CellStore(tmp_path / "ray")
    env = MatrixEnvironment(
        data_root=packaged_datasets,
        cache_dir=tmp_path / "cache-local",
        program_files=files,
        program_limits=limits,
    )
    here = run_matrix(the_plan, local, env=env, bootstrap=BOOT)
    executor = RayExecutor(num_cpus=1, init_options={"log_to_driver": False})
    env = MatrixEnvironment(
        data_root=packaged_datasets,
        cache_dir=tmp_path / "cache-ray",
        program_files=files,
        program_limits=limits,
    )
    there = run_matrix(the_plan, remote, executor, env=env, bootstrap=BOOT)
    assert not ray.is_initialized()
    assert here.computed == there.computed == the_plan.keys[:2]
    assert [(f.key.program, f.status) for f in there.failed] == [("broken", "invalid_output")]
    assert there.failed == here.failed  # the same status and reason from a Ray worker
    for key in the_plan.keys[:2]:
        a, b = local.load(key), remote.load(key)
        assert a.model_dump(exclude=TIMING) == b.model_dump(exclude=TIMING)
    assert remote.load(the_plan.keys[1]).source_sha256 == files[0].sha256
