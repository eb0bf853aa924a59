"""Contract test over the whole program registry (every named program and a parametrised one).

Each program: returns a new finite float matrix of S's shape; runs twice to identical output;
leaves Q, D and S untouched; ignores documents outside a query's candidates (their embedding
can change without moving any candidate's score); scores its leading rows as the whole call
does when ``ctx.deployed.scored_rows`` marks the rest as reference rows; runs with a one-view
and a two-view encoder, in shortlist mode, and on a small slice of a real task with the default
encoder.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.evaluate import evaluate
from embedding_ttc.programs.base import DeployedInputs, program_version
from embedding_ttc.programs.catalog import PROGRAMS, get_program
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from library_support import direct_call

NAMES = [*PROGRAMS.names(), "Rocchio:K=2,beta=0.3", "SoftCentroid:K=2,alpha=0.7,tau=0.1"]

DOCS = [
    "Cats sleep most of the day. They purr when content. A cat naps in the sun.",
    "Interest rates rose again. Inflation stayed high. Markets fell sharply on the news.",
    "Bake bread with flour and water. Knead the dough. Let it rise overnight before baking.",
    "The court held that the statute applies. The appeal was dismissed. Costs were awarded.",
    "Dogs bark at strangers. A dog needs daily walks. Puppies chew shoes.",
    "Solar panels convert light. Batteries store the energy. Inverters feed the grid.",
    "A decoy document about cats, rates, bread, courts, dogs and solar power all at once.",
]
QUERIES = ["why do cats sleep so much", "inflation and interest rates", "how to bake bread"]
POOLS = {"q1": ["d0", "d1", "d4"], "q2": ["d1", "d3", "d5", "d0"], "q3": ["d2", "d0", "d5"]}


def pool_task() -> RetrievalTask:
    ids = [f"d{i}" for i in range(len(DOCS))]  # d6 is the decoy, in no pool
    return RetrievalTask(
        name="contract-pool",
        doc_ids=ids,
        doc_titles=[""] * len(ids),
        doc_bodies=DOCS,
        query_ids=["q1", "q2", "q3"],
        query_texts=QUERIES,
        qrels={"q1": {"d0": 1, "d1": 0, "d4": 0}, "q2": {"d1": 1, "d3": 0}, "q3": {"d2": 2}},
        pools=POOLS,
    )


def full_task() -> RetrievalTask:
    task = pool_task()
    return RetrievalTask(**{**task.__dict__, "name": "contract-full", "pools": None})


def pool_candidates(task: RetrievalTask) -> tuple[np.ndarray, ...]:
    index = {d: i for i, d in enumerate(task.doc_ids)}
    return tuple(np.array([index[d] for d in task.pools[q]]) for q in task.query_ids)


@pytest.mark.parametrize("name", NAMES)
def test_every_program_has_a_positive_integer_version(name):
    # Cells and indexes record it, and recompute or refuse results of another version.
    version = program_version(get_program(name))
    assert isinstance(version, int) and version >= 1


def test_a_malformed_version_is_refused():
    class Bad:
        name = "Bad"
        version = "2"

    with pytest.raises(TypeError, match="positive int"):
        program_version(Bad())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("two_views", [False, True])
def test_contract_with_fake_encoders(name, two_views):
    task = pool_task()
    encoder = HashingEncoder(dim=48, two_views=two_views)
    cands = pool_candidates(task)
    Q, D, S, ctx, _meter = direct_call(task, encoder, cands)
    copies = (Q.copy(), D.copy(), S.copy())
    program = get_program(name)
    out = program(Q, D, S, ctx)
    assert isinstance(out, np.ndarray) and out is not S
    assert out.shape == S.shape and np.issubdtype(out.dtype, np.floating)
    for row, cand in enumerate(cands):
        assert np.all(np.isfinite(out[row, cand]))
    for before, after in zip(copies, (Q, D, S), strict=True):
        np.testing.assert_array_equal(before, after)
    again = get_program(name)(Q, D, S, ctx)
    np.testing.assert_array_equal(out, again)

    # The decoy (in no pool) now looks like every query: candidates must not notice.
    D2 = D.copy()
    decoy = Q.sum(axis=0)
    D2[-1] = decoy / np.linalg.norm(decoy)
    out2 = get_program(name)(Q, D2, Q @ D2.T, ctx)
    for row, cand in enumerate(cands):
        np.testing.assert_allclose(out2[row, cand], out[row, cand], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("two_views", [False, True])
def test_scored_rows_leave_the_leading_rows_as_the_whole_call_gives_them(name, two_views):
    # Deployment scores one query with reference rows appended (ctx.deployed.scored_rows): a program
    # may skip the reference rows' own scores, never change the live row's.
    encoder = HashingEncoder(dim=48, two_views=two_views)
    Q, D, S, ctx = direct_call(full_task(), encoder)[:4]
    whole = get_program(name)(Q, D, S, ctx)
    for rows in (1, 2):
        head = get_program(name)(Q, D, S, replace(ctx, deployed=DeployedInputs(scored_rows=rows)))
        assert head.shape == S.shape
        np.testing.assert_allclose(head[:rows], whole[:rows], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_full_corpus_and_shortlist_mode(name):
    encoder = HashingEncoder(dim=48)
    full = evaluate(get_program(name), full_task(), encoder)
    short = evaluate(get_program(name), full_task(), encoder, shortlist=4)
    for result in (full, short):
        assert set(result.per_query) == {"q1", "q2", "q3"}
        assert all(0.0 <= v <= 1.0 for v in result.per_query.values())
        assert result.cost.cost_ratio >= 1.0
    assert short.shortlist == 4


@pytest.fixture(scope="module")
def real_slice(packaged_datasets, tmp_path_factory):
    task = load_task("aila_statutes", packaged_datasets)
    keep = list(task.query_ids[:6])
    small = RetrievalTask(
        **{
            **task.__dict__,
            "query_ids": keep,
            "query_texts": list(task.query_texts[:6]),
            "qrels": {q: task.qrels[q] for q in keep},
        }
    )
    cache = tmp_path_factory.mktemp("program-contract-cache")
    return small, CachedEncoder(load_encoder("all-MiniLM-L6-v2"), cache)


@pytest.mark.parametrize("name", PROGRAMS.names())
def test_runs_on_real_data_with_the_default_encoder(real_slice, name):
    task, encoder = real_slice
    result = evaluate(get_program(name), task, encoder)
    assert len(result.per_query) == 6 and np.isfinite(result.ndcg_at_10)
    assert result.cost.base_calls == task.n_docs + 6
