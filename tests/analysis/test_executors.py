"""Where groups run: the in-process executor and Ray give the same cells, program files' too."""

import sys
from pathlib import Path

import pytest

from embedding_ttc.analysis import executors
from embedding_ttc.analysis.cells import BootstrapConfig, CellStore
from embedding_ttc.analysis.executors import InProcessExecutor, make_executor
from embedding_ttc.analysis.groups import MatrixEnvironment
from embedding_ttc.analysis.matrix import run_matrix
from embedding_ttc.analysis.plan import plan
from embedding_ttc.errors import MissingExtraError
from embedding_ttc.program_files.program_file import read_program_files
from embedding_ttc.program_files.sandbox.limits import SandboxLimits

BOOT = BootstrapConfig(resamples=200, seed=0)
TIMING = {"encode_seconds", "forward_seconds", "algebra_seconds", "total_seconds"}


def test_missing_ray_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[ray\]'"):
        make_executor("ray")
    assert isinstance(make_executor("inprocess"), InProcessExecutor)


def test_the_ray_executor_takes_a_cluster_address():
    pytest.importorskip("ray")
    executor = make_executor("ray", address="ray://head:10001")
    assert isinstance(executor, executors.RayExecutor) and executor.address == "ray://head:10001"
    assert make_executor("ray").address is None  # then Ray reads RAY_ADDRESS or starts locally


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
    executor = executors.RayExecutor(num_cpus=1, init_options={"log_to_driver": False})
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
    executor = executors.RayExecutor(num_cpus=1, init_options={"log_to_driver": False})
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
