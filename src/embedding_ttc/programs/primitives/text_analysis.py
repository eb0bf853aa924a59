"""Per-document text analysis: the query-independent text work of the lexical programs, done once.

LexicalHybridRRF and CrossRoundRRF (and the BM25 programs) derive from each document's text,
whatever the query: its tokens (:func:`~.lexical.tokenize`) with their counts, hence its length;
its distinct word bigrams; and its sentence and paragraph spans (:mod:`.chunking`, the
granularities CoverageTriple's channels encode). :func:`analyze_text` computes them for one
text. :class:`TextAnalyses` holds them for many documents in CSR-like numpy arrays (per part an
``indptr`` and a ``values`` array, rows aligned with documents), with row access, row selection
(:meth:`TextAnalyses.take`), concatenation (:meth:`TextAnalyses.concatenate`) and
:meth:`~TextAnalyses.save` / :meth:`~TextAnalyses.load` (memory-mapped), so that a deployed
index can analyse its documents once at build time and a query only gather its candidates'
rows. (An index does not store them yet; a deployed program's analyses come from the
process's :class:`TextAnalyzer`, which remembers the documents it has analysed.)

Tokens are ids into a :class:`Vocabulary` (append-only: an id never changes meaning); a bigram
is the pair of its token ids packed into one ``int64``, ``first << 32 | second``. Distinct
tokens and bigrams are kept in the order of their first occurrence in the document, the order
in which :class:`~.lexical.TermIncidence` numbers terms, so that the channels computed from
analyses (:mod:`.lexical_analysed`) equal those computed from texts bit for bit.

This is the module program files import; each concept lives in its own module of
:mod:`embedding_ttc.programs.text`, re-exported here (``__all__``): the vocabulary
(:mod:`~embedding_ttc.programs.text.vocabulary`), ragged arrays
(:mod:`~embedding_ttc.programs.text.ragged`), one document's analysis
(:mod:`~embedding_ttc.programs.text.doc_analysis`), the analyses of many documents and their
disk form (:mod:`~embedding_ttc.programs.text.analyses`), and where a program call finds them
(:mod:`~embedding_ttc.programs.text.analysis_sources`).

A program finds its documents' analyses through its context (:func:`analyses_of`):
``ctx.deployed.text_analyses`` when the caller holds them (:class:`ColumnAnalyses`), else computed
from ``ctx.doc_texts`` by the process's :class:`TextAnalyzer`, which remembers each text's analysis,
so that an evaluation does not re-tokenise a document for every batch of queries.
"""

from __future__ import annotations

from embedding_ttc.programs.text.analyses import (
    ANALYSES_SCHEMA_VERSION,
    GRANULARITIES,
    TextAnalyses,
    analyze,
)
from embedding_ttc.programs.text.analysis_sources import (
    ANALYSIS_CACHE_TEXTS,
    LIVE_ANALYZER,
    ChainedAnalyses,
    ColumnAnalyses,
    TextAnalyzer,
    analyses_of,
)
from embedding_ttc.programs.text.doc_analysis import (
    DocAnalysis,
    analyze_text,
    pack_bigrams,
    unpack_bigrams,
)
from embedding_ttc.programs.text.ragged import Ragged, ragged_positions, take_rows
from embedding_ttc.programs.text.tokens import tokenize
from embedding_ttc.programs.text.vocabulary import Vocabulary

__all__ = [
    "ANALYSES_SCHEMA_VERSION",
    "ANALYSIS_CACHE_TEXTS",
    "GRANULARITIES",
    "LIVE_ANALYZER",
    "ChainedAnalyses",
    "ColumnAnalyses",
    "DocAnalysis",
    "Ragged",
    "TextAnalyses",
    "TextAnalyzer",
    "Vocabulary",
    "analyses_of",
    "analyze",
    "analyze_text",
    "pack_bigrams",
    "ragged_positions",
    "take_rows",
    "tokenize",
    "unpack_bigrams",
]
