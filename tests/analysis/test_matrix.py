import shutil
from dataclasses import dataclass

import numpy as np
import pytest

from embedding_ttc.analysis import groups
from embedding_ttc.analysis.cells import BootstrapConfig, Cell, CellKey, CellStore
from embedding_ttc.analysis.groups import CellFailure, GroupStarted, MatrixEnvironment
from embedding_ttc.analysis.matrix import run_matrix
from embedding_ttc.analysis.plan import QuerySample, ShortlistPolicy, group_jobs, plan
from embedding_ttc.analysis.staleness import to_compute
from embedding_ttc.programs.base import program_version
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.outcome import Status

from fakes import HashingEncoder

ENCODERS = ["tokenlearn-static-64", "wordllama-l2-supercat"]
TASKS = ["aila_statutes", "financebench"]
PROGRAMS = ["P0", "SoftCentroid", "BM25DenseRRF"]
BOOT = BootstrapConfig(resamples=200, seed=0)
TIMING = {"encode_seconds", "forward_seconds", "algebra_seconds", "total_seconds"}


class Counter:
    """Wraps run_programs and records the program names of every call."""

    def __init__(self):
        self.calls = []
        self.real = groups.run_programs

    def __call__(self, programs, task, encoder, **kwargs):
        self.calls.append((task.name, [p.name for p in programs]))
        return self.real(programs, task, encoder, **kwargs)


def counted_run(mp, *args, **kwargs):
    counter = Counter()
    mp.setattr(groups, "run_programs", counter)
    events = []
    outcome = run_matrix(*args, progress=events.append, **kwargs)
    return outcome, counter.calls, events


@pytest.fixture(scope="module")
def computed(shared_datasets, tmp_path_factory):
    """The tiny real plan, computed once: (store root, env, outcome, calls, events)."""
    root = tmp_path_factory.mktemp("matrix")
    env = MatrixEnvironment(data_root=shared_datasets, cache_dir=root / "cache")
    with pytest.MonkeyPatch.context() as mp:
        outcome, calls, events = counted_run(
            mp, plan(ENCODERS, TASKS, PROGRAMS), CellStore(root / "out"), env=env, bootstrap=BOOT
        )
    return root / "out", env, outcome, calls, events


@pytest.fixture()
def store(computed, tmp_path):
    """A private copy of the computed store."""
    shutil.copytree(computed[0], tmp_path / "out")
    return CellStore(tmp_path / "out")


def test_first_run_writes_every_cell_with_one_call_per_group(computed):
    root, _, outcome, calls, events = computed
    store = CellStore(root)
    the_plan = plan(ENCODERS, TASKS, PROGRAMS)
    assert store.missing(the_plan) == []
    assert outcome.computed == tuple(the_plan) and not outcome.failed and outcome.already == 0
    # One run_programs call per (encoder, task): the base encoding is shared by its programs.
    assert calls == [(t, PROGRAMS) for _ in ENCODERS for t in TASKS]
    assert sum(isinstance(e.event, GroupStarted) for e in events) == 4
    assert [e.done for e in events if isinstance(e.event, Cell)] == list(range(1, 13))
    assert all(e.total == 12 for e in events)
    cell = store.load(CellKey("wordllama-l2-supercat", "financebench", "BM25DenseRRF"))
    base = store.load(CellKey("wordllama-l2-supercat", "financebench", "P0"))
    assert cell.baseline_per_query == base.per_query
    assert cell.n_queries == 150 and cell.bootstrap.resamples == 200
    diffs = [cell.per_query[q] - base.per_query[q] for q in base.per_query]
    assert cell.delta == pytest.approx(np.mean(diffs))


def test_rerun_computes_nothing(store, computed, monkeypatch):
    env = computed[1]
    outcome, calls, events = counted_run(
        monkeypatch, plan(ENCODERS, TASKS, PROGRAMS), store, env=env, bootstrap=BOOT
    )
    assert calls == [] and events == []
    assert outcome.computed == () and outcome.restatted == () and outcome.already == 12


