"""The sparse term-document incidence, and BM25's inverse document frequency.

Coverage, bigram overlap and rare-term IDF (:mod:`.term_channels`) are built on one sparse
term-document incidence (:class:`TermIncidence`), so a corpus of ~16k documents against ~16k
queries takes seconds.

IDF is the BM25 (Robertson and Sparck Jones 1976, as smoothed in Lucene) form
``idf(t) = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))``, which is never negative; it is the
IDF that ``bm25s`` uses for the ``"lucene"`` variant, so :func:`idf` and
:class:`~.bm25.BM25` agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from embedding_ttc.programs.text.tokens import tokenize

# Queries per block of the query-document product; bounds its temporary memory to about
# ``_BLOCK * n_docs`` entries.
_BLOCK = 512
# A term that spans more than this share of the query-document grid (queries with it times
# documents with it) is matched by a dense BLAS product instead of the sparse one: at 1/256 the
# two cost about the same (measured on MedQuAD, 16k x 16k, where this cuts coverage from ~7 s
# to ~2 s). A speed setting only: the result is the same either way.
_DENSE_TERM_SHARE = 1 / 256


def idf_values(document_frequency: NDArray[np.int64], n_docs: int) -> NDArray[np.float64]:
    """BM25 IDF ``log(1 + (N - df + 0.5) / (df + 0.5))`` (Robertson and Sparck Jones 1976)."""
    df = document_frequency.astype(np.float64)
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


@dataclass(frozen=True, eq=False)  # sparse fields have no boolean equality
class TermIncidence:
    """Sparse binary term-document incidence over the documents' terms.

    The shared index behind coverage, bigram overlap and rare-term IDF: term ``t`` occurs in
    document ``d`` when ``term_doc[vocabulary[t], d] == 1``. Term ids follow the order of
    first occurrence in the corpus, so the index is the same in every process. The channels
    index only the terms their queries contain, which is all they look up.

    Attributes:
        vocabulary: term to row index, for every term given for some document.
        term_doc: CSR ``(n_terms, n_docs)`` float32 matrix of 0/1 entries.

    """

    vocabulary: Mapping[str, int]
    term_doc: sparse.csr_array

    @classmethod
    def from_terms(cls, doc_terms: Sequence[Iterable[str]]) -> TermIncidence:
        """Build the incidence from each document's terms (repeats are counted once).

        Args:
            doc_terms: per document, its terms (tokens, bigrams, ...).

        Returns:
            The incidence over the union of the documents' terms.

        """
        # dict.fromkeys deduplicates in order (unlike a set), so term ids are reproducible;
        # the loops run in C (fromkeys, chain, map), which matters at 10^6 terms.
        distinct = [list(dict.fromkeys(terms)) for terms in doc_terms]
        vocabulary = {
            term: i for i, term in enumerate(dict.fromkeys(chain.from_iterable(distinct)))
        }
        lengths = np.array([len(terms) for terms in distinct], dtype=np.int64)
        indptr = np.zeros(len(distinct) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        cols = np.fromiter(
            map(vocabulary.__getitem__, chain.from_iterable(distinct)),
            dtype=np.int64,
            count=int(indptr[-1]),
        )
        doc_term = sparse.csr_array(
            (np.ones(cols.size, dtype=np.float32), cols, indptr),
            shape=(len(distinct), len(vocabulary)),
        )
        return cls(vocabulary=vocabulary, term_doc=sparse.csr_array(doc_term.T))

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return int(self.term_doc.shape[1])

    @property
    def document_frequency(self) -> NDArray[np.int64]:
        """Number of documents containing each term, indexed like ``vocabulary``."""
        counts: NDArray[np.int64] = np.diff(self.term_doc.indptr).astype(np.int64)
        return counts

    def query_matrix(self, weights: Sequence[Mapping[str, float]]) -> sparse.csr_array:
        """Sparse ``(n_queries, n_terms)`` matrix of per-query term weights.

        Args:
            weights: per query, a weight for each of its terms; terms outside the
                vocabulary are dropped (they occur in no document).

        Returns:
            The weights over the vocabulary's columns.

        """
        data: list[float] = []
        cols: list[int] = []
        indptr = [0]
        for query in weights:
            for term, weight in query.items():
                col = self.vocabulary.get(term)
                if col is not None:
                    cols.append(col)
                    data.append(weight)
            indptr.append(len(cols))
        return sparse.csr_array(
            (
                np.asarray(data, dtype=np.float32),
                np.asarray(cols, dtype=np.int64),
                np.asarray(indptr, dtype=np.int64),
            ),
            shape=(len(weights), len(self.vocabulary)),
        )

    def match(
        self, query_matrix: sparse.csr_array, scale: NDArray[np.float64] | None = None
    ) -> NDArray[np.float32]:
        """Dense ``query_matrix @ term_doc``: per query and document, the weight it shares.

        A sparse product costs, per term, (queries with it) x (documents with it), so a few
        common terms ("the", "what") dominate it; terms whose share of the full
        ``n_queries x n_docs`` grid exceeds ``_DENSE_TERM_SHARE`` go through a dense BLAS
        product instead, the rest through the sparse one. Both run in blocks of queries, so
        temporaries stay at about ``_BLOCK x n_docs`` entries. Arithmetic is ``float32``:
        0/1 counts stay exact.

        Args:
            query_matrix: ``(n_queries, n_terms)`` weights from :meth:`query_matrix`.
            scale: optional per-query factor applied to each row (e.g. ``1 / n_terms``).

        Returns:
            ``float32`` matrix of shape ``(n_queries, n_docs)``.

        """
        n_queries = query_matrix.shape[0]
        out = np.zeros((n_queries, self.n_docs), dtype=np.float32)
        if n_queries == 0 or self.n_docs == 0:
            return out
        weights = sparse.csc_array(query_matrix.astype(np.float32))
        queries_per_term = np.diff(weights.indptr).astype(np.float64)
        cost = queries_per_term * self.document_frequency
        dense = cost > _DENSE_TERM_SHARE * n_queries * self.n_docs
        sparse_weights = sparse.csr_array(weights[:, ~dense])
        sparse_term_doc = sparse.csr_array(self.term_doc[~dense])
        dense_weights = weights[:, dense].toarray()
        dense_term_doc = self.term_doc[dense].toarray()
        for start in range(0, n_queries, _BLOCK):
            stop = min(start + _BLOCK, n_queries)
            (sparse_weights[start:stop] @ sparse_term_doc).toarray(out=out[start:stop])
            if dense_term_doc.shape[0]:
                out[start:stop] += dense_weights[start:stop] @ dense_term_doc
            if scale is not None:
                out[start:stop] *= scale[start:stop, None].astype(np.float32)
        return out


def idf(doc_texts: Sequence[str]) -> dict[str, float]:
    """BM25 inverse document frequency of every term of a corpus.

    ``idf(t) = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))`` with ``N`` documents of which
    ``df(t)`` contain ``t`` (Robertson and Sparck Jones 1976; the Lucene form, which is never
    negative, as in ``bm25s``).

    Args:
        doc_texts: the documents.

    Returns:
        Term to IDF, for every term occurring in the corpus.

    """
    incidence = TermIncidence.from_terms([tokenize(text) for text in doc_texts])
    values = idf_values(incidence.document_frequency, incidence.n_docs)
    return {term: float(values[col]) for term, col in incidence.vocabulary.items()}
