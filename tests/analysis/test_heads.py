import json
from dataclasses import dataclass

import numpy as np
import pytest

from embedding_ttc.analysis.cells import BootstrapConfig, CellKey, CellStore
from embedding_ttc.analysis.groups import MatrixEnvironment
from embedding_ttc.analysis.head_store import HeadProgram, HeadStore, load_or_train, prepare_heads
from embedding_ttc.analysis.heads import (
    HEAD_FAMILIES,
    LEARNED_HEAD,
    HeadConfig,
    HeadFamily,
    HeadRecord,
    HeadStoreError,
    embed_tasks,
    init_head,
    select_family,
    task_ndcg,
    train_heads,
    training_pairs,
    validation_rows,
)
from embedding_ttc.analysis.inputs import load_heads
from embedding_ttc.analysis.matrix import run_matrix
from embedding_ttc.analysis.plan import plan
from embedding_ttc.errors import UnknownNameError
from embedding_ttc.evaluation.evaluate import evaluate_programs
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.programs.p0 import P0
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder

BOOT = BootstrapConfig(resamples=200, seed=0)
FAST = HeadConfig(lr=1e-2, epochs=20)  # the toy has 96 pairs: 2 batches an epoch
RESIDUAL = ("linear", "lowrank-64", "mlp")

# Every text is one topic word (shared by a query and its one relevant document) among five
# filler words drawn from a fixed query-side or document-side vocabulary. The fillers swamp the
# cosine (P0 is poor), but they span a fixed subspace that a linear map can learn to suppress,
# for topics it never saw as well.
QUERY_FILLER = ["what", "which", "find", "tell", "about", "show", "please", "give"]
DOC_FILLER = ["document", "report", "section", "text", "describes", "page", "chapter", "article"]


def topic_task(name: str, n: int, seed: int) -> RetrievalTask:
    rng = np.random.default_rng(seed)
    topics = [f"{name}topic{i}" for i in range(n)]
    return RetrievalTask(
        name=name,
        doc_ids=[f"d{i}" for i in range(n)],
        doc_titles=[""] * n,
        doc_bodies=[" ".join([t, *rng.choice(DOC_FILLER, 5)]) for t in topics],
        query_ids=[f"q{i}" for i in range(n)],
        query_texts=[" ".join([t, *rng.choice(QUERY_FILLER, 5)]) for t in topics],
        qrels={f"q{i}": {f"d{i}": 1, f"d{(i + 1) % n}": 0} for i in range(n)},
    )


DISCOVERY = [topic_task("a", 60, 1), topic_task("b", 60, 2)]
HELDOUT = topic_task("c", 40, 3)


@pytest.fixture(scope="module")
def data():
    return embed_tasks(HashingEncoder(dim=32), DISCOVERY)


@pytest.fixture(scope="module")
def trained(data):
    return train_heads("fake", data, FAST)


def p0_validation(data, config=FAST):
    rows = [validation_rows(te.task, config.validation_fraction, config.seed) for te in data]
    return float(np.mean([task_ndcg(None, te)[v].mean() for te, v in zip(data, rows, strict=True)]))


def test_the_split_holds_out_a_fifth_of_each_task_and_trains_on_the_rest(data):
    val = [validation_rows(te.task, 0.2, 0) for te in data]
    assert [v.size for v in val] == [12, 12]
    assert not np.array_equal(val[0], validation_rows(DISCOVERY[0], 0.2, 1))  # seeded
    Xq, Xd = training_pairs(data, val)
    assert Xq.shape == Xd.shape == (96, 32)  # 48 training queries a task, one positive each
    # The first training pair is task a's first training query and its grade-1 document.
    first = next(i for i in range(60) if i not in set(val[0].tolist()))
    np.testing.assert_array_equal(Xq[0], data[0].Q[first])
    np.testing.assert_array_equal(Xd[0], data[0].D[first])


