import json

import pytest

from embedding_ttc.analysis.cells import (
    CELL_SCHEMA_VERSION,
    BootstrapConfig,
    Cell,
    CellKey,
    CellStore,
    CellStoreError,
    make_cell,
)
from embedding_ttc.analysis.stats import cell_seed
from embedding_ttc.evaluation.comparison import WTL
from embedding_ttc.evaluation.records import (
    CostRecord,
    EncoderRecord,
    TaskRecord,
    TaskResult,
    Timings,
)


def result(program, per_query, program_calls=0):
    n = len(per_query)
    return TaskResult(
        encoder=EncoderRecord(
            name="enc",
            family="fake",
            model_id="fake/enc",
            revision="r1",
            dim=4,
            views={},
            collapsed=True,
        ),
        task=TaskRecord(name="t", n_docs=10, n_queries=n, pool=False, source="test"),
        program=program,
        ndcg_at_10=sum(per_query.values()) / n,
        per_query=per_query,
        cost=CostRecord(
            texts={},
            base_calls=10 + n,
            program_calls=program_calls,
            index_calls=10,
            query_calls=n + program_calls,
            cost_ratio=(10 + n + program_calls) / (10 + n),
            query_time_cost_ratio=1.0,
        ),
        timings=Timings(
            total_seconds=1.0,
            encode_seconds=0.5,
            forward_seconds=0.4,
            program_seconds=0.2,
            algebra_seconds=0.1,
            scoring_seconds=0.05,
        ),
        versions={},
    )


BASE = result("P0", {"q1": 0.5, "q2": 0.2, "q3": 1.0, "q4": 0.0})
PROG = result("Rocchio:K=3,beta=0.5", {"q1": 0.7, "q2": 0.2005, "q3": 0.9, "q4": 0.1}, 6)
CONFIG = BootstrapConfig(resamples=500, seed=4)


def test_make_cell_by_hand():
    cell = make_cell("my-encoder", PROG, BASE, CONFIG)
    assert cell.key == CellKey("my-encoder", "t", "Rocchio:K=3,beta=0.5")
    assert cell.encoder_revision == "r1"
    # Δ = mean(0.2, 0.0005, -0.1, 0.1) = 0.050125; 0.0005 is a tie at ±0.001.
    assert cell.delta == cell.comparison.delta_ndcg_at_10 == pytest.approx(0.050125)
    assert cell.comparison.wtl == WTL(wins=2, ties=1, losses=1)
    assert cell.differences() == pytest.approx([0.2, 0.0005, -0.1, 0.1])
    assert cell.comparison.ndcg_at_10 == PROG.ndcg_at_10
    assert cell.comparison.baseline_ndcg_at_10 == BASE.ndcg_at_10
    assert cell.n_queries == 4
    assert (cell.base_calls, cell.program_calls, cell.cost_ratio) == (14, 6, 20 / 14)
    assert cell.bootstrap.seed == cell_seed(4, "my-encoder", "t", "Rocchio:K=3,beta=0.5")
    assert cell.bootstrap.resamples == 500 and cell.bootstrap.base_seed == 4
    assert cell.bootstrap.matches(CONFIG)
    assert not cell.bootstrap.matches(BootstrapConfig(resamples=500, seed=5))


def test_p0_against_itself_is_all_ties():
    cell = make_cell("enc", BASE, BASE, CONFIG)
    assert cell.delta == 0.0
    assert cell.comparison.wtl == WTL(wins=0, ties=4, losses=0)
    assert (cell.bootstrap.ci_low, cell.bootstrap.ci_high, cell.bootstrap.p_value) == (0, 0, 1)


def test_restat_recomputes_only_the_statistics():
    cell = make_cell("enc", PROG, BASE, CONFIG)
    other = cell.restat(BootstrapConfig(resamples=300, seed=9))
    assert other.bootstrap.resamples == 300 and other.bootstrap.base_seed == 9
    assert other.model_dump(exclude={"bootstrap"}) == cell.model_dump(exclude={"bootstrap"})
    assert cell.restat(CONFIG) == cell  # same configuration, same numbers


def test_store_round_trip_and_layout(tmp_path):
    store = CellStore(tmp_path)
    cell = make_cell("enc/v1", PROG, BASE, CONFIG)
    path = store.write(cell)
    assert path == tmp_path / "cells" / "enc_v1" / "t" / "Rocchio_K=3,beta=0.5.json"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left
    assert store.load(cell.key) == cell
    assert cell.key in store
    assert json.loads(path.read_text())["schema_version"] == CELL_SCHEMA_VERSION


def test_missing_and_present_follow_the_plan_order(tmp_path):
    store = CellStore(tmp_path)
    a = make_cell("enc", BASE, BASE, CONFIG)
    b = make_cell("enc", PROG, BASE, CONFIG)
    plan = [CellKey("enc", "t", "X"), b.key, a.key, CellKey("enc", "u", "P0")]
    assert store.missing(plan) == plan
    store.write(a)
    store.write(b)
    assert store.missing(plan) == [CellKey("enc", "t", "X"), CellKey("enc", "u", "P0")]
    assert [c.key for c in store.present(plan)] == [b.key, a.key]


def test_a_malformed_or_misplaced_file_is_an_error_naming_it(tmp_path):
    store = CellStore(tmp_path)
    cell = make_cell("enc", PROG, BASE, CONFIG)
    path = store.write(cell)
    other = CellKey("enc", "t", "Other")
    store.path(other).write_text(path.read_text())
    with pytest.raises(CellStoreError, match="holds the cell"):
        store.load(other)
    path.write_text('{"schema_version": 1, "encoder": "enc"}')
    with pytest.raises(CellStoreError, match=str(path)):
        store.load(cell.key)
    body = json.loads(store.path(other).read_text())
    body["program"] = "Other"
    body["unexpected"] = 1  # unknown fields are errors
    store.path(other).write_text(json.dumps(body))
    with pytest.raises(CellStoreError, match="unexpected"):
        store.load(other)
    body.pop("unexpected")
    store.path(other).write_text(json.dumps(body))
    assert isinstance(store.load(other), Cell)


@pytest.mark.parametrize("version", [1, 2, CELL_SCHEMA_VERSION + 1])
def test_a_cell_of_another_schema_is_refused_naming_the_file_and_the_schema(tmp_path, version):
    store = CellStore(tmp_path)
    cell = make_cell("enc", PROG, BASE, CONFIG)
    path = store.write(cell)
    body = json.loads(path.read_text())
    body["schema_version"] = version
    path.write_text(json.dumps(body))
    with pytest.raises(
        CellStoreError, match=f"schema version {version}, this version reads 3"
    ) as e:
        store.load(cell.key)
    assert str(path) in str(e.value)
    with pytest.raises(ValueError, match=f"a transfer cell of schema {version} is not read"):
        Cell.model_validate(body)
