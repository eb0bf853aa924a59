"""The query-time API: parity with the evaluate path, the split of every program, the API."""

from __future__ import annotations

import threading
from unittest import mock

import numpy as np
import pytest

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder
from embedding_ttc.evaluation.batches import shortlists
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.programs.catalog import PROGRAMS, get_program, recipe_for
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.task import RetrievalTask

from . import QUERIES, corpus
from fakes import HashingEncoder

FAST_ENCODER = "tokenlearn-static-64"
TOL = 1e-6


def task_documents(task: RetrievalTask) -> list[Document]:
    return [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ]


@pytest.fixture(scope="module")
def aila(packaged_datasets) -> RetrievalTask:
    return load_task("aila_statutes", packaged_datasets)


@pytest.fixture(scope="module")
def fast_encoder(tmp_path_factory):
    return CachedEncoder(load_encoder(FAST_ENCODER), tmp_path_factory.mktemp("deploy-cache"))


@pytest.fixture(scope="module")
def aila_index(aila, fast_encoder, tmp_path_factory):
    """Build (once per module) the aila_statutes index of a program with the fast encoder."""
    root = tmp_path_factory.mktemp("aila-indexes")
    built: dict[str, Reranker] = {}

    def get(program: str) -> Reranker:
        if program not in built:
            index = Index.build(
                root / program,
                task_documents(aila),
                encoder=fast_encoder,
                program=program,
                reference_queries=list(aila.query_texts[:16]),
            )
            built[program] = Reranker(index, fast_encoder)
        return built[program]

    return get


def max_diff(run, scored) -> float:
    """Largest |evaluate score - deployed score| over every query and candidate."""
    worst = 0.0
    for (cand, values), dep_cand, dep_values in zip(
        run.rows, scored.candidates, scored.scores, strict=True
    ):
        if cand is None:
            cand = np.arange(values.size)
        order = np.argsort(cand)
        np.testing.assert_array_equal(cand[order], dep_cand)
        worst = max(worst, float(np.abs(values[order] - dep_values).max()))
    return worst


# --- parity with the evaluate path ---------------------------------------------------------------

BATCH_FREE = ["P0", "SoftCentroid", "SentMaxSim"]


def test_full_corpus_scores_equal_the_evaluate_path(aila, fast_encoder, aila_index):
    programs = [get_program(n) for n in BATCH_FREE]
    queries = list(aila.query_texts)
    for run, name in zip(run_programs(programs, aila, fast_encoder), BATCH_FREE, strict=True):
        reranker = aila_index(name)
        scored = reranker.score(queries, [aila.doc_ids] * len(queries))
        assert max_diff(run, scored) <= TOL, name
        assert scored.stats.index_misses == 0
        assert scored.stats.program_encodes == 0  # no stored document is re-encoded
        # The rankings are the evaluate path's (same tie-break).
        ranked = reranker.top(scored, 10)
        for (_, ids, _), mine in zip(run.rankings(10), ranked, strict=True):
            assert [d for d, _ in mine] == ids


def test_shortlist_scores_equal_the_evaluate_path_one_query_at_a_time(
    aila, fast_encoder, aila_index
):
    programs = [get_program(n) for n in BATCH_FREE]
    runs = run_programs(programs, aila, fast_encoder, shortlist=20)
    for run, name in zip(runs, BATCH_FREE, strict=True):
        reranker = aila_index(name)
        for i in (0, 17, 49):
            cand, values = run.rows[i]
            ids = [aila.doc_ids[j] for j in cand]
            ranked = reranker.rerank(aila.query_texts[i], ids, k=len(ids))
            got = dict(ranked)
            assert max(abs(got[d] - v) for d, v in zip(ids, values, strict=True)) <= TOL, name


