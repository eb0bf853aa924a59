"""Every task's judgements point at the documents they judge.

The shared ``time`` collection once had its judgements numbered by document position instead
of by document id: the ids existed, but named other documents, and every program scored near 0
on it unnoticed (docs/search.md says what that did to a selecting run). Two checks catch that
family of faults, over every packaged task and, where ``../shared`` is, every shared one:

* every judged document is in the corpus and every judged query is a query (ids present);
* on a fixed sample of queries, BM25's nDCG@10 is well above what it scores against the same
  judgements relabelled at random, or else (a task BM25 ranks poorly) P0's with the default
  encoder is: judgements that name the wrong documents leave both near chance.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from embedding_ttc.evaluation.metrics import grades_of, ideal_dcg, ndcg_at_10, top_k
from embedding_ttc.programs.text.bm25 import BM25
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.packaged import PACKAGED_TASKS, load_packaged_task
from embedding_ttc.tasks.task import RetrievalTask

from shared_data import SHARED_DATASETS, require_shared, shared_available

SAMPLE = 60
"""Queries scored per task (a fixed seeded sample)."""
SHUFFLES = 5
"""Random relabellings of the corpus that estimate what a ranking scores by chance."""


def chance_margin(chance: float) -> float:
    """The nDCG@10 a ranking must reach to count as finding the judged documents.

    What it scores against judgements relabelled at random, plus 0.05: misaligned judgements
    (the ``time`` fault: BM25 0.019 against a chance of 0.011) score about chance. The
    hardest task here, ``aila_statutes`` (82 documents, four relevant a query), scores 0.166
    under BM25 against a chance of 0.101.
    """
    return chance + 0.05


def _shared_names() -> list[str]:
    if not shared_available():
        return []
    rows = (SHARED_DATASETS / "INDEX.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return sorted(line.split("\t", 1)[0] for line in rows if line.strip())


TASKS = [f"packaged:{name}" for name in PACKAGED_TASKS] + [
    f"shared:{name}" for name in _shared_names()
]
if not shared_available():  # skipped with the reason (a failure under CI)
    TASKS.append("shared:*")


def _task(spec: str) -> RetrievalTask:
    where, name = spec.split(":", 1)
    if where == "packaged":
        return load_packaged_task(name)
    root = require_shared(f"the qrels check of shared task {name}")
    return load_task(name, root)


def _sample(task: RetrievalTask) -> list[int]:
    positions = [i for i, q in enumerate(task.query_ids) if any(task.qrels.get(q, {}).values())]
    return sorted(random.Random(0).sample(positions, min(SAMPLE, len(positions))))


def _mean_ndcg(task: RetrievalTask, sample: list[int], scores: np.ndarray) -> float:
    tiebreak = np.arange(len(task.doc_ids))
    values = []
    for row, position in enumerate(sample):
        judged = task.qrels[task.query_ids[position]]
        best = top_k(scores[row], tiebreak, 10)
        ranked = [task.doc_ids[i] for i in best]
        values.append(ndcg_at_10(grades_of(ranked, judged), ideal_dcg(list(judged.values()))))
    return float(np.mean(values))


def _relabelled(task: RetrievalTask, seed: int) -> RetrievalTask:
    ids = list(task.doc_ids)
    other = ids.copy()
    random.Random(seed).shuffle(other)
    to = dict(zip(ids, other, strict=True))
    qrels = {q: {to[d]: g for d, g in judged.items()} for q, judged in task.qrels.items()}
    return dataclasses.replace(task, qrels=qrels)


def finds_judged(task: RetrievalTask, sample: list[int], scores: np.ndarray) -> tuple[float, float]:
    """The sample's nDCG@10 under ``scores``, and the bar it must clear (see chance_margin)."""
    chance = np.mean([_mean_ndcg(_relabelled(task, s), sample, scores) for s in range(SHUFFLES)])
    return _mean_ndcg(task, sample, scores), chance_margin(float(chance))


@pytest.fixture(scope="module")
def loaded() -> dict[str, RetrievalTask]:
    return {}


def _load(loaded: dict[str, RetrievalTask], spec: str) -> RetrievalTask:
    if spec not in loaded:
        loaded[spec] = _task(spec)
    return loaded[spec]


@pytest.mark.parametrize("spec", TASKS)
def test_judgements_name_documents_and_queries_of_the_task(loaded, spec):
    task = _load(loaded, spec)
    docs, queries = set(task.doc_ids), set(task.query_ids)
    missing_docs = sorted({d for judged in task.qrels.values() for d in judged} - docs)
    missing_queries = sorted(set(task.qrels) - queries)
    assert not missing_docs, f"{spec}: judged documents not in the corpus: {missing_docs[:5]}"
    assert not missing_queries, (
        f"{spec}: judged queries not among the queries: {missing_queries[:5]}"
    )


@pytest.mark.parametrize("spec", TASKS)
def test_bm25_or_p0_finds_the_judged_documents(loaded, spec):
    task = _load(loaded, spec)
    sample = _sample(task)
    texts = [task.query_texts[i] for i in sample]
    bm25, bar = finds_judged(task, sample, BM25.fit(task.doc_texts).scores(texts))
    if bm25 >= bar:
        return
    from embedding_ttc.encoders.base import PASSAGE, QUERY
    from embedding_ttc.encoders.catalog import DEFAULT_ENCODER, load_encoder

    encoder = load_encoder(DEFAULT_ENCODER)
    D = encoder.encode(task.doc_texts, view=PASSAGE)
    Q = encoder.encode(texts, view=QUERY)
    p0, bar = finds_judged(task, sample, Q @ D.T)
    assert p0 >= bar, (
        f"{spec}: BM25 nDCG@10 {bm25:.3f} and P0 ({DEFAULT_ENCODER}) {p0:.3f} over {len(sample)} "
        f"queries are both near chance (the bar: {bar:.3f}): are the judgements aligned with "
        "the document ids?"
    )


def test_the_check_fails_on_judgements_naming_other_documents():
    """The fault it is for: judgements that name documents by another numbering."""
    task = load_packaged_task("legal_summarization")
    n = len(task.doc_ids)
    position = {d: i for i, d in enumerate(task.doc_ids)}
    broken = dataclasses.replace(
        task,
        qrels={
            q: {task.doc_ids[(position[d] + n // 2) % n]: g for d, g in judged.items()}
            for q, judged in task.qrels.items()
        },
    )
    sample = _sample(task)
    scores = BM25.fit(task.doc_texts).scores([task.query_texts[i] for i in sample])
    real, bar = finds_judged(task, sample, scores)
    wrong, wrong_bar = finds_judged(broken, sample, scores)
    assert real >= bar and wrong < wrong_bar