@pytest.mark.parametrize("family", RESIDUAL)
def test_trained_families_start_as_the_identity(family, data):
    head = init_head(family, 32, seed=0)
    te = data[0]
    S = te.Q @ te.D.T
    Q, D = te.Q.copy(), te.D.copy()
    out = HeadProgram(head)(te.Q, te.D, S, None)
    np.testing.assert_allclose(out, S, atol=1e-6)
    np.testing.assert_array_equal(te.Q, Q)  # inputs untouched
    np.testing.assert_array_equal(te.D, D)
    untrained = train_heads("fake", data, HeadConfig(families=(family,), epochs=0))
    assert untrained.record.families[0].validation_ndcg_at_10 == pytest.approx(p0_validation(data))


def test_training_is_deterministic(data, trained):
    again = train_heads("fake", data, FAST)
    timeless = {"families": {"__all__": {"train_seconds"}}}
    assert again.record.model_dump(exclude=timeless) == trained.record.model_dump(exclude=timeless)
    for family in HEAD_FAMILIES:
        a, b = trained.heads[family].weights, again.heads[family].weights
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    other = train_heads("fake", data, HeadConfig(families=("lowrank-64",), lr=1e-2, seed=1))
    A = trained.heads["lowrank-64"].weights["A"]
    assert not np.array_equal(other.heads["lowrank-64"].weights["A"], A)


def test_infonce_raises_validation_ndcg_where_a_linear_map_helps(data, trained):
    base = p0_validation(data)
    linear = trained.record.family("linear")
    assert base < 0.5
    assert linear.validation_ndcg_at_10 > base + 0.3
    assert linear.discovery_ndcg_at_10 > linear.validation_ndcg_at_10 - 0.1  # fits training too


def test_the_record_counts_and_chooses(trained):
    r = trained.record
    assert (r.schema_version, r.kind, r.encoder, r.seed) == (1, "head_training", "fake", 0)
    assert (r.n_train_pairs, r.n_validation_queries) == (96, 24)
    assert [f.family for f in r.families] == list(HEAD_FAMILIES)
    d = 32
    assert [f.parameters for f in r.families] == [d * d + d, d * d, 2 * 64 * d, 2 * d * d + 2 * d]
    best = max(r.families, key=lambda f: f.validation_ndcg_at_10)
    assert r.chosen == best.family
    assert trained.chosen is trained.heads[r.chosen]


def test_selection_takes_the_best_validation_and_the_first_of_a_tie():
    def fam(name, val):
        return HeadFamily(
            family=name,
            parameters=1,
            train_seconds=0.0,
            validation_ndcg_at_10=val,
            discovery_ndcg_at_10=0.9,  # not a selection criterion
        )

    assert select_family([fam("linear", 0.3), fam("mlp", 0.5), fam("lowrank-64", 0.4)]) == "mlp"
    assert select_family([fam("linear", 0.5), fam("mlp", 0.5)]) == "linear"
    with pytest.raises(ValueError):
        select_family([])


def test_unknown_families_are_refused_with_a_suggestion():
    with pytest.raises(UnknownNameError, match="lowrank-64"):
        HeadConfig(families=("lowrank",))


def test_the_record_validates_round_trips_and_the_report_reads_it(tmp_path, trained):
    store = HeadStore(tmp_path)
    path = store.write(trained)
    assert path == tmp_path / "heads" / "fake.json"
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.json", "fake.npz"]
    body = json.loads(path.read_text())
    assert HeadRecord.model_validate(body) == trained.record
    loaded = store.load("fake")
    assert loaded.record == trained.record
    for family, head in trained.heads.items():
        for k, v in head.weights.items():
            np.testing.assert_array_equal(loaded.heads[family].weights[k], v)
    assert load_heads(tmp_path) == ((trained.record,), "")


