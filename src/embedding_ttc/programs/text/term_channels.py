"""The channels built on the term-document incidence: coverage, bigram overlap, rare-term IDF.

The encoder-free channels of LexicalHybridRRF (paper, Appendix A.5: word-bigram overlap) and
CrossRoundRRF (A.6: query-term coverage ratio and rare-term IDF "with Unicode-aware CJK
tokenization"), each a dense ``float32`` matrix of shape ``(n_queries, n_docs)`` computed from
the texts through :class:`~.incidence.TermIncidence`. Their algebra (:func:`ratio_scores`,
:func:`rare_term_scores`) is shared with the channels computed from stored analyses
(:mod:`embedding_ttc.programs.primitives.lexical_analysed`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain, pairwise

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.text.incidence import TermIncidence, idf_values
from embedding_ttc.programs.text.tokens import bigrams, tokenize

#: A query term is *rare* when its IDF is at or above this quantile of the IDFs of the
#: query's terms that occur in the corpus: with 0.5, the rarer half of the query. A quantile
#: of the query's own terms rather than a fixed IDF threshold, because IDF grows with
#: ``log N`` and a fixed threshold would mean something different on a 500-document and a
#: 500,000-document corpus; "at or above" keeps at least one term of every query that shares
#: any term with the corpus. A global constant, never tuned per task.
RARE_TERM_QUANTILE = 0.5


def _doc_tokens_in(
    doc_texts: Sequence[str], query_tokens: Sequence[Sequence[str]]
) -> list[list[str]]:
    """Each document's tokens that occur in some query, in order.

    The channels only ever look up query terms in the incidence, so leaving the others out
    changes no score (nor any document frequency that is read) and cuts the indexing work.
    """
    keep = set(chain.from_iterable(query_tokens))
    return [[token for token in tokenize(text) if token in keep] for text in doc_texts]


def _ratio_channel(
    query_terms: Sequence[Iterable[str]], doc_terms: Sequence[Iterable[str]]
) -> NDArray[np.float32]:
    """Fraction of each query's distinct terms that occur in each document (0 if none)."""
    return ratio_scores(query_terms, TermIncidence.from_terms(doc_terms))


def ratio_scores(
    query_terms: Sequence[Iterable[str]], incidence: TermIncidence
) -> NDArray[np.float32]:
    """Fraction of each query's distinct terms that the incidence's documents hold (0 if none).

    The algebra of coverage and bigram overlap, shared by the channels computed from texts
    and from stored analyses (:mod:`embedding_ttc.programs.primitives.lexical_analysed`).
    ``incidence`` needs to hold only the query terms that occur in some document.
    """
    distinct = [dict.fromkeys(terms, 1.0) for terms in query_terms]
    sizes = np.array([len(terms) for terms in distinct], dtype=np.float64)
    scale = np.divide(1.0, sizes, out=np.zeros_like(sizes), where=sizes > 0)
    return incidence.match(incidence.query_matrix(distinct), scale)


def query_term_coverage(
    query_texts: Sequence[str], doc_texts: Sequence[str]
) -> NDArray[np.float32]:
    """Fraction of each query's distinct terms that occur in each document.

    The query-term coverage ratio of CrossRoundRRF (paper, Appendix A.6). A query with no
    term scores 0 against every document.

    Args:
        query_texts: the queries.
        doc_texts: the documents.

    Returns:
        ``float32`` matrix ``(n_queries, n_docs)`` with values in ``[0, 1]``.

    """
    query_tokens = [tokenize(text) for text in query_texts]
    return _ratio_channel(query_tokens, _doc_tokens_in(doc_texts, query_tokens))


def bigram_overlap(query_texts: Sequence[str], doc_texts: Sequence[str]) -> NDArray[np.float32]:
    """Fraction of each query's distinct word bigrams that occur in each document.

    The word-bigram overlap channel of LexicalHybridRRF (paper, Appendix A.5). Bigrams are
    consecutive :func:`tokenize` tokens (:func:`bigrams`); a query with fewer than two tokens
    has no bigram and scores 0 against every document.

    Args:
        query_texts: the queries.
        doc_texts: the documents.

    Returns:
        ``float32`` matrix ``(n_queries, n_docs)`` with values in ``[0, 1]``.

    """
    query_tokens = [tokenize(text) for text in query_texts]
    keep = set(chain.from_iterable(query_tokens))
    # Only pairs of query tokens can be query bigrams: skip the rest before building strings.
    doc_bigrams = [
        [
            f"{first} {second}"
            for first, second in pairwise(tokens)
            if first in keep and second in keep
        ]
        for tokens in map(tokenize, doc_texts)
    ]
    return _ratio_channel([bigrams(tokens) for tokens in query_tokens], doc_bigrams)


def _linear_quantile(ascending: Sequence[float], q: float) -> float:
    """The ``q`` quantile by linear interpolation (numpy's default, Hyndman and Fan type 7).

    Written out because ``np.quantile`` costs tens of microseconds per call, which adds up
    over 10^4 short queries. ``inf`` for no value, so that nothing passes ``>=`` it.
    """
    if not ascending:
        return math.inf
    position = q * (len(ascending) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ascending) - 1)
    return ascending[low] + (ascending[high] - ascending[low]) * (position - low)


def rare_term_idf(
    query_texts: Sequence[str],
    doc_texts: Sequence[str],
    *,
    quantile: float = RARE_TERM_QUANTILE,
) -> NDArray[np.float32]:
    """Sum of the IDF of each query's rare terms that occur in each document.

    The rare-term IDF channel of CrossRoundRRF (paper, Appendix A.6). A query's terms are
    its distinct tokens that occur somewhere in the corpus (a term found in no document
    matches nothing, so it neither scores nor moves the threshold); a term is rare when its
    :func:`idf` is at or above the ``quantile`` of those terms' IDFs (numpy's default linear
    interpolation). See :data:`RARE_TERM_QUANTILE` for the choice.

    Args:
        query_texts: the queries.
        doc_texts: the documents.
        quantile: the quantile in ``[0, 1]``; 0 counts every query term (plain IDF-weighted
            overlap), 1 only the rarest.

    Returns:
        ``float32`` matrix ``(n_queries, n_docs)``, non-negative; 0 for a query that shares
        no term with the corpus.

    Raises:
        ValueError: if ``quantile`` is outside ``[0, 1]``.

    """
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile}")
    query_tokens = [tokenize(text) for text in query_texts]
    # Document frequencies of the query terms are all that is needed.
    incidence = TermIncidence.from_terms(_doc_tokens_in(doc_texts, query_tokens))
    return rare_term_scores(query_tokens, incidence, quantile)


def rare_term_scores(
    query_tokens: Sequence[Sequence[str]], incidence: TermIncidence, quantile: float
) -> NDArray[np.float32]:
    """:func:`rare_term_idf` from the queries' tokens and the documents' incidence.

    Shared by the channel computed from texts and from stored analyses
    (:mod:`embedding_ttc.programs.primitives.lexical_analysed`); ``incidence`` must hold
    exactly the query tokens that occur in some document, numbered in order of first
    occurrence over the documents.
    """
    values = idf_values(incidence.document_frequency, incidence.n_docs)
    weights: list[dict[str, float]] = []
    idf_of = {term: float(values[col]) for term, col in incidence.vocabulary.items()}
    for tokens in query_tokens:
        term_idf = {t: idf_of[t] for t in dict.fromkeys(tokens) if t in idf_of}
        threshold = _linear_quantile(sorted(term_idf.values()), quantile)
        weights.append({t: v for t, v in term_idf.items() if v >= threshold})
    return incidence.match(incidence.query_matrix(weights))