def test_deleting_one_cell_recomputes_only_it(store, computed, monkeypatch):
    env = computed[1]
    key = CellKey("wordllama-l2-supercat", "financebench", "SoftCentroid")
    old = store.load(key)
    store.path(key).unlink()
    the_plan = plan(ENCODERS, TASKS, PROGRAMS)
    before = {k: store.path(k).stat().st_mtime_ns for k in the_plan if k != key}
    outcome, calls, _ = counted_run(monkeypatch, the_plan, store, env=env, bootstrap=BOOT)
    assert calls == [("financebench", ["P0", "SoftCentroid"])]
    assert outcome.computed == (key,) and outcome.already == 11
    assert {k: store.path(k).stat().st_mtime_ns for k in before} == before
    assert store.load(key).model_dump(exclude=TIMING) == old.model_dump(exclude=TIMING)


def test_another_bootstrap_configuration_restats_without_encoding(store, computed, monkeypatch):
    env = computed[1]
    other = BootstrapConfig(resamples=100, seed=3)
    outcome, calls, _ = counted_run(
        monkeypatch, plan(ENCODERS, TASKS, PROGRAMS), store, env=env, bootstrap=other
    )
    assert calls == [] and len(outcome.restatted) == 12
    cell = store.load(CellKey("tokenlearn-static-64", "aila_statutes", "SoftCentroid"))
    assert (cell.bootstrap.resamples, cell.bootstrap.base_seed) == (100, 3)


def test_a_sampled_task_scores_the_same_queries_for_every_encoder(store, computed, monkeypatch):
    env = computed[1]
    the_plan = plan(ENCODERS, TASKS, PROGRAMS)
    sample = QuerySample(per_task=(("financebench", 40),))
    outcome, calls, _ = counted_run(
        monkeypatch, the_plan, store, env=env, bootstrap=BOOT, sample=sample
    )
    assert calls == [("financebench", PROGRAMS)] * 2  # only the sampled task is stale
    assert len(outcome.stale) == 6
    full = CellStore(computed[0])
    queries = set()
    for encoder in ENCODERS:
        for program in PROGRAMS:
            cell = store.load(CellKey(encoder, "financebench", program))
            assert cell.query_sample == 40 and cell.n_queries == 40
            queries.add(frozenset(cell.per_query))
            whole = full.load(CellKey(encoder, "financebench", program))
            # The same queries score as they did within the whole task.
            assert cell.per_query == {q: whole.per_query[q] for q in cell.per_query}
            assert store.load(CellKey(encoder, "aila_statutes", program)).query_sample is None
    assert len(queries) == 1
    again, calls, _ = counted_run(
        monkeypatch, the_plan, store, env=env, bootstrap=BOOT, sample=sample
    )
    assert calls == [] and again.already == 12


def test_a_shortlisted_task_recomputes_its_stale_cells_only(store, computed, monkeypatch):
    env = computed[1]
    the_plan = plan(ENCODERS, TASKS, PROGRAMS)
    policy = ShortlistPolicy(per_task=(("financebench", 20),))
    jobs = group_jobs(the_plan, BOOT, policy)
    assert {(j.task, j.shortlist) for j in jobs} == {("aila_statutes", None), ("financebench", 20)}
    outcome, calls, _ = counted_run(
        monkeypatch, the_plan, store, env=env, bootstrap=BOOT, shortlist=policy
    )
    assert calls == [("financebench", PROGRAMS)] * 2  # one group per encoder
    assert len(outcome.stale) == 6 and set(outcome.stale) == set(outcome.computed)
    full = CellStore(computed[0])
    for encoder in ENCODERS:
        for program in PROGRAMS:
            cell = store.load(CellKey(encoder, "financebench", program))
            assert cell.shortlist == 20
            assert store.load(CellKey(encoder, "aila_statutes", program)).shortlist is None
        # P0 over its own top 20 ranks the top 10 exactly as over the whole corpus.
        p0 = store.load(CellKey(encoder, "financebench", "P0"))
        assert p0.per_query == full.load(CellKey(encoder, "financebench", "P0")).per_query
        # The fusion only sees the shortlist, so BM25 can no longer lift a document from
        # outside the dense top 20 into the top 10.
        rrf = store.load(CellKey(encoder, "financebench", "BM25DenseRRF"))
        assert rrf.baseline_per_query == p0.per_query
        whole = full.load(CellKey(encoder, "financebench", "BM25DenseRRF"))
        assert rrf.per_query != whole.per_query
    again, calls, _ = counted_run(
        monkeypatch, the_plan, store, env=env, bootstrap=BOOT, shortlist=policy
    )
    assert calls == [] and again.stale == () and again.already == 12