def test_search_equals_evaluate_with_a_dense_shortlist(aila, fast_encoder, aila_index):
    run = next(run_programs([get_program("SoftCentroid")], aila, fast_encoder, shortlist=20))
    got = aila_index("SoftCentroid").search_batch(list(aila.query_texts), k=10, shortlist=20)
    for (_, ids, scores), mine in zip(run.rankings(10), got, strict=True):
        assert [d for d, _ in mine] == ids
        np.testing.assert_allclose([s for _, s in mine], scores, atol=TOL)


# CrossRoundRRF and CoverageTriple: the chunk channels LexicalHybridRRF shares, by stored row.
@pytest.mark.parametrize(
    "name", ["BidirZScore", "LexicalHybridRRF", "CrossRoundRRF", "CoverageTriple"]
)
def test_batch_statistics_programs_match_evaluate_when_run_jointly(
    aila, fast_encoder, aila_index, name
):
    # One shortlist batch holds all 50 queries (SHORTLIST_BATCH = 64): joint=True is that call.
    run = next(run_programs([get_program(name)], aila, fast_encoder, shortlist=20))
    ids = [[aila.doc_ids[j] for j in cand] for cand, _ in run.rows]
    scored = aila_index(name).score(list(aila.query_texts), ids, joint=True)
    assert max_diff(run, scored) <= TOL
    assert scored.stats.index_misses == 0


# The programs with a deployed path of their own (ctx.deployed.scored_rows), and where it is chosen.
LIVE_PATHS = {
    "LexicalHybridRRF": "embedding_ttc.programs.library.lexical_hybrid_rrf",
    "CrossRoundRRF": "embedding_ttc.programs.library.cross_round_rrf",
}


@pytest.mark.parametrize("name", list(LIVE_PATHS))
def test_a_query_alone_scores_as_the_whole_call_with_its_reference_rows(aila, aila_index, name):
    """The live path (the live row's channels only, float32 centring) against every row's."""
    import importlib

    module = importlib.import_module(LIVE_PATHS[name])
    reranker = aila_index(name)
    ids = list(aila.doc_ids)
    queries = list(aila.query_texts[16:40])  # outside the reference sample
    real, chosen = module.live_rows, []

    def spy(ctx, n_rows):
        chosen.append(real(ctx, n_rows))
        return chosen[-1]

    with mock.patch.object(module, "live_rows", side_effect=spy):
        live = [reranker.score([q], [ids]) for q in queries]
    assert len(chosen) == len(queries) and set(chosen) == {1}  # the live path ran every time
    with mock.patch.object(module, "live_rows", return_value=None):
        whole = [reranker.score([q], [ids]) for q in queries]
    for a, b in zip(live, whole, strict=True):
        # RRF scores are functions of ranks: float32 rounding moves them only through a tie.
        np.testing.assert_array_equal(a.scores[0], b.scores[0])


def test_bm25_first_stage_equals_the_evaluate_path(aila, aila_index):
    bm25 = BM25.fit(aila.doc_texts)
    queries = list(aila.query_texts)
    scores = lambda rows: bm25.scores([queries[i] for i in rows])  # noqa: E731
    expected = shortlists(TaskRanker(aila), scores, 20)
    got = aila_index("P0").first_stage(queries, 20, "bm25")
    assert got == [[aila.doc_ids[j] for j in rows] for rows in expected]


def test_default_encoder_parity_on_a_small_subset(aila, tmp_path):
    """The default MiniLM encoder, on 12 shortened documents and 6 queries."""
    keep, nq = range(12), 6
    sub = RetrievalTask(
        name="aila-subset",
        doc_ids=[aila.doc_ids[j] for j in keep],
        doc_titles=[aila.doc_titles[j] for j in keep],
        doc_bodies=[aila.doc_bodies[j][:400] for j in keep],
        query_ids=list(aila.query_ids[:nq]),
        query_texts=[q[:300] for q in aila.query_texts[:nq]],
        qrels={q: dict(aila.qrels[q]) for q in aila.query_ids[:nq]},
    )
    encoder = CachedEncoder(load_encoder(DEFAULT_ENCODER), tmp_path / "cache")
    names = ["P0", "SoftCentroid"]
    runs = run_programs([get_program(n) for n in names], sub, encoder)
    for run, name in zip(runs, names, strict=True):
        index = Index.build(tmp_path / name, task_documents(sub), encoder=encoder, program=name)
        scored = Reranker(index, encoder).score(sub.query_texts, [sub.doc_ids] * nq)
        assert max_diff(run, scored) <= TOL, name


