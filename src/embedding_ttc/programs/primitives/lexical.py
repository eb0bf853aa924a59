"""Lexical channels: a Unicode-aware tokenizer, BM25, bigram overlap, term coverage, rare-term IDF.

These are the encoder-free channels of LexicalHybridRRF (paper, Appendix A.5: IDF-weighted
word overlap after Robertson et al. 1995, and word-bigram overlap) and CrossRoundRRF (A.6:
query-term coverage ratio and rare-term IDF "with Unicode-aware CJK tokenization"). The paper
notes that its tokenizer "matches ASCII word characters", so the lexical channels degrade on
non-Latin scripts (Appendix A, preamble); :func:`tokenize` here uses the active tokenizer of
:mod:`.tokenizers`, by default one that knows each script.

Each channel returns a dense ``float32`` matrix of shape ``(n_queries, n_docs)``. Coverage,
bigram overlap and rare-term IDF are built on one sparse term-document incidence helper
(:class:`TermIncidence`), so a corpus of ~16k documents against ~16k queries takes seconds.

IDF is the BM25 (Robertson and Sparck Jones 1976, as smoothed in Lucene) form
``idf(t) = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))``, which is never negative; it is the
IDF that ``bm25s`` uses for the ``"lucene"`` variant, so :func:`idf` and :class:`BM25` agree.

All functions are pure and deterministic; none calls an encoder or mutates its inputs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, pairwise
from typing import Any

import bm25s
import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from embedding_ttc.programs.primitives.tokenizers import get_tokenizer, tokenizer_name

__all__ = [
    "BM25",
    "BM25_B",
    "BM25_K1",
    "BM25_METHOD",
    "RARE_TERM_QUANTILE",
    "TermIncidence",
    "bigram_overlap",
    "bigrams",
    "idf",
    "query_term_coverage",
    "rare_term_idf",
    "tokenize",
]

#: BM25 term-frequency saturation ``k1`` (the ``bm25s`` default; Robertson et al. 1995 and
#: Lucene use 1.2 to 2.0). A global constant, never tuned per task.
BM25_K1 = 1.5
#: BM25 document-length normalisation ``b`` (the ``bm25s`` and Lucene default).
BM25_B = 0.75
#: BM25 variant in ``bm25s``: ``"lucene"`` scores ``idf(t) * tf / (tf + k1 * (1 - b + b *
#: dl / avgdl))`` with the non-negative IDF above (Kamphuis et al. 2020 compare the variants).
BM25_METHOD = "lucene"

#: A query term is *rare* when its IDF is at or above this quantile of the IDFs of the
#: query's terms that occur in the corpus: with 0.5, the rarer half of the query. A quantile
#: of the query's own terms rather than a fixed IDF threshold, because IDF grows with
#: ``log N`` and a fixed threshold would mean something different on a 500-document and a
#: 500,000-document corpus; "at or above" keeps at least one term of every query that shares
#: any term with the corpus. A global constant, never tuned per task.
RARE_TERM_QUANTILE = 0.5

# Queries per block of the query-document product; bounds its temporary memory to about
# ``_BLOCK * n_docs`` entries.
_BLOCK = 512
# A term that spans more than this share of the query-document grid (queries with it times
# documents with it) is matched by a dense BLAS product instead of the sparse one: at 1/256 the
# two cost about the same (measured on MedQuAD, 16k x 16k, where this cuts coverage from ~7 s
# to ~2 s). A speed setting only: the result is the same either way.
_DENSE_TERM_SHARE = 1 / 256


def tokenize(text: str) -> list[str]:
    """Split a text into lower-cased word tokens in any script.

    The active tokenizer decides how. The default, ``unicode``, NFKC-normalises and
    case-folds the text (so full-width ``ＡＢＣ`` is ``abc`` and ``Straße`` is
    ``strasse``), ignores invisible marks, normalises Arabic
    letters and diacritics, keeps a word of a spaced script (Latin, Cyrillic, Greek, Arabic,
    Devanagari, Hangul, ...) whole with its combining marks, and cuts runs of scripts written
    without spaces (Han, Kana, Thai, Lao, Khmer, Myanmar) into overlapping letter bigrams.
    Every lexical channel tokenises through here, so one setting (:mod:`.tokenizers`:
    :func:`~.tokenizers.use_tokenizer`, ``EMBEDDING_TTC_TOKENIZER``) switches them all.

    No stemming and no stopword list: both are language-specific, and the channels built on
    these tokens already discount common terms through IDF (BM25, rare-term IDF) or are
    ratios over the query's own terms.

    Args:
        text: any text.

    Returns:
        The tokens in text order, with repeats.

    """
    return list(_tokens(tokenizer_name(), text))


TOKEN_CACHE_TEXTS = 1 << 16
"""Texts whose tokens are remembered (least recently used first out): a deployed lexical
program tokenises the same candidate documents for every query."""


@functools.lru_cache(maxsize=TOKEN_CACHE_TEXTS)
def _tokens(tokenizer: str, text: str) -> tuple[str, ...]:
    """The tokens of ``text`` under the tokenizer named ``tokenizer`` (cached on both)."""
    return get_tokenizer(tokenizer).split(text)


def bigrams(tokens: Sequence[str]) -> list[str]:
    """Consecutive token pairs of a token sequence, each as ``"first second"``.

    Tokens never contain a space, so the joined form is unambiguous. For scripts tokenised
    one letter at a time these are character bigrams, the usual lexical unit for Chinese.

    Args:
        tokens: tokens from :func:`tokenize`.

    Returns:
        ``len(tokens) - 1`` bigrams (none for fewer than two tokens), in order.

    """
    return list(map(" ".join, pairwise(tokens)))


def _idf_values(document_frequency: NDArray[np.int64], n_docs: int) -> NDArray[np.float64]:
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
    and from stored analyses (:mod:`.lexical_analysed`). ``incidence`` needs to hold only the
    query terms that occur in some document.
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
    values = _idf_values(incidence.document_frequency, incidence.n_docs)
    return {term: float(values[col]) for term, col in incidence.vocabulary.items()}


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
    (:mod:`.lexical_analysed`); ``incidence`` must hold exactly the query tokens that occur
    in some document, numbered in order of first occurrence over the documents.
    """
    values = _idf_values(incidence.document_frequency, incidence.n_docs)
    weights: list[dict[str, float]] = []
    idf_of = {term: float(values[col]) for term, col in incidence.vocabulary.items()}
    for tokens in query_tokens:
        term_idf = {t: idf_of[t] for t in dict.fromkeys(tokens) if t in idf_of}
        threshold = _linear_quantile(sorted(term_idf.values()), quantile)
        weights.append({t: v for t, v in term_idf.items() if v >= threshold})
    return incidence.match(incidence.query_matrix(weights))


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

    @classmethod
    def fit(cls, doc_texts: Iterable[str]) -> BM25:
        """Index a corpus.

        The texts are tokenised one at a time into token ids (a corpus of a million documents
        never holds its token strings at once) and handed to ``bm25s`` with the vocabulary.

        Args:
            doc_texts: the documents (any iterable, read once).

        Returns:
            The fitted scorer.

        """
        vocabulary: dict[str, int] = {}
        token_ids: list[list[int]] = []
        name = tokenizer_name()
        for text in doc_texts:
            token_ids.append(
                [vocabulary.setdefault(t, len(vocabulary)) for t in _tokens(name, text)]
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

        The order is :func:`~embedding_ttc.evaluation.metrics.top_k`'s (score descending, then
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
        from embedding_ttc.evaluation.metrics import top_k

        k = min(k, self.n_docs)
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