def test_a_cell_of_another_program_version_is_stale(computed):
    the_plan = plan(ENCODERS, TASKS, PROGRAMS)
    store = CellStore(computed[0])
    assert to_compute(the_plan, store, ShortlistPolicy()) == ([], [])
    current = {name: program_version(get_program(name)) for name in PROGRAMS}
    assert all(store.load(k).program_version == current[k.program] for k in the_plan)
    # SoftCentroid's scores change (a version up): its four cells, and only they, are stale.
    newer = {**current, "SoftCentroid": current["SoftCentroid"] + 1}
    absent, stale = to_compute(the_plan, store, ShortlistPolicy(), newer.__getitem__)
    assert absent == [] and sorted(stale) == sorted(
        k for k in the_plan if k.program == "SoftCentroid"
    )


@dataclass(frozen=True)
class FakeEnvironment(MatrixEnvironment):
    """The tiny in-test task and the hashing fake encoder, whatever the names."""

    task_factory: object = None

    def encoder(self, name):
        return HashingEncoder()

    def task(self, name):
        return self.task_factory


class Boom:
    name = "Boom"

    def __call__(self, Q, D, S, ctx):
        raise MemoryError("pretend the matrix did not fit")


def test_a_failing_program_leaves_only_its_cell_missing(tiny_task, tmp_path, monkeypatch):
    real = groups.get_program
    monkeypatch.setattr(groups, "get_program", lambda n: Boom() if n == "Boom" else real(n))
    env = FakeEnvironment(task_factory=tiny_task)
    store = CellStore(tmp_path)
    the_plan = plan(["fake"], ["tiny"], ["SoftCentroid", "Boom", "Rocchio"])  # no P0 cell
    outcome, calls, _ = counted_run(monkeypatch, the_plan, store, env=env, bootstrap=BOOT)
    # The group restarts after the failure with the programs that follow it.
    assert calls == [
        ("tiny", ["P0", "SoftCentroid", "Boom", "Rocchio"]),
        ("tiny", ["P0", "Rocchio"]),
    ]
    assert outcome.computed == (
        CellKey("fake", "tiny", "SoftCentroid"),
        CellKey("fake", "tiny", "Rocchio"),
    )
    (failure,) = outcome.failed
    assert failure == CellFailure(
        CellKey("fake", "tiny", "Boom"),
        "MemoryError: pretend the matrix did not fit",
        Status.MEMORY,
    )
    assert store.missing(the_plan) == [CellKey("fake", "tiny", "Boom")]
    assert CellKey("fake", "tiny", "P0") not in store  # P0 ran as the baseline only
    assert not outcome.complete


def test_a_failing_base_encoding_fails_the_whole_group(tiny_task, tmp_path, monkeypatch):
    class Broken(HashingEncoder):
        def _embed(self, texts, *, adapter, max_length):
            raise RuntimeError("encoder crashed")

    @dataclass(frozen=True)
    class BrokenEnv(FakeEnvironment):
        def encoder(self, name):
            return Broken()

    store = CellStore(tmp_path)
    the_plan = plan(["fake"], ["tiny"], ["P0", "SoftCentroid"])
    outcome = run_matrix(the_plan, store, env=BrokenEnv(task_factory=tiny_task), bootstrap=BOOT)
    assert [f.key for f in outcome.failed] == list(the_plan)
    assert store.missing(the_plan) == list(the_plan)
