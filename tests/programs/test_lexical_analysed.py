"""Lexical channels and programs from stored text analyses equal those from texts, on real tasks.

Parity with a reference: the text versions in ``lexical.py`` (BM25 through ``bm25s``) and
``chunk_documents`` are what the programs computed before analyses existed; the analysed
versions must give the same bits, on Latin-script (scifact) and unspaced-script (jaquad_ja)
documents, over the whole corpus and over a shuffled subset of it. Then LexicalHybridRRF and
CrossRoundRRF must score the same with a context that holds analyses (as a deployed index hands
them over) and with one that does not (the evaluation path).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from embedding_ttc.encoders.base import PASSAGE, QUERY
from embedding_ttc.encoders.cache import CachedEncoder
from embedding_ttc.programs.base import Context, DeployedInputs
from embedding_ttc.programs.catalog import get_program
from embedding_ttc.programs.library.hybrid_evidence import HybridBackbone
from embedding_ttc.programs.primitives.lexical import (
    BM25,
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.primitives.lexical_analysed import (
    bigram_overlap_analysed,
    query_term_coverage_analysed,
    rare_term_idf_analysed,
)
from embedding_ttc.programs.primitives.scores import rrf
from embedding_ttc.programs.primitives.text_analysis import ColumnAnalyses, analyze
from embedding_ttc.programs.text.bm25 import bm25_analysed
from embedding_ttc.tasks.catalog import load_task

from fakes import HashingEncoder

PAIRS = [
    (lambda q, d: BM25.fit(d).scores(q), bm25_analysed),
    (bigram_overlap, bigram_overlap_analysed),
    (query_term_coverage, query_term_coverage_analysed),
    (rare_term_idf, rare_term_idf_analysed),
]
SIZES = {"scifact": (400, 60), "jaquad_ja": (150, 30)}


@pytest.fixture(scope="module", params=sorted(SIZES))
def sample(request, shared_datasets):
    """The first documents and queries of a real task."""
    task = load_task(request.param, shared_datasets)
    n_docs, n_queries = SIZES[request.param]
    return list(task.doc_texts[:n_docs]), list(task.query_texts[:n_queries])


@pytest.mark.parametrize(("text", "analysed"), PAIRS)
def test_every_channel_equals_its_text_version_bit_for_bit(sample, text, analysed):
    docs, queries = sample
    analyses = analyze(docs)
    np.testing.assert_array_equal(analysed(queries, analyses), text(queries, docs))
    cols = np.random.default_rng(0).permutation(len(docs))[: len(docs) // 3]
    subset = [docs[int(j)] for j in cols]
    np.testing.assert_array_equal(analysed(queries, analyses.take(cols)), text(queries, subset))
    for q in queries[:5]:  # one query alone, as a deployed query comes
        np.testing.assert_array_equal(analysed([q], analyses), text([q], docs))


def test_bm25_of_an_empty_or_tokenless_corpus_is_zero():
    for docs in ([], ["", " -- "]):
        out = bm25_analysed(["any words"], analyze(docs))
        np.testing.assert_array_equal(out, BM25.fit(docs).scores(["any words"]))


def contexts(docs, queries, cols, encoder, candidates=None, scored_rows=None):
    """``Q, D, S`` over columns ``cols`` of ``docs``; the context without and with analyses."""
    texts = [docs[int(j)] for j in cols]
    D = encoder.encode(texts, view=PASSAGE)
    Q = encoder.encode(queries, view=QUERY)

    def encode_fn(t, view=QUERY, dim=None, max_length=None):
        return encoder.encode(list(t), view=view, dim=dim, max_length=max_length)

    bare = Context(
        encode_fn=encode_fn,
        query_texts=tuple(queries),
        doc_texts=tuple(texts),
        query_ids=tuple(f"q{i}" for i in range(len(queries))),
        doc_ids=tuple(f"d{int(j)}" for j in cols),
        candidates=candidates,
        deployed=DeployedInputs(scored_rows=scored_rows),
    )
    analyses = ColumnAnalyses(analyze(docs), np.asarray(cols))
    held = replace(bare, deployed=DeployedInputs(scored_rows=scored_rows, text_analyses=analyses))
    return Q, D, Q @ D.T, bare, held


@pytest.mark.parametrize("program", ["LexicalHybridRRF", "CrossRoundRRF"])
def test_the_programs_score_the_same_with_and_without_stored_analyses(sample, program):
    docs, queries = sample
    docs, queries = docs[:50], queries[:8]
    encoder = CachedEncoder(HashingEncoder())  # the same texts in every setting
    run = get_program(program)
    cols = np.random.default_rng(1).permutation(len(docs))[:40]
    rng = np.random.default_rng(2)
    pools = [np.sort(rng.choice(len(cols), 15, replace=False)) for _ in queries]
    for candidates, scored_rows in [(None, None), (pools, None), (None, 1)]:
        Q, D, S, bare, held = contexts(docs, queries, cols, encoder, candidates, scored_rows)
        np.testing.assert_array_equal(run(Q, D, S, held), run(Q, D, S, bare))


def test_lexical_hybrid_rrf_equals_its_channels_from_texts(sample):
    docs, queries = sample
    docs, queries = docs[:40], queries[:8]
    encoder = HashingEncoder()
    cols = np.arange(len(docs))
    Q, D, S, bare, held = contexts(docs, queries, cols, encoder)
    reference = rrf(
        [
            *HybridBackbone.build(D, bare, None).scores(Q, None),
            BM25.fit(docs).scores(queries),
            bigram_overlap(queries, docs),
        ]
    )
    np.testing.assert_array_equal(get_program("LexicalHybridRRF")(Q, D, S, held), reference)