def test_weights_of_another_training_are_refused(tmp_path, trained):
    store = HeadStore(tmp_path)
    store.write(trained)
    other = trained.record.model_copy(update={"seed": 5})
    store.record_path("fake").write_text(other.model_dump_json(indent=1) + "\n")
    with pytest.raises(HeadStoreError, match="another training"):
        store.load("fake")
    assert store.reusable("fake", FAST) is None
    with pytest.raises(HeadStoreError, match="--heads"):
        HeadStore(tmp_path / "empty").load("fake")


def test_a_rerun_reuses_the_stored_head_unless_seed_or_families_differ(tmp_path, data):
    store = HeadStore(tmp_path)
    calls = []

    def provide():
        calls.append(1)
        return data

    config = HeadConfig(families=("pca-whitening", "linear"))
    first, reused = load_or_train(store, "fake", config, provide)
    assert not reused and len(calls) == 1
    second, reused = load_or_train(store, "fake", config, provide)
    assert reused and len(calls) == 1 and second.record == first.record
    _, reused = load_or_train(store, "fake", HeadConfig(families=("linear",)), provide)
    assert not reused and len(calls) == 2
    third, reused = load_or_train(store, "fake", HeadConfig(families=("linear",), seed=3), provide)
    assert not reused and len(calls) == 3 and third.record.seed == 3


def test_heads_trained_on_other_tasks_are_retrained(tmp_path, data):
    store = HeadStore(tmp_path)
    names = [te.task.name for te in data]
    config = HeadConfig(families=("pca-whitening",))
    first, _ = load_or_train(store, "fake", config, lambda: data, names)
    assert first.record.tasks == names
    _, reused = load_or_train(store, "fake", config, lambda: pytest.fail("retrained"), names)
    assert reused
    # Any tasks will do when none are named (a matrix run without discovery tasks).
    assert store.reusable("fake", config) is not None
    assert store.reusable("fake", config, names[:1]) is None
    fewer, reused = load_or_train(store, "fake", config, lambda: data[:1], names[:1])
    assert not reused and fewer.record.tasks == names[:1]


@dataclass(frozen=True)
class FakeEnvironment(MatrixEnvironment):
    """The hashing fake encoder and the in-test topic tasks, by name."""

    def encoder(self, name):
        return HashingEncoder(dim=32)

    def task(self, name):
        return {t.name: t for t in [*DISCOVERY, HELDOUT]}[name]


def test_the_learned_head_cell_is_against_p0(tmp_path, data):
    env = FakeEnvironment(heads_root=tmp_path)
    cells, heads = CellStore(tmp_path), HeadStore(tmp_path)
    the_plan = plan(["fake"], ["c"], ["P0", LEARNED_HEAD])
    config = HeadConfig(families=("linear",), lr=1e-2, epochs=20)
    (prepared,) = prepare_heads(the_plan, cells, heads, config, lambda e: data)
    assert not prepared.reused
    outcome = run_matrix(the_plan, cells, env=env, bootstrap=BOOT)
    assert not outcome.failed
    cell = cells.load(CellKey("fake", "c", LEARNED_HEAD))
    p0 = cells.load(CellKey("fake", "c", "P0"))
    assert cell.baseline_per_query == p0.per_query
    # Worked out apart from the matrix: P0 and the head's cosine, ranked under the task's rules.
    (base,) = evaluate_programs([P0()], HELDOUT, HashingEncoder(dim=32))
    assert p0.per_query == base.per_query
    (te,) = embed_tasks(HashingEncoder(dim=32), [HELDOUT])
    head = prepared.trained.chosen
    expected = TaskRanker(HELDOUT).ndcg(head.transform(te.Q) @ head.transform(te.D).T)
    assert list(cell.per_query.values()) == pytest.approx(expected.tolist())
    diffs = [cell.per_query[q] - b for q, b in p0.per_query.items()]
    assert cell.delta == pytest.approx(np.mean(diffs))
    assert cell.delta > 0.1  # the fillers of task c are those the head learned
    assert (cell.cost_ratio, cell.program_calls) == (1.0, 0)
    assert cell.bootstrap.resamples == 200


