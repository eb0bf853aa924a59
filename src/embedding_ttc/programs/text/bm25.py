"""Okapi BM25 over our tokens (Robertson et al. 1995): the one home of BM25 scoring.

Its IDF is :func:`~.incidence.idf`'s (the ``"lucene"`` variant's, never negative). Its top-k
order is trec_eval's (:func:`~embedding_ttc.programs.trec_order.top_k`).

Two ways in, one arithmetic. :class:`BM25` indexes a corpus's texts with ``bm25s`` and scores
or retrieves from that index. :func:`bm25_analysed` scores documents already analysed
(:class:`~.analyses.TextAnalyses`, as a deployed index stores them): ``bm25s`` indexes a whole
corpus from its tokens, per call, which at a deployed query's 1,000 candidates was most of the
query's time, so it computes from the stored counts the same quantities for the query terms
only, in the arithmetic ``bm25s`` uses (variant ``lucene``: IDF ``log(1 + (N - df + 0.5) / (df +
0.5))`` rounded to ``float32``, term-frequency part in ``float64``, each product rounded to
``float32`` and summed in ``float32`` in the order of the query's tokens), so its scores equal
``BM25.fit(docs).scores(queries)`` exactly; a parity test holds it to that.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import bm25s
import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.primitives.tokenizers import tokenizer_name
from embedding_ttc.programs.served_texts import ServedTexts
from embedding_ttc.programs.text.analyses import TextAnalyses
from embedding_ttc.programs.text.tokens import cached_tokens, tokenize
from embedding_ttc.programs.trec_order import top_k

#: BM25 term-frequency saturation ``k1`` (the ``bm25s`` default; Robertson et al. 1995 and
#: Lucene use 1.2 to 2.0). A global constant, never tuned per task.
BM25_K1 = 1.5
#: BM25 document-length normalisation ``b`` (the ``bm25s`` and Lucene default).
BM25_B = 0.75
#: BM25 variant in ``bm25s``: ``"lucene"`` scores ``idf(t) * tf / (tf + k1 * (1 - b + b *
#: dl / avgdl))`` with the non-negative IDF of :func:`~.incidence.idf` (Kamphuis et al. 2020
#: compare the variants).
BM25_METHOD = "lucene"


@dataclass(frozen=True, eq=False)  # equal only to itself: the index is not compared
class BM25:
    """Okapi BM25 over our tokens, a thin wrapper around ``bm25s`` (Robertson et al. 1995).

    Build once per corpus with :meth:`fit`, then score any queries against every document.
    The corpus goes to ``bm25s`` already tokenised by :func:`tokenize`, so tokenisation is
    ours and Unicode-aware; ``bm25s`` computes the index (variant :data:`BM25_METHOD`,
    :data:`BM25_K1`, :data:`BM25_B`) and the scores, through ``BM25.get_scores``, its method
    that scores every document for one query. A query term repeated ``n`` times counts ``n``
    times, as in ``bm25s``. Treat an instance as immutable.

    Attributes:
        n_docs: number of documents in the index.

    """

    n_docs: int
    # bm25s.BM25, or None when the corpus has no token at all (nothing can score).
    _retriever: Any = field(repr=False)
    # Documents whose holder scores them (a program file's served ctx.doc_texts), or None.
    _served: ServedTexts | None = field(default=None, repr=False)

    @classmethod
    def fit(cls, doc_texts: Iterable[str]) -> BM25:
        """Index a corpus.

        The texts are tokenised one at a time into token ids (a corpus of a million documents
        never holds its token strings at once) and handed to ``bm25s`` with the vocabulary.

        Served documents (a deployed program file's ``ctx.doc_texts`` in the sandbox,
        :class:`~embedding_ttc.programs.served_texts.ServedTexts`) are not indexed here: their
        holder scores them from its stored analyses, with the same scores.

        Args:
            doc_texts: the documents (any iterable, read once).

        Returns:
            The fitted scorer.

        """
        if isinstance(doc_texts, ServedTexts):
            return cls(n_docs=len(doc_texts), _retriever=None, _served=doc_texts)
        vocabulary: dict[str, int] = {}
        token_ids: list[list[int]] = []
        name = tokenizer_name()
        for text in doc_texts:
            token_ids.append(
                [vocabulary.setdefault(t, len(vocabulary)) for t in cached_tokens(name, text)]
            )
        if not vocabulary:
            # bm25s cannot index an empty vocabulary; every score is 0 anyway.
            return cls(n_docs=len(token_ids), _retriever=None)
        vocabulary.setdefault("", len(vocabulary))  # bm25s's empty token, as it adds it itself
        retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B, method=BM25_METHOD)
        retriever.index((token_ids, vocabulary), show_progress=False)
        return cls(n_docs=len(token_ids), _retriever=retriever)

    def scores(self, query_texts: Sequence[str]) -> NDArray[np.float32]:
        """BM25 score of every document for every query.

        Args:
            query_texts: the queries.

        Returns:
            ``float32`` matrix ``(n_queries, n_docs)``, non-negative; a query with no token
            in the corpus vocabulary scores 0 everywhere.

        """
        if self._served is not None:
            return self._served.bm25_scores(query_texts)
        out = np.zeros((len(query_texts), self.n_docs), dtype=np.float32)
        if self._retriever is None:
            return out
        for row, text in enumerate(query_texts):
            tokens = tokenize(text)
            if tokens:  # bm25s.get_scores rejects an empty token list
                out[row] = self._retriever.get_scores(tokens)
        return out

    def top_k(
        self, query_texts: Sequence[str], k: int, tiebreak: NDArray[np.integer]
    ) -> list[tuple[NDArray[np.intp], NDArray[np.float32]]]:
        """The best ``k`` documents of each query, through ``bm25s``'s own top-k retrieval.

        The order is :func:`~embedding_ttc.programs.trec_order.top_k`'s (score descending, then
        ``tiebreak`` ascending), so the result is exactly ``top_k`` over :meth:`scores`:
        ``bm25s`` is asked for ``k + 1`` documents, and when the last two tie (a tie may cross
        the cut, and ``bm25s`` breaks ties its own way) the query is scored over every document
        instead. When the ``k + 1``-th score is 0, every matching document is in hand and the
        non-matching ones (all at 0) are taken by ``tiebreak`` without scoring them.

        Args:
            query_texts: the queries.
            k: documents per query (fewer if the corpus is smaller).
            tiebreak: per document, its rank in the tie order (smaller wins).

        Returns:
            Per query, its documents (best first) and their scores.

        """
        k = min(k, self.n_docs)
        if self._served is not None:  # exactly top_k over the scores, as documented
            served = self._served.bm25_scores(query_texts)
            picked = [top_k(row, tiebreak, k).astype(np.intp) for row in served]
            return [(rows, row[rows]) for rows, row in zip(picked, served, strict=True)]
        vocabulary = self._retriever.vocab_dict if self._retriever is not None else {}
        out = []
        for text in query_texts:
            tokens = [t for t in tokenize(text) if t in vocabulary]
            if not tokens:  # nothing matches: every score is 0
                rows = top_k(np.zeros(self.n_docs, np.float32), tiebreak, k).astype(np.intp)
                out.append((rows, np.zeros(rows.size, np.float32)))
                continue
            want = min(k + 1, self.n_docs)
            found, values = self._retriever.retrieve(
                [tokens], k=want, show_progress=False, n_threads=1, backend_selection="numpy"
            )
            found, values = found[0].astype(np.intp), values[0].astype(np.float32)
            if want > k and values[k] > 0 and values[k] == values[k - 1]:
                scores = self._retriever.get_scores(tokens).astype(np.float32)
                rows = top_k(scores, tiebreak, k).astype(np.intp)
                out.append((rows, scores[rows]))
                continue
            if want > k and values[k] == 0:  # at most k documents match: the rest tie at 0
                positive = values > 0
                found, values = found[positive], values[positive]
                m = min(k + found.size, self.n_docs)
                zero = np.argpartition(tiebreak, m - 1)[:m] if m < self.n_docs else None
                zero = np.arange(self.n_docs) if zero is None else zero
                zero = np.setdiff1d(zero, found).astype(np.intp)
                found = np.concatenate([found, zero])
                values = np.concatenate([values, np.zeros(zero.size, np.float32)])
            pos = top_k(values, tiebreak[found], k)
            out.append((found[pos], values[pos]))
        return out


def bm25_analysed(query_texts: Sequence[str], analyses: TextAnalyses) -> NDArray[np.float32]:
    """``BM25.fit(docs).scores(query_texts)`` of the analysed documents (module docstring).

    Args:
        query_texts: the queries.
        analyses: the documents' analyses.

    Returns:
        ``float32`` matrix ``(n_queries, n_docs)``, non-negative.

    """
    n_docs = analyses.n_docs
    out = np.zeros((len(query_texts), n_docs), dtype=np.float32)
    lengths = np.ascontiguousarray(analyses.lengths, dtype=np.int64)
    if n_docs == 0 or not lengths.any():
        return out  # BM25.fit indexes nothing: every score is 0
    # bm25s: avg_doc_len = np.array(lengths).mean(); k1 * ((1 - b) + b * l_d / l_avg) per doc.
    average = lengths.mean()
    saturation = BM25_K1 * ((1 - BM25_B) + BM25_B * lengths.astype(np.float64) / average)
    vocabulary = analyses.vocabulary
    query_ids = [vocabulary.lookup(tokenize(text)) for text in query_texts]
    wanted = np.unique(np.concatenate([np.zeros(0, np.int64), *query_ids]))
    terms = analyses.terms
    where = np.flatnonzero(np.isin(terms.values[:, 0], wanted[wanted >= 0]))
    by_term = np.argsort(np.asarray(terms.values[where, 0]), kind="stable")
    where = where[by_term]
    ids = np.asarray(terms.values[where, 0], dtype=np.int64)
    tf = np.asarray(terms.values[where, 1]).astype(np.float32).astype(np.float64)
    docs = np.searchsorted(terms.indptr, where, side="right") - 1
    bounds = np.searchsorted(ids, wanted, side="left"), np.searchsorted(ids, wanted, side="right")
    contributions: dict[int, tuple[NDArray[np.intp], NDArray[np.float32]]] = {}
    for term, start, stop in zip(wanted.tolist(), *bounds, strict=True):
        df = int(stop - start)
        if term < 0 or df == 0:
            continue
        idf = np.float32(math.log(1 + (n_docs - df + 0.5) / (df + 0.5)))
        d, f = docs[start:stop], tf[start:stop]
        part = (np.float64(idf) * (f / (saturation[d] + f))).astype(np.float32)
        contributions[term] = (d, part)
    for row, token_ids in enumerate(query_ids):
        for term in token_ids.tolist():  # in query order, repeats counted, as bm25s sums
            found = contributions.get(term)
            if found is not None:
                out[row, found[0]] += found[1]
    return out
