"""RanxFusion and the fusion bench: ranx's numbers worked by hand, names that round-trip, fits
that read only the judgements they are given."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ranx", reason="the tune extra (ranx) is not installed")

from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.library.ranx_fusion import (
    RANK_METHODS,
    SCORE_METHODS,
    RanxFusionError,
    decode_params,
    encode_params,
    fuse_rows,
    program_name,
)
from embedding_ttc.tasks.task import RetrievalTask
from embedding_ttc.tune.fusion import FusionBench, configurations

from fakes import HashingEncoder

DENSE = [np.array([0.9, 0.5, 0.1])]
LEXICAL = [np.array([1.0, 3.0, 2.0])]


def test_wsum_under_min_max_by_hand():
    # min-max: dense (1, 0.5, 0), BM25 (0, 1, 0.5); 0.3 * dense + 0.7 * BM25
    (fused,) = fuse_rows(
        DENSE, LEXICAL, method="wsum", norm="min-max", params={"weights": [0.3, 0.7]}
    )
    np.testing.assert_allclose(fused, [0.3, 0.85, 0.35])


def test_rrf_by_hand():
    # dense ranks d0, d1, d2; BM25 ranks d1, d2, d0 (Cormack et al. 2009, k = 60)
    (fused,) = fuse_rows(DENSE, LEXICAL, method="rrf", norm="min-max", params={"k": 60})
    expected = [1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62]
    np.testing.assert_allclose(fused, expected)


def test_zmuv_sum_by_hand():
    # z-scores with the population deviation: dense (0.9, 0.5, 0.1) -> (1.2247, 0, -1.2247)
    (fused,) = fuse_rows(DENSE, LEXICAL, method="sum", norm="zmuv", params={})
    z = np.sqrt(1.5)
    np.testing.assert_allclose(fused, [z - z, 0 + z, -z + 0], atol=1e-9)


def test_names_round_trip_scalars_lists_and_tables():
    params = {"weights": (0.3, 0.7), "k": 20, "phi": np.float64(0.72)}
    name = program_name("wsum", "min-max", params)
    assert name == "RanxFusion:method=wsum,norm=min-max,k=20,phi=0.72,weights=0.3/0.7"
    program = get_program(name)
    assert program.name == name
    assert program.params == {"k": 20, "phi": 0.72, "weights": [0.3, 0.7]}
    tables = {"probs": [np.array([0.5, 0.25]), np.array([0.125, 0.0])]}
    encoded = encode_params(tables)
    assert encoded == {"probs": "0.5/0.25|0.125/0.0"}
    decoded = decode_params("slidefuse", encoded)["probs"]
    assert [list(a) for a in decoded] == [[0.5, 0.25], [0.125, 0.0]]
    assert decode_params("probfuse", encoded)["probs"].shape == (2, 2)


def test_unknown_methods_and_norms_name_ranx_s():
    with pytest.raises(RanxFusionError, match="unknown method 'wsumm'"):
        get_program("RanxFusion:method=wsumm")
    with pytest.raises(RanxFusionError, match=r"unknown normaliser 'minmax'.*min-max"):
        get_program("RanxFusion:method=wsum,norm=minmax")
    with pytest.raises(RanxFusionError, match="not a list of numbers"):
        get_program("RanxFusion:method=wsum,weights=a/b")


def test_every_method_of_two_runs_is_tried_under_the_norms_that_change_it():
    tried = configurations()
    assert len(tried) == len(SCORE_METHODS) * 6 + len(RANK_METHODS)
    assert {m for m, _ in tried} == set(SCORE_METHODS) | set(RANK_METHODS)


def lexical_task() -> RetrievalTask:
    """Twelve queries whose one relevant document shares a rare word with them."""
    words = [f"term{i}" for i in range(12)]
    docs = [f"common filler text {w}" for w in words] + [
        f"common filler text {i}" for i in range(8)
    ]
    ids = [f"d{i}" for i in range(len(docs))]
    return RetrievalTask(
        name="lexical",
        doc_ids=ids,
        doc_titles=[""] * len(ids),
        doc_bodies=docs,
        query_ids=[f"q{i}" for i in range(12)],
        query_texts=[f"{w} common" for w in words],
        qrels={f"q{i}": {f"d{i}": 1} for i in range(12)},
    )


@pytest.fixture(scope="module")
def bench() -> FusionBench:
    return FusionBench(lexical_task(), HashingEncoder(dim=8, seed=1), shortlist=10)


def test_a_fit_reads_only_the_judgements_of_its_queries(bench):
    fit, held = [f"q{i}" for i in range(8)], [f"q{i}" for i in range(8, 12)]
    first = bench.tune(fit, held)
    # judgements of held-out queries changed: every fit is the same
    task = bench.task
    bench.task = RetrievalTask(
        **{**task.__dict__, "qrels": {**task.qrels, **{q: {"d19": 1} for q in held}}}
    )
    try:
        second = bench.tune(fit)
    finally:
        bench.task = task
    for a, b in zip(first.trials, second.trials, strict=True):
        assert (a.program, a.fit_ndcg) == (b.program, b.fit_ndcg)


def test_the_tuned_weights_follow_the_evidence(bench):
    tuning = bench.tune()
    wsum = tuning.trial("ranx", "wsum", "min-max")
    # BM25 finds every query's document; the 8-dimensional hashing encoder does not
    assert wsum.fit_ndcg == pytest.approx(1.0)
    assert tuning.best.fit_ndcg == pytest.approx(1.0)
    mostly_dense = tuning.trial("library", "ConvexHybrid", "minmax")  # the grid's last, 0.9
    assert mostly_dense.program == "ConvexHybrid:alpha=0.9,norm=minmax"
    assert mostly_dense.fit_ndcg is not None and mostly_dense.fit_ndcg < wsum.fit_ndcg
    failed = [t for t in tuning.trials if t.error]
    assert all(t.program is None and t.fit_ndcg is None for t in failed)


def test_a_grid_point_is_its_own_configuration(bench):
    tuning = bench.tune()
    point = next(t for t in tuning.trials if t.program == "ConvexHybrid:alpha=0.3,norm=zscore")
    assert tuning.configuration(point) is point
    wsum = tuning.trial("ranx", "wsum", "zmuv")
    assert tuning.configuration(wsum) is wsum


def test_cross_validation_scores_each_query_once(bench):
    cv = bench.cross_validate(3, seed=0)
    assert cv.fit_queries == 12
    assert all(t.held_ndcg is not None for t in cv.trials if t.error is None)
    with pytest.raises(ValueError, match="2 to 12 folds"):
        bench.cross_validate(13, seed=0)


def test_the_tuned_methods_are_those_ranx_optimises():
    from ranx.fusion_optimization import optimization_switch

    from embedding_ttc.programs.library.ranx_fusion import TUNED_METHODS, UNTUNED_METHODS

    for method in TUNED_METHODS:
        optimization_switch(method)  # ranx fits it
    for method in UNTUNED_METHODS:
        with pytest.raises(ValueError, match="does not support optimization"):
            optimization_switch(method)
