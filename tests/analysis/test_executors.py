"""Where groups run: the in-process executor and Ray give the same cells."""

import sys

import pytest

from embedding_ttc.analysis import executors
from embedding_ttc.analysis.cells import BootstrapConfig, CellStore
from embedding_ttc.analysis.executors import InProcessExecutor, make_executor
from embedding_ttc.analysis.groups import MatrixEnvironment
from embedding_ttc.analysis.matrix import run_matrix
from embedding_ttc.analysis.plan import plan
from embedding_ttc.errors import MissingExtraError

BOOT = BootstrapConfig(resamples=200, seed=0)
TIMING = {"encode_seconds", "forward_seconds", "algebra_seconds", "total_seconds"}


def test_missing_ray_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(MissingExtraError, match=r"embedding-ttc\[ray\]"):
        make_executor("ray")
    assert isinstance(make_executor("inprocess"), InProcessExecutor)


def test_the_ray_executor_takes_a_cluster_address():
    pytest.importorskip("ray")
    executor = make_executor("ray", address="ray://head:10001")
    assert isinstance(executor, executors.RayExecutor) and executor.address == "ray://head:10001"
    assert make_executor("ray").address is None  # then Ray reads RAY_ADDRESS or starts locally


def test_ray_and_in_process_give_identical_cells(shared_datasets, tmp_path):
    ray = pytest.importorskip("ray")
    the_plan = plan(
        ["tokenlearn-static-64"], ["aila_statutes", "financebench"], ["P0", "SoftCentroid"]
    )
    local, remote = CellStore(tmp_path / "local"), CellStore(tmp_path / "ray")
    # Separate embedding caches: the Ray workers encode for themselves.
    env = MatrixEnvironment(data_root=shared_datasets, cache_dir=tmp_path / "cache-local")
    run_matrix(the_plan, local, env=env, bootstrap=BOOT)
    executor = executors.RayExecutor(num_cpus=1, init_options={"log_to_driver": False})
    env = MatrixEnvironment(data_root=shared_datasets, cache_dir=tmp_path / "cache-ray")
    outcome = run_matrix(the_plan, remote, executor, env=env, bootstrap=BOOT)
    assert not ray.is_initialized()  # the executor shuts down the Ray it started
    assert not outcome.failed and len(outcome.computed) == 4
    for key in the_plan:
        a, b = local.load(key), remote.load(key)
        assert a.model_dump(exclude=TIMING) == b.model_dump(exclude=TIMING)
