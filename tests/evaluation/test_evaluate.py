import numpy as np
import pytest

from embedding_ttc.evaluation.comparison import compare
from embedding_ttc.evaluation.evaluate import evaluate, evaluate_programs, run_programs
from embedding_ttc.evaluation.records import TaskResult
from embedding_ttc.programs.base import Context, Matrix
from embedding_ttc.programs.output import ProgramOutputError
from embedding_ttc.programs.p0 import P0

from fakes import HashingEncoder


class ReencodeDocs:
    """A test program: re-encodes every document under the query view at index time."""

    name = "ReencodeDocs"

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        with ctx.index_time():
            D2 = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
        ctx.encode_fn(list(ctx.query_texts[:1]), "text-matching", 8)
        return S + Q @ D2.T


class Broken:
    name = "Broken"

    def __init__(self, out):
        self.out = out

    def __call__(self, Q, D, S, ctx):
        return self.out


def test_p0_goes_through_the_program_path(tiny_task):
    result = evaluate(P0(), tiny_task, HashingEncoder())
    assert isinstance(result, TaskResult) and result.schema_version == 2
    assert set(result.per_query) == {"q1", "q2", "q3"}
    assert result.ndcg_at_10 == pytest.approx(np.mean(list(result.per_query.values())))
    assert result.cost.cost_ratio == 1.0
    assert result.cost.index_calls == 5 and result.cost.query_calls == 3
    assert result.cost.texts == {
        "base/index/retrieval.passage": 5,
        "base/query/retrieval.query": 3,
    }
    # a round trip through JSON keeps the record, and unknown fields are rejected
    again = TaskResult.model_validate_json(result.model_dump_json())
    assert again == result
    with pytest.raises(ValueError):
        TaskResult.model_validate({**result.model_dump(), "surprise": 1})


def test_program_cost_is_metered(tiny_task):
    p0, prog = evaluate_programs([P0(), ReencodeDocs()], tiny_task, HashingEncoder())
    assert prog.cost.program_calls == 6
    assert prog.cost.cost_ratio == pytest.approx((8 + 6) / 8)
    assert prog.cost.texts["program/index/retrieval.query"] == 5
    assert prog.cost.texts["program/query/text-matching"] == 1
    assert prog.cost.query_time_cost_ratio == pytest.approx(4 / 3)
    cmp = compare(prog, p0)
    assert cmp.wtl is not None and cmp.wtl.total == 3
    assert cmp.delta_ndcg_at_10 == pytest.approx(prog.ndcg_at_10 - p0.ndcg_at_10)
    assert (cmp.ndcg_at_10, cmp.baseline_ndcg_at_10) == (prog.ndcg_at_10, p0.ndcg_at_10)


@pytest.mark.parametrize(
    "out, message",
    [
        (np.zeros((3, 4)), "shape"),
        (np.full((3, 5), np.nan), "non-finite"),
        ([[0.0] * 5] * 3, "not an array"),
    ],
)
def test_bad_output_is_named(tiny_task, out, message):
    with pytest.raises(ProgramOutputError, match=message):
        evaluate(Broken(out), tiny_task, HashingEncoder())


def test_fake_encoder_ranks_the_tiny_task_sensibly(tiny_task):
    # shared words put each query's relevant document first with the bag-of-words fake
    result = evaluate(P0(), tiny_task, HashingEncoder(dim=256))
    assert result.per_query["q3"] == pytest.approx(1.0)


def test_shortlist_mode_with_a_dense_first_stage_keeps_p0(tiny_task):
    encoder = HashingEncoder(dim=64)
    full = next(run_programs([P0()], tiny_task, encoder))
    short = next(run_programs([P0()], tiny_task, encoder, shortlist=3))
    # P0 reranking the cosine top 3 by cosine gives the cosine top 3
    assert list(short.rankings(3)) == list(full.rankings(3))
    assert short.result.shortlist == 3 and short.result.first_stage == "dense"
    assert short.result.cost.cost_ratio == 1.0
    whole = evaluate(P0(), tiny_task, encoder, shortlist=5)  # every document: same nDCG
    assert whole.per_query == full.result.per_query


class RowMean:
    """A test program whose output depends on which columns it is handed."""

    name = "RowMean"

    def __call__(self, Q, D, S, ctx):
        seen = ctx.candidates
        out = S - S.mean(axis=1, keepdims=True)
        if seen is not None:
            assert len(seen) == S.shape[0]
            assert all(c.max() < S.shape[1] for c in seen)
        return out


def test_shortlist_batches_hand_programs_only_their_union(tiny_task, monkeypatch):
    import embedding_ttc.evaluation.batches as batches

    monkeypatch.setattr(batches, "SHORTLIST_BATCH", 2)
    shapes = []

    class Spy(RowMean):
        def __call__(self, Q, D, S, ctx):
            shapes.append(S.shape)
            assert len(ctx.doc_ids) == S.shape[1] and len(ctx.query_ids) == S.shape[0]
            return super().__call__(Q, D, S, ctx)

    result = evaluate(Spy(), tiny_task, HashingEncoder(dim=64), shortlist=2)
    assert [s[0] for s in shapes] == [2, 1] and all(s[1] <= 4 for s in shapes)
    assert set(result.per_query) == {"q1", "q2", "q3"}


def test_bm25_first_stage(tiny_task):
    result = evaluate(P0(), tiny_task, HashingEncoder(dim=64), shortlist=2, first_stage="bm25")
    # "baking bread" shares "bread" with d5 only: BM25 puts d5 in q3's shortlist
    assert result.per_query["q3"] == pytest.approx(1.0)