# --- every program deploys: the recipes' contract ----------------------------------------


def _alone_vs_joint(reranker: Reranker, queries, lists) -> float:
    joint = reranker.score(queries, lists, joint=True)
    alone = [reranker.score([q], [c], joint=True) for q, c in zip(queries, lists, strict=True)]
    return max(
        float(np.abs(j - a.scores[0]).max()) for j, a in zip(joint.scores, alone, strict=True)
    )


@pytest.mark.parametrize("name", PROGRAMS.names())
def test_recipe_matches_what_the_program_does(tmp_path, name):
    """Declared query-time encodes, index artifacts and batch kind, against behaviour."""
    recipe = recipe_for(name)
    for two_views in (False, True):
        encoder = HashingEncoder(two_views=two_views)
        index = Index.build(
            tmp_path / f"{two_views}", corpus(), encoder=encoder, program=name,
            reference_queries=QUERIES,
        )  # fmt: skip
        collapsed = encoder.info.collapsed
        expected = recipe.expected_query_encodes(collapsed)
        assert index.manifest.observed.query_encodes_per_query == expected
        assert len(index.manifest.segments[0].chunks) == len(recipe.active_artifacts(collapsed))
        reranker = Reranker(index, encoder)
        ids = list(index.doc_ids)
        scored = reranker.score(QUERIES[:2], [ids[:6], ids[2:]])
        assert scored.stats.index_misses == 0  # every document-side text came from the index
        assert scored.stats.program_encodes == 2 * expected
    # A query's scores never depend on the other queries of a call.
    batch = reranker.top(scored, 4)
    alone = [reranker.rerank(QUERIES[0], ids[:6], 4), reranker.rerank(QUERIES[1], ids[2:], 4)]
    for got, want in zip(batch, alone, strict=True):
        assert [d for d, _ in got] == [d for d, _ in want]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=TOL)
    # The batch kind: do other queries (own candidates / shared ones) move a query's scores?
    moved_own = _alone_vs_joint(reranker, QUERIES[:3], [ids[:5], ids[3:], ids[::2]]) > 1e-5
    moved_shared = _alone_vs_joint(reranker, QUERIES[:3], [ids] * 3) > 1e-5
    observed = "reference" if moved_shared else ("candidates" if moved_own else "independent")
    # A recipe may declare more dependence than a tiny corpus shows (CrossRoundRRF's RRF of
    # round ranks hides it here), never less: that would deploy it wrongly.
    kinds = ["independent", "candidates", "reference"]
    assert kinds.index(observed) <= kinds.index(recipe.batch)
    if name in ("BidirZScore", "LexicalHybridRRF", "SoftCentroid", "CoverageTriple", "BM25"):
        assert observed == recipe.batch


@pytest.mark.parametrize("name", PROGRAMS.names())
def test_a_build_running_the_program_on_its_first_block_only_serves_as_a_full_recording(
    tmp_path, monkeypatch, name
):
    """A library program runs over the first block; its recipe's artifacts fill the rest."""
    import embedding_ttc.deploy.recording as recording

    encoder = HashingEncoder(two_views=True)
    docs = corpus()
    full = Index.build(tmp_path / "full", docs, encoder=encoder, program=name,
                       reference_queries=QUERIES)  # fmt: skip
    monkeypatch.setattr(recording, "BUILD_BLOCK", 3)  # corpus() has more documents than that
    assert len(docs) > 3
    sampled = Index.build(tmp_path / "sampled", docs, encoder=encoder, program=name,
                          reference_queries=QUERIES)  # fmt: skip
    a, b = full.manifest, sampled.manifest
    assert a.counts.store_rows == b.counts.store_rows
    assert a.counts.index_encodes == b.counts.index_encodes
    assert a.observed.query_encodes_per_query == b.observed.query_encodes_per_query
    ids = list(full.doc_ids)
    lists = [ids[:6], ids[2:], ids]
    want = Reranker(full, encoder).score(QUERIES[:3], lists)
    got = Reranker(sampled, encoder).score(QUERIES[:3], lists)
    assert got.stats.index_misses == 0  # every document-side text came from the index
    for x, y in zip(got.scores, want.scores, strict=True):
        np.testing.assert_allclose(x, y, atol=TOL)


