"""The feedback and expansion programs of the library, with the honest fake encoder.

SoftCentroid and Rocchio against their formulas worked out by hand; Rocchio's parametrised
names; the query-time encodes every expansion program spends; anchors drawn only from a
query's pool (a decoy outside every pool that would otherwise be the top anchor changes
nothing); the adaptive gate, the consensus split and the Fisher channel on hand-built inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from embedding_ttc.encoders.base import CLASSIFICATION, PASSAGE, QUERY, TEXT_MATCHING
from embedding_ttc.encoders.meter import Meter, MeteredEncoder
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.programs.base import Context
from embedding_ttc.programs.catalog import FRONTIER, get_program
from embedding_ttc.programs.library.consensus_rocchio import consensus_split
from embedding_ttc.programs.library.expansion import Pipeline, contrast
from embedding_ttc.programs.library.fisher_stability import fisher_scores
from embedding_ttc.programs.library.hybrid_evidence import hybrid_lexical
from embedding_ttc.programs.library.rocchio import Rocchio
from embedding_ttc.programs.library.soft_centroid import SoftCentroid
from embedding_ttc.programs.p0 import P0
from embedding_ttc.programs.primitives.chunking import split_sentences
from embedding_ttc.programs.primitives.scores import ranks
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder

# The frontier's query-expansion family: the six programs after CrossRoundRRF.
EXPANSION = list(FRONTIER[FRONTIER.index("CrossRoundRRF") + 1 :])


class Recorder:
    """A metered ``encode_fn`` that also keeps every text encoded at query time."""

    def __init__(self, encoder: HashingEncoder) -> None:
        self.meter = Meter()
        self.metered = MeteredEncoder(encoder, self.meter)
        self.query_time: list[tuple[str, str]] = []
        self._index_depth = 0

    def __call__(self, texts, view=QUERY, dim=None, max_length=None):
        if self._index_depth == 0:
            self.query_time.extend((view, t) for t in texts)
        return self.metered.encode(list(texts), view=view, dim=dim, max_length=max_length)

    def index_time(self):
        recorder = self
        scope = self.meter.scope(side="index")

        class _Scope:
            def __enter__(self) -> None:
                recorder._index_depth += 1
                scope.__enter__()

            def __exit__(self, *exc: object) -> None:
                scope.__exit__(*exc)
                recorder._index_depth -= 1

        return _Scope()


def make_context(task: RetrievalTask, encoder: HashingEncoder, candidates) -> tuple:
    rec = Recorder(encoder)
    D = encoder.encode(task.doc_texts, view=PASSAGE)
    Q = encoder.encode(list(task.query_texts), view=QUERY)
    ctx = Context(
        encode_fn=rec,
        query_texts=tuple(task.query_texts),
        doc_texts=tuple(task.doc_texts),
        query_ids=tuple(task.query_ids),
        doc_ids=tuple(task.doc_ids),
        candidates=candidates,
        views_collapsed=encoder.info.collapsed,
        index_time=rec.index_time,
    )
    return Q, D, Q @ D.T, ctx, rec


# --- SoftCentroid and Rocchio ---------------------------------------------------------------


def test_soft_centroid_equals_the_formula_by_hand(tiny_task) -> None:
    encoder = HashingEncoder(dim=32)
    Q, D, S, ctx, rec = make_context(tiny_task, encoder, None)
    out = SoftCentroid()(Q, D, S, ctx)
    row = 0  # "sleeping cats"
    q, s = Q[row].astype(np.float64), S[row].astype(np.float64)
    top = np.argsort(-s, kind="stable")[:3]
    w = np.exp((s[top] - s[top].max()) / 0.05)
    w /= w.sum()
    c = w @ D[top].astype(np.float64)
    c /= np.linalg.norm(c)
    moved = 0.5 * q + 0.5 * c
    moved /= np.linalg.norm(moved)
    np.testing.assert_allclose(out[row], moved @ D.T.astype(np.float64), atol=1e-5)
    assert out.dtype == np.float32 and rec.meter.snapshot().texts == {}


def test_soft_centroid_spends_no_encoder_call(tiny_task) -> None:
    result = evaluate(SoftCentroid(), tiny_task, HashingEncoder(dim=32))
    assert result.cost.program_calls == 0 and result.cost.cost_ratio == 1.0


def test_rocchio_equals_the_vprf_formula_by_hand(tiny_task) -> None:
    Q, D, S, ctx, _ = make_context(tiny_task, HashingEncoder(dim=32), None)
    out = Rocchio(K=2, beta=0.3)(Q, D, S, ctx)
    row = 1
    top = np.argsort(-S[row].astype(np.float64), kind="stable")[:2]
    moved = 0.7 * Q[row].astype(np.float64) + 0.3 * D[top].astype(np.float64).mean(axis=0)
    moved /= np.linalg.norm(moved)
    np.testing.assert_allclose(out[row], moved @ D.T.astype(np.float64), atol=1e-5)


def test_rocchio_with_beta_zero_ranks_like_p0(tiny_task) -> None:
    rng = np.random.default_rng(7)
    Q = rng.standard_normal((6, 16)).astype(np.float32)
    D = rng.standard_normal((40, 16)).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    S = Q @ D.T
    ctx = Context(
        encode_fn=lambda *a, **k: pytest.fail("Rocchio must not encode"),
        query_texts=("q",) * 6,
        doc_texts=("d",) * 40,
        query_ids=tuple(f"q{i}" for i in range(6)),
        doc_ids=tuple(f"d{j}" for j in range(40)),
    )
    for K in (2, 3, 5, 10):
        out = get_program(f"Rocchio:K={K},beta=0")(Q, D, S, ctx)
        np.testing.assert_array_equal(ranks(out), ranks(P0()(Q, D, S, ctx)))
    encoder = HashingEncoder(dim=32)
    p0 = evaluate(P0(), tiny_task, encoder)
    rocchio = evaluate(get_program("Rocchio:K=3,beta=0"), tiny_task, encoder)
    assert rocchio.per_query == p0.per_query


def test_rocchio_parametrised_through_the_catalog() -> None:
    program = get_program("Rocchio:K=2,beta=0.3")
    assert isinstance(program, Rocchio)
    assert program.name == "Rocchio:K=2,beta=0.3"
    assert (program.K, program.beta) == (2, 0.3)
    plain = get_program("Rocchio")
    assert plain.name == "Rocchio" and (plain.K, plain.beta) == (3, 0.5)
    soft = get_program("SoftCentroid")
    assert (soft.K, soft.alpha, soft.tau) == (3, 0.5, 0.05)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Rocchio(K=0),
        lambda: Rocchio(K=2.5),
        lambda: Rocchio(beta=1.5),
        lambda: SoftCentroid(tau=0.0),
        lambda: SoftCentroid(alpha=-0.1),
    ],
)
def test_feedback_programs_reject_bad_parameters(build) -> None:
    with pytest.raises(ValueError):
        build()


# --- what the expansion programs spend --------------------------------------------------------

# Query-time encodes per query, by view: (views collapsed, two distinct views).
PER_QUERY = {
    "DiverseDualCtx": ({QUERY: 2}, {QUERY: 2}),
    "ConsensusRocchio": ({QUERY: 2}, {QUERY: 2, PASSAGE: 1}),
    "NegContrastive": ({QUERY: 3}, {QUERY: 3, PASSAGE: 1}),
    "MomentumProg": (
        {QUERY: 4},
        {QUERY: 4, TEXT_MATCHING: 1, CLASSIFICATION: 1, PASSAGE: 2},
    ),
    "GraphCentrality": (
        {QUERY: 6},
        {QUERY: 6, TEXT_MATCHING: 1, CLASSIFICATION: 1, PASSAGE: 2},
    ),
    "FisherStability": (
        {QUERY: 8},
        {QUERY: 8, TEXT_MATCHING: 1, CLASSIFICATION: 1, PASSAGE: 2},
    ),
}


@pytest.mark.parametrize("name", EXPANSION)
@pytest.mark.parametrize("two_views", [False, True])
def test_expansion_programs_spend_the_intended_encodes(tiny_task, name, two_views) -> None:
    result = evaluate(get_program(name), tiny_task, HashingEncoder(dim=32, two_views=two_views))
    n_q, n_d = tiny_task.n_queries, tiny_task.n_docs
    n_sentences = sum(len(split_sentences(t)) for t in tiny_task.doc_texts)
    expected = {
        f"base/index/{PASSAGE}": n_d,
        f"base/query/{QUERY}": n_q,
        f"program/index/{PASSAGE}": n_sentences,  # the sentence channel
        **{f"program/query/{v}": n * n_q for v, n in PER_QUERY[name][two_views].items()},
    }
    if two_views:
        expected[f"program/index/{QUERY}"] = n_d  # documents under the query view
    assert result.cost.texts == expected
    assert result.cost.query_calls == n_q + n_q * sum(PER_QUERY[name][two_views].values())


# --- anchors come only from the pool --------------------------------------------------------

DOCS = [
    "Cats sleep most of the day. They purr when content. A cat naps in the sun.",
    "Interest rates rose again. Inflation stayed high. Markets fell sharply on the news.",
    "Bake bread with flour and water. Knead the dough. Let it rise overnight before baking.",
    "The court held that the statute applies. The appeal was dismissed. Costs were awarded.",
    "Dogs bark at strangers. A dog needs daily walks. Puppies chew shoes.",
    "Solar panels convert light. Batteries store the energy. Inverters feed the grid.",
    "Sleepy cats purr and nap. Interest rates and inflation rise. Bakers knead bread dough.",
    "Stock markets and bond yields. Central banks set interest rates. Prices and inflation.",
]
QUERIES = ["why do cats sleep so much", "inflation and interest rates", "how to bake bread"]
POOLS = {
    "q1": ["d0", "d1", "d4", "d6", "d3"],
    "q2": ["d1", "d3", "d5", "d0", "d7"],
    "q3": ["d2", "d0", "d5", "d6", "d4"],
}
# The decoy (last document, in no pool) repeats every query with a marker word, so without
# the pools it would top every query's ranking and be its dominant anchor.
DECOY_MATCHING = (
    "Why do cats sleep so much zebra. Inflation and interest rates zebra. How to bake bread zebra."
)
DECOY_UNRELATED = "Volcanoes erupt lava. Glaciers carve valleys. Tides follow the moon."


def decoy_task(decoy: str, pools: bool) -> RetrievalTask:
    docs = [*DOCS, decoy]
    ids = [f"d{i}" for i in range(len(docs))]
    return RetrievalTask(
        name="decoy",
        doc_ids=ids,
        doc_titles=[""] * len(ids),
        doc_bodies=docs,
        query_ids=["q1", "q2", "q3"],
        query_texts=QUERIES,
        qrels={"q1": {"d0": 1}, "q2": {"d1": 1}, "q3": {"d2": 1}},
        pools=POOLS if pools else None,
    )


def pool_candidates(task: RetrievalTask) -> tuple[np.ndarray, ...]:
    index = {d: i for i, d in enumerate(task.doc_ids)}
    return tuple(np.array([index[d] for d in task.pools[q]]) for q in task.query_ids)


def run(name: str, decoy: str, pools: bool) -> tuple[np.ndarray, Recorder, RetrievalTask]:
    task = decoy_task(decoy, pools)
    cands = pool_candidates(task) if pools else None
    Q, D, S, ctx, rec = make_context(task, HashingEncoder(dim=64), cands)
    return get_program(name)(Q, D, S, ctx), rec, task


def sentences_of(task: RetrievalTask, docs: Sequence[str]) -> set[str]:
    index = {d: i for i, d in enumerate(task.doc_ids)}
    return {s for d in docs for s in split_sentences(task.doc_texts[index[d]])}


@pytest.mark.parametrize("name", [*EXPANSION, "SoftCentroid", "Rocchio"])
def test_a_decoy_outside_the_pools_changes_nothing(name) -> None:
    # Without pools the decoy's text reaches the output (it is the anchor, or in the top K).
    free_a, rec_a, task = run(name, DECOY_MATCHING, pools=False)
    free_b, _, _ = run(name, DECOY_UNRELATED, pools=False)
    pooled_cols = sorted({int(d[1:]) for docs in POOLS.values() for d in docs})
    assert not np.allclose(free_a[:, pooled_cols], free_b[:, pooled_cols], atol=1e-6)
    if name in EXPANSION:
        assert any("zebra" in text for _, text in rec_a.query_time)

    # With pools, the decoy's text (and so its embedding) cannot move a candidate's score.
    pool_a, rec, task = run(name, DECOY_MATCHING, pools=True)
    pool_b, _, _ = run(name, DECOY_UNRELATED, pools=True)
    for row, cand in enumerate(pool_candidates(task)):
        np.testing.assert_allclose(pool_a[row, cand], pool_b[row, cand], rtol=1e-6, atol=1e-7)
    assert not any("zebra" in text for _, text in rec.query_time)
    # Every expansion is the query followed by sentences of documents in that query's pool.
    by_query = {q: sentences_of(task, POOLS[qid]) for q, qid in zip(QUERIES, POOLS, strict=True)}
    for _, text in rec.query_time:
        query = next((q for q in QUERIES if text.startswith(q)), None)
        assert query is not None, text
        context = text[len(query) :].strip()
        if context:
            assert any(s in context for s in by_query[query]), text


# --- the pieces on hand-built inputs ---------------------------------------------------------


def bare_pipeline(S: np.ndarray, D: np.ndarray, candidates=None) -> Pipeline:
    n_q, n_d = S.shape
    Q = np.zeros((n_q, D.shape[1]), dtype=np.float32)
    ctx = Context(
        encode_fn=lambda *a, **k: pytest.fail("no encoder call expected"),
        query_texts=("q",) * n_q,
        doc_texts=("d",) * n_d,
        query_ids=tuple(f"q{i}" for i in range(n_q)),
        doc_ids=tuple(f"d{j}" for j in range(n_d)),
        candidates=candidates,
    )
    return Pipeline(Q, D.astype(np.float32), S.astype(np.float32), ctx)


def test_the_adaptive_gate_admits_a_round_only_if_its_top_is_in_the_reference_top_quarter():
    reference = np.array([np.arange(8, 0, -1), np.arange(8, 0, -1)], dtype=np.float32)
    p = bare_pipeline(reference, np.eye(8))
    round_scores = np.zeros((2, 8), dtype=np.float32)
    round_scores[0, 5] = 1.0  # top document ranked 6th by the reference: outside its top 2
    round_scores[1, 1] = 1.0  # top document ranked 2nd: inside
    gated = p.add_gated("r", [round_scores], reference)
    np.testing.assert_array_equal(gated.scores[0], reference[0])  # fell back
    np.testing.assert_array_equal(gated.scores[1], round_scores[1])  # admitted


def test_the_gate_and_anchors_look_only_at_candidates():
    reference = np.array([[0.0, 9.0, 3.0, 2.0, 1.0]], dtype=np.float32)
    cands = (np.array([0, 2, 3, 4]),)  # column 1 scores high but is not a candidate
    p = bare_pipeline(reference, np.eye(5), cands)
    round_scores = np.array([[0.0, 0.0, 5.0, 0.0, 0.0]], dtype=np.float32)
    gated = p.add_gated("r", [round_scores], reference)  # top quarter of 4 candidates = {2}
    np.testing.assert_array_equal(gated.scores, round_scores)
    assert p.anchors(lambda row, cand: [int(cand[0])]) == [[0]]


def test_consensus_split_keeps_the_coherent_core_and_rejects_the_outlier():
    # 12 candidates: the top quarter is documents 0, 1, 2; 0 and 1 are close, 2 is apart.
    D = np.zeros((12, 4))
    D[0] = [1.0, 0.1, 0, 0]
    D[1] = [1.0, -0.1, 0, 0]
    D[2] = [0, 0, 1.0, 0]
    D[3:] = [0, 0, 0, 1.0]
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    scores = np.arange(12, 0, -1, dtype=np.float64)
    core, negatives = consensus_split(D, scores, np.arange(12))
    np.testing.assert_array_equal(core, [0, 1])
    np.testing.assert_array_equal(negatives, [2, 6, 7, 8, 9, 10, 11])  # outlier + bottom half


def test_fisher_channel_scores_the_top_versus_bottom_quarter_direction():
    rng = np.random.default_rng(3)
    D = rng.standard_normal((8, 5))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    ranking = np.array([[8, 7, 6, 5, 4, 3, 2, 1]], dtype=np.float32)
    p = bare_pipeline(ranking, D)
    w = D[[0, 1]].mean(axis=0) - D[[6, 7]].mean(axis=0)
    w /= np.linalg.norm(w)
    np.testing.assert_allclose(fisher_scores(p, ranking)[0], D @ w, atol=1e-5)


def test_contrast_falls_back_to_the_positive_when_the_two_nearly_agree():
    pos = np.array([[1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    neg = np.array([[0.0, 1.0], [0.999, 0.0447]], dtype=np.float32)
    out = contrast(pos, neg)
    np.testing.assert_allclose(out[0], [0.70711, -0.70711], atol=1e-5)
    np.testing.assert_allclose(out[1], pos[1])


def test_bm25_statistics_ignore_documents_no_query_ranks():
    def channels(decoy: str) -> tuple[np.ndarray, np.ndarray]:
        task = decoy_task(decoy, pools=True)
        _, _, _, ctx, _ = make_context(task, HashingEncoder(dim=8), pool_candidates(task))
        bm25, bigram = hybrid_lexical(ctx)
        return bm25, bigram

    (bm25_a, bigram_a), (bm25_b, bigram_b) = channels(DECOY_MATCHING), channels(DECOY_UNRELATED)
    np.testing.assert_array_equal(bm25_a, bm25_b)
    np.testing.assert_array_equal(bigram_a, bigram_b)
    assert bm25_a[:, -1].max() == 0.0 and bm25_a.max() > 0.0
