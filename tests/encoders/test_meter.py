import pytest

from embedding_ttc.encoders.meter import Meter, MeteredEncoder

from fakes import HashingEncoder


def test_counts_by_stage_side_and_view():
    meter = Meter()
    enc = MeteredEncoder(HashingEncoder(), meter)
    with meter.scope(stage="base", side="index"):
        enc.encode(["a", "b", "c"], view="retrieval.passage")
    with meter.scope(stage="base", side="query"):
        enc.encode(["q"], view="retrieval.query")
    with meter.scope(stage="program", side="query"):
        enc.encode(["q x", "q y"], view="text-matching")
        with meter.scope(side="index"):
            enc.encode(["a"], view="retrieval.query")
    snap = meter.snapshot()
    assert snap.texts == {
        "base/index/retrieval.passage": 3,
        "base/query/retrieval.query": 1,
        "program/query/text-matching": 2,
        "program/index/retrieval.query": 1,
    }
    assert snap.total("base") == 4 and snap.total("program") == 3
    assert snap.total(side="index") == 4 and snap.total(side="query") == 3
    assert snap.cost_ratio == pytest.approx(7 / 4)
    assert snap.seconds > 0


def test_snapshot_difference():
    meter = Meter()
    enc = MeteredEncoder(HashingEncoder(), meter)
    enc.encode(["a"], view="retrieval.query")
    first = meter.snapshot()
    enc.encode(["b", "c"], view="retrieval.query")
    assert meter.snapshot().minus(first).texts == {"program/query/retrieval.query": 2}
