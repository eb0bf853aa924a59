"""The search's pick, served: g0048's scores from its index equal evaluate's, bit for bit.

g0048 (``results/search-select/programs/g0048.py``) fits BM25 on its candidates and encodes
their paragraphs; served, both come from what its index stores (the candidates' text analyses
and paragraph rows, :mod:`embedding_ttc.program_files.sandbox.served`), and its scores must be
those ``evaluate --program-file`` measured. On the first 60 scifact documents, with the
seeded fake encoder.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_ttc.deploy.corpus import Document
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.program_file import read_deployable
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.evaluation.evaluate import run_programs
from embedding_ttc.program_files.program_file import read_program_file
from embedding_ttc.tasks.catalog import load_task
from embedding_ttc.tasks.task import RetrievalTask

from fakes import HashingEncoder
from shared_data import require_shared

PICK = Path(__file__).resolve().parents[2] / "results" / "search-select" / "programs" / "g0048.py"
DOCS = 60
QUERIES = 6
REFERENCE = 8


def subset(task: RetrievalTask, queries: list[int]) -> RetrievalTask:
    """The first :data:`DOCS` documents of ``task`` and the queries ``queries``."""
    qids = [task.query_ids[i] for i in queries]
    return RetrievalTask(
        name="scifact-first60",
        doc_ids=list(task.doc_ids[:DOCS]),
        doc_titles=list(task.doc_titles[:DOCS]),
        doc_bodies=list(task.doc_bodies[:DOCS]),
        query_ids=qids,
        query_texts=[task.query_texts[i] for i in queries],
        qrels={q: {task.doc_ids[0]: 1} for q in qids},  # judgements do not enter the scores
    )


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = require_shared("the served pick's parity test")
    task = load_task("scifact", root)
    encoder = HashingEncoder(two_views=True)
    docs = [
        Document(i, t, b)
        for i, t, b in zip(task.doc_ids, task.doc_titles, task.doc_bodies, strict=True)
    ][:DOCS]
    reference = list(task.query_texts[QUERIES : QUERIES + REFERENCE])
    index = Index.build(
        tmp_path_factory.mktemp("pick") / "g0048",
        docs,
        encoder=encoder,
        program=read_deployable(PICK),
        reference_queries=reference,
        reference_source="scifact queries",
        source="test",
    )
    return task, encoder, index, reference


def test_the_pick_served_scores_as_evaluate(served):
    task, encoder, index, reference = served
    assert index.analyses is not None  # BM25 over the candidates reads the stored analyses
    assert index.recipe.batch == "reference"  # column z-scores: the reference rows join a call
    reranker = Reranker(index, encoder)
    program = read_program_file(PICK).sandboxed()
    run = next(run_programs([program], subset(task, list(range(QUERIES))), encoder, shortlist=20))
    lists = [[index.doc_ids[j] for j in np.sort(cand)] for cand, _ in run.rows]
    joint = reranker.score(list(task.query_texts[:QUERIES]), lists, joint=True)
    for (cand, values), got in zip(run.rows, joint.scores, strict=True):
        np.testing.assert_array_equal(got, values[np.argsort(cand)])
    assert joint.stats.program_encodes == 0 and joint.stats.index_misses == 0
    # Served as a request is: one query over its candidates, the reference queries appended.
    for i in (0, 3):
        cand = np.sort(run.rows[i][0])
        alone_task = subset(task, [i])
        alone_task = RetrievalTask(
            name=alone_task.name,
            doc_ids=[alone_task.doc_ids[j] for j in cand],
            doc_titles=[alone_task.doc_titles[j] for j in cand],
            doc_bodies=[alone_task.doc_bodies[j] for j in cand],
            query_ids=[*alone_task.query_ids, *(f"r{k}" for k in range(len(reference)))],
            query_texts=[*alone_task.query_texts, *reference],
            qrels=alone_task.qrels,
        )
        alone = next(run_programs([program], alone_task, encoder))
        got = reranker.score([task.query_texts[i]], [[index.doc_ids[j] for j in cand]])
        np.testing.assert_array_equal(got.scores[0], alone.rows[0][1])