# --- the API -------------------------------------------------------------------------------------


@pytest.fixture()
def small(tmp_path) -> Reranker:
    encoder = HashingEncoder()
    index = Index.build(
        tmp_path / "ix", corpus(), encoder=encoder, program="BidirZScore", reference_queries=QUERIES
    )
    return Reranker(index, encoder)


def test_rerank_returns_the_best_k_best_first(small):
    ranked = small.rerank("sleeping cats", ["d4", "d0", "d1"], k=2)
    assert len(ranked) == 2
    assert all(isinstance(d, str) and isinstance(s, float) for d, s in ranked)
    assert ranked[0][1] >= ranked[1][1]
    assert small.rerank("sleeping cats", ["d4", "d0", "d1"], k=50)[:2] == ranked
    # The order of the caller's candidates does not matter.
    assert small.rerank("sleeping cats", ["d1", "d4", "d0"], k=2) == ranked


def test_deployed_reference_rows_make_a_lone_query_meaningful(small):
    # Alone, a column z-score over one query is 0 everywhere; the reference rows fix that.
    ids = list(small.index.doc_ids)
    alone = small.score(["sleeping cats"], [ids], joint=True)
    deployed = small.score(["sleeping cats"], [ids])
    assert np.all(alone.scores[0] == 0.0)
    assert np.ptp(deployed.scores[0]) > 0


def test_search_uses_the_first_stage_then_the_program(small):
    for kind in ("dense", "bm25"):
        shortlist = small.first_stage(["baking bread"], 3, kind)[0]
        assert len(shortlist) == 3
        got = small.search("baking bread", k=2, first_stage=kind, shortlist=3)
        assert got == small.rerank("baking bread", shortlist, k=2)
    assert small.search("baking bread", k=5, shortlist=2) == small.rerank(
        "baking bread", small.first_stage(["baking bread"], 5)[0], k=5
    )  # the shortlist is at least k


@pytest.mark.parametrize(
    ("candidates", "k", "error", "message"),
    [
        (["d0", "nope"], 2, CandidateRequestError, "unknown candidate id 'nope'"),
        (["d0", "d1", "d0"], 2, CandidateRequestError, "candidate id 'd0' is given twice"),
        ([], 2, CandidateRequestError, "the candidate list is empty"),
        (["d0"], 0, ValueError, "k must be a positive integer"),
        (["d0"], True, ValueError, "k must be a positive integer"),
        ("d0", 1, TypeError, "not a single string"),
    ],
)
def test_bad_calls_name_the_problem(small, candidates, k, error, message):
    with pytest.raises(error, match=message):
        small.rerank("q", candidates, k)


def test_unknown_candidate_error_carries_its_position(small):
    with pytest.raises(CandidateRequestError) as err:
        small.rerank_batch(["a", "b"], [["d0"], ["d1", "d2", "zz"]])
    assert (err.value.query, err.value.position) == (1, 2)


def test_concurrent_calls_give_the_sequential_answers(aila, aila_index):
    reranker = aila_index("SentMaxSim")
    queries = list(aila.query_texts[:12])
    expected = [reranker.search(q, k=5, shortlist=30) for q in queries]
    got: dict[int, object] = {}

    def worker(offset: int) -> None:
        for i in range(offset, len(queries), 4):
            got[i] = reranker.search(queries[i], k=5, shortlist=30)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [got[i] for i in range(len(queries))] == expected
