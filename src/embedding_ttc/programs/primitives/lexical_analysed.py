"""The lexical channels computed from text analyses: the values of :mod:`.lexical`, bit for bit.

:mod:`.lexical` computes bigram overlap, query-term coverage and rare-term IDF from the
documents' texts, tokenising them on every call. Here the same channels take the documents'
:class:`~.text_analysis.TextAnalyses` (their token ids and counts and their bigrams, computed
once per document), so a call's work is the queries' tokens and the algebra over the entries of
the query terms. Coverage, bigram overlap and rare-term IDF build the same
:class:`~.lexical.TermIncidence` as their text versions (the query terms found in the
documents, numbered in order of first occurrence) and share their algebra
(:func:`~.lexical.ratio_scores`, :func:`~.lexical.rare_term_scores`).

BM25 computed from the same analyses is :func:`~embedding_ttc.programs.text.bm25.bm25_analysed`,
beside :class:`~.lexical.BM25` in BM25's one module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from embedding_ttc.programs.primitives.lexical import (
    RARE_TERM_QUANTILE,
    TermIncidence,
    bigrams,
    rare_term_scores,
    ratio_scores,
    tokenize,
)
from embedding_ttc.programs.primitives.text_analysis import (
    TextAnalyses,
    pack_bigrams,
    unpack_bigrams,
)

Scores = NDArray[np.float32]


def _incidence(
    indptr: NDArray[np.int64],
    values: NDArray[np.integer],
    keep: NDArray[np.int64],
    name: Callable[[int], str],
) -> TermIncidence:
    """The incidence of the terms ``keep`` in ragged rows of distinct term ids.

    Terms are numbered in order of first occurrence over the rows (each row's terms are in
    order of first occurrence), as :meth:`TermIncidence.from_terms` numbers them; ``name``
    gives the vocabulary key of a term id (the string the query side looks up).
    """
    n_docs = len(indptr) - 1
    where = np.flatnonzero(np.isin(values, keep))
    kept = np.asarray(values[where], dtype=np.int64)
    docs = np.searchsorted(indptr, where, side="right") - 1
    distinct, first, inverse = np.unique(kept, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    row_of = np.empty(len(distinct), dtype=np.int64)
    row_of[order] = np.arange(len(distinct), dtype=np.int64)
    term_doc = sparse.csr_array(
        (np.ones(len(kept), dtype=np.float32), (row_of[inverse], docs)),
        shape=(len(distinct), n_docs),
    )
    vocabulary = {name(int(term)): i for i, term in enumerate(distinct[order])}
    return TermIncidence(vocabulary=vocabulary, term_doc=term_doc)


def _term_incidence(analyses: TextAnalyses, query_tokens: Sequence[Sequence[str]]) -> TermIncidence:
    """The incidence of the query tokens in the documents (:func:`~.lexical.rare_term_idf`'s)."""
    vocabulary = analyses.vocabulary
    ids = [vocabulary.lookup(tokens) for tokens in query_tokens]
    keep = np.unique(np.concatenate([np.zeros(0, np.int64), *ids]))
    keep = keep[keep >= 0]
    terms = analyses.terms
    return _incidence(terms.indptr, terms.values[:, 0], keep, vocabulary.token)


def query_term_coverage_analysed(
    query_texts: Sequence[str], analyses: TextAnalyses
) -> NDArray[np.float32]:
    """:func:`~.lexical.query_term_coverage` of the analysed documents."""
    query_tokens = [tokenize(text) for text in query_texts]
    return ratio_scores(query_tokens, _term_incidence(analyses, query_tokens))


def rare_term_idf_analysed(
    query_texts: Sequence[str], analyses: TextAnalyses, *, quantile: float = RARE_TERM_QUANTILE
) -> NDArray[np.float32]:
    """:func:`~.lexical.rare_term_idf` of the analysed documents.

    Raises:
        ValueError: if ``quantile`` is outside ``[0, 1]``.

    """
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    query_tokens = [tokenize(text) for text in query_texts]
    return rare_term_scores(query_tokens, _term_incidence(analyses, query_tokens), quantile)


def bigram_overlap_analysed(
    query_texts: Sequence[str], analyses: TextAnalyses
) -> NDArray[np.float32]:
    """:func:`~.lexical.bigram_overlap` of the analysed documents."""
    query_tokens = [tokenize(text) for text in query_texts]
    vocabulary = analyses.vocabulary
    keys = [np.zeros(0, np.int64)]
    for tokens in query_tokens:
        ids = vocabulary.lookup(tokens)
        known = (ids[:-1] >= 0) & (ids[1:] >= 0)  # a bigram with an unknown token occurs nowhere
        keys.append(pack_bigrams(ids[:-1][known], ids[1:][known]))

    def name(key: int) -> str:
        first, second = unpack_bigrams(np.array([key]))
        return f"{vocabulary.token(int(first[0]))} {vocabulary.token(int(second[0]))}"

    grams = analyses.bigrams
    incidence = _incidence(grams.indptr, grams.values, np.unique(np.concatenate(keys)), name)
    return ratio_scores([bigrams(tokens) for tokens in query_tokens], incidence)
