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

This is the module program files import; each concept lives in its own module of
:mod:`embedding_ttc.programs.text`, re-exported here: the tokens
(:mod:`~embedding_ttc.programs.text.tokens`), the incidence and IDF
(:mod:`~embedding_ttc.programs.text.incidence`), the channels built on it
(:mod:`~embedding_ttc.programs.text.term_channels`) and BM25
(:mod:`~embedding_ttc.programs.text.bm25`). ``__all__`` is what the search's prompt lists
(:mod:`embedding_ttc.search.prompts.primitives`); the other public names stay importable.

IDF is the BM25 (Robertson and Sparck Jones 1976, as smoothed in Lucene) form
``idf(t) = log(1 + (N - df(t) + 0.5) / (df(t) + 0.5))``, which is never negative; it is the
IDF that ``bm25s`` uses for the ``"lucene"`` variant, so :func:`idf` and :class:`BM25` agree.

All functions are pure and deterministic; none calls an encoder or mutates its inputs.
"""

from __future__ import annotations

from embedding_ttc.programs.text.bm25 import BM25, BM25_B, BM25_K1, BM25_METHOD
from embedding_ttc.programs.text.incidence import TermIncidence, idf
from embedding_ttc.programs.text.term_channels import (
    RARE_TERM_QUANTILE,
    bigram_overlap,
    query_term_coverage,
    rare_term_idf,
)
from embedding_ttc.programs.text.term_channels import rare_term_scores as rare_term_scores
from embedding_ttc.programs.text.term_channels import ratio_scores as ratio_scores
from embedding_ttc.programs.text.tokens import TOKEN_CACHE_TEXTS as TOKEN_CACHE_TEXTS
from embedding_ttc.programs.text.tokens import bigrams, tokenize

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