@pytest.fixture
def head_cell(tmp_path, data):
    """A one-cell LearnedHead matrix, computed with a linear head."""
    env = FakeEnvironment(heads_root=tmp_path)
    cells, heads = CellStore(tmp_path), HeadStore(tmp_path)
    the_plan = plan(["fake"], ["c"], [LEARNED_HEAD])
    config = HeadConfig(families=("linear",))
    prepare_heads(the_plan, cells, heads, config, lambda e: data)
    run_matrix(the_plan, cells, env=env, bootstrap=BOOT)
    return cells, heads, the_plan, CellKey("fake", "c", LEARNED_HEAD), config


def test_retraining_drops_the_stale_head_cells(head_cell, data):
    cells, heads, the_plan, key, config = head_cell
    (again,) = prepare_heads(the_plan, cells, heads, config, lambda e: pytest.fail("retrained"))
    assert again.reused and again.dropped == () and key in cells
    (moved,) = prepare_heads(the_plan, cells, heads, HeadConfig(families=("mlp",)), lambda e: data)
    assert not moved.reused and moved.dropped == (cells.path(key),) and key not in cells


def test_stored_cells_need_only_the_record_and_a_cell_to_compute_needs_the_weights(head_cell, data):
    cells, heads, the_plan, key, config = head_cell
    heads.weights_path("fake").unlink()  # a matrix kept with its head records, not its weights
    (kept,) = prepare_heads(
        the_plan, cells, heads, config, lambda e: pytest.fail("retrained"), compute=[]
    )
    assert kept.reused and kept.trained is None and kept.dropped == () and key in cells
    assert kept.record == heads.matching_record("fake", config)
    other = HeadConfig(families=("linear",), seed=1)  # another training: the cells are stale
    assert heads.matching_record("fake", other) is None
    (moved,) = prepare_heads(the_plan, cells, heads, other, lambda e: data, compute=[])
    assert not moved.reused and moved.dropped == (cells.path(key),) and key not in cells
    heads.weights_path("fake").unlink()
    (again,) = prepare_heads(the_plan, cells, heads, other, lambda e: data, compute=[key])
    assert not again.reused and again.trained is not None  # to compute: weights needed


def test_learned_head_cells_need_a_heads_root(tmp_path):
    with pytest.raises(HeadStoreError, match="heads_root"):
        MatrixEnvironment().program(LEARNED_HEAD, "fake")
    assert MatrixEnvironment().program("P0", "fake").name == "P0"


def test_transfer_command_trains_then_reuses_heads(shared_datasets, tmp_path, capsys):
    from embedding_ttc.cli.analysis import main

    out = tmp_path / "run"
    argv = [
        "transfer",
        "--suite", "smoke",
        "--task", "financebench",
        "--encoders", "tokenlearn-static-64",
        "--programs", "P0",
        "--heads",
        "--discovery-suite", "smoke",
        "--out", str(out),
        "--bootstrap", "100",
        "--data-dir", str(shared_datasets),
        "--cache-dir", str(tmp_path / "cache"),
        "--no-progress",
    ]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "heads: tokenlearn-static-64: trained" in err
    record = HeadRecord.model_validate_json(
        (out / "heads" / "tokenlearn-static-64.json").read_text()
    )
    assert [f.family for f in record.families] == list(HEAD_FAMILIES)
    cells = CellStore(out)
    for task in ("aila_statutes", "financebench", "limit-small"):  # discovery column included
        assert CellKey("tokenlearn-static-64", task, LEARNED_HEAD) in cells
    manifest = json.loads((out / "transfer.json").read_text())
    assert manifest["programs"] == ["P0", LEARNED_HEAD]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "heads: tokenlearn-static-64: reused" in err and "0 to compute" in err
