"""Parity with pytrec-eval-terrier on the P0 run of every shared task (or packaged one).

Without ``../shared/datasets`` beside the repository the parity runs on the packaged tasks,
which are the same data as their shared folders.

The metric is what is under test, so the runs come from the fastest packaged encoder (a static
64-d model, thousands of texts per second) to keep this affordable; the smoke suite is also
checked with the default encoder in test_cli.py. A second pass rounds the scores to two decimals
so that many documents tie and the tie-break rule is exercised on real data.
"""

import numpy as np
import pytest
import pytrec_eval

from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.encoders.catalog import load_encoder
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.evaluation.ranking import TaskRanker
from embedding_ttc.programs.p0 import P0
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.packaged import PACKAGED_TASKS

from shared_data import SHARED_DATASETS, shared_available

SHARED = SHARED_DATASETS if shared_available() else None
TASKS = sorted(p.parent.name for p in SHARED.glob("*/qrels")) if SHARED else list(PACKAGED_TASKS)
LARGE_CORPUS_BYTES = 20_000_000
"""A corpus above this size (medquad, aila_casedocs_full: 40 s or more each) runs with -m slow."""


def _task_param(name: str) -> object:
    corpus = SHARED / name / "corpus.jsonl" if SHARED else None
    large = corpus is not None and corpus.exists() and corpus.stat().st_size > LARGE_CORPUS_BYTES
    return pytest.param(name, marks=pytest.mark.slow) if large else name


FAST_ENCODER = "tokenlearn-static-64"


def reference_ndcg(ranker: TaskRanker, rows) -> np.ndarray:
    """pytrec_eval's ndcg_cut_10 on a run holding every candidate that can reach the top 10.

    ``rows[i]`` is query i's ``(candidates or None, scores)``. For each query the run keeps all
    candidates scoring at least its 10th-best score (so every tie at the cut-off is present and
    trec_eval orders them by its own rule).
    """
    task = ranker.task
    run: dict[str, dict[str, float]] = {}
    for qid, (cand, scores) in zip(task.query_ids, rows, strict=True):
        if cand is None:
            cand = np.arange(len(task.doc_ids))
        kth = np.sort(scores)[::-1][min(9, len(scores) - 1)]
        keep = np.flatnonzero(scores >= kth)
        run[qid] = {task.doc_ids[cand[j]]: float(scores[j]) for j in keep}
    qrels = {q: dict(v) for q, v in task.qrels.items()}
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}).evaluate(run)
    return np.array([res[q]["ndcg_cut_10"] if q in res else 0.0 for q in task.query_ids])


@pytest.fixture(scope="module")
def fast_encoder(tmp_path_factory):
    return CachedEncoder(load_encoder(FAST_ENCODER), tmp_path_factory.mktemp("parity-cache"))


def test_every_shared_task_is_covered(shared_datasets):
    assert len(TASKS) >= 16


@pytest.mark.parametrize("name", [_task_param(name) for name in TASKS])
def test_p0_parity_with_pytrec_eval(packaged_datasets, fast_encoder, name):
    task = load_task(name, SHARED or packaged_datasets)
    run = next(run_programs([P0()], task, fast_encoder))
    ours = np.array([run.result.per_query[q] for q in task.query_ids])
    np.testing.assert_allclose(ours, reference_ndcg(run.ranker, run.rows), atol=1e-6)
    assert run.result.ndcg_at_10 == pytest.approx(ours.mean())
    tied = [(cand, np.round(vals, 2).astype(np.float32)) for cand, vals in run.rows]
    np.testing.assert_allclose(
        run.ranker.ndcg_rows(tied), reference_ndcg(run.ranker, tied), atol=1e-6
    )
