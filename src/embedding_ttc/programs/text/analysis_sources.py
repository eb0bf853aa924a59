"""Where a program call finds its documents' text analyses.

A program finds them through its context (:func:`analyses_of`): ``ctx.deployed.text_analyses``
when the caller holds them (:class:`ColumnAnalyses`: rows of stored analyses, a deployed index's
segments read as one by :class:`ChainedAnalyses`), else computed from ``ctx.doc_texts`` by the
process's :class:`TextAnalyzer`, which remembers each text's analysis, so that an evaluation
does not re-tokenise a document for every batch of queries.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.base import DeployedInputs
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name
from embedding_ttc.programs.text.analyses import TextAnalyses, analyze, stacked_parts
from embedding_ttc.programs.text.doc_analysis import DocAnalysis, analyze_text
from embedding_ttc.programs.text.vocabulary import Vocabulary

ANALYSIS_CACHE_TEXTS = 1 << 16
"""Texts whose analyses a :class:`TextAnalyzer` remembers; past this it starts afresh."""


class TextAnalyzer:
    """Analyses texts with one vocabulary, remembering each text's analysis (thread-safe).

    A text is analysed once per tokenizer however many calls hand it over (the memo is keyed
    on the active tokenizer's name and the text). Past
    :data:`ANALYSIS_CACHE_TEXTS` remembered texts it starts afresh, with a new vocabulary
    (analyses returned earlier keep theirs).
    """

    def __init__(self, max_texts: int = ANALYSIS_CACHE_TEXTS) -> None:
        self.max_texts = max_texts
        self._lock = threading.Lock()
        self._vocabulary = Vocabulary()
        self._memo: dict[tuple[str, str], DocAnalysis] = {}

    def analyses(self, texts: Sequence[str]) -> TextAnalyses:
        """The analyses of ``texts``, in order."""
        with self._lock:
            if len(self._memo) >= self.max_texts:
                self._vocabulary = Vocabulary()
                self._memo = {}
            memo, vocabulary = self._memo, self._vocabulary
            name = tokenizer_name()
            docs = []
            for text in texts:
                doc = memo.get((name, text))
                if doc is None:
                    doc = memo[name, text] = analyze_text(text, vocabulary)
                docs.append(doc)
            return TextAnalyses.of_documents(docs, vocabulary)


LIVE_ANALYZER = TextAnalyzer()
"""The analyzer of the process, for contexts whose caller holds no analyses."""


class ColumnAnalyses:
    """A call's analyses: rows of stored analyses, then texts analysed live (computed once).

    The :class:`~embedding_ttc.programs.base.TextAnalysisSource` a caller holding stored
    analyses hands its program: the stored rows of the documents it holds, in column order,
    followed by the analyses of documents given as texts that it does not hold, analysed into
    an extension of the stored vocabulary.
    """

    def __init__(
        self,
        stored: TextAnalyses | ChainedAnalyses,
        rows: NDArray[np.intp],
        live_texts: Sequence[str] = (),
    ) -> None:
        self.stored = stored
        self.rows = np.asarray(rows, dtype=np.intp)
        self.live_texts = tuple(live_texts)
        self._analyses: TextAnalyses | None = None

    def analyses(self) -> TextAnalyses:
        """The analyses of the call's columns."""
        if self._analyses is None:
            held = self.stored.take(self.rows)
            if self.live_texts:
                live = analyze(self.live_texts, Vocabulary(base=self.stored.vocabulary))
                held = TextAnalyses(live.vocabulary, **stacked_parts([held, live]))
            self._analyses = held
        return self._analyses


class ChainedAnalyses:
    """Several stored analyses read as one, each part's vocabulary extending the one before.

    A deployed index writes one :class:`TextAnalyses` per segment, each analysed into an
    extension of the previous segment's vocabulary (:class:`Vocabulary` ``base=``), so a token
    has one id in every part and the last part's vocabulary holds them all. Rows are numbered
    across the parts in order; :meth:`take` gathers rows of any parts without remapping ids.
    """

    def __init__(self, parts: Sequence[TextAnalyses]) -> None:
        if not parts:
            raise ValueError("chained analyses need at least one part")
        self.parts = tuple(parts)
        self.vocabulary = self.parts[-1].vocabulary
        sizes = np.array([p.n_docs for p in self.parts], dtype=np.intp)
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)

    @property
    def n_docs(self) -> int:
        """Rows over every part."""
        return int(self.starts[-1])

    def take(self, rows: NDArray[np.intp]) -> TextAnalyses:
        """The analyses of ``rows`` (numbered across the parts), in that order."""
        rows = np.asarray(rows, dtype=np.intp)
        if len(self.parts) == 1 or rows.size == 0:
            return self.parts[-1].take(rows) if rows.size == 0 else self.parts[0].take(rows)
        part_of = np.searchsorted(self.starts, rows, side="right") - 1
        order = np.argsort(part_of, kind="stable")
        pieces = [
            self.parts[k].take(rows[order][part_of[order] == k] - self.starts[k])
            for k in np.unique(part_of)
        ]
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        return TextAnalyses(self.vocabulary, **stacked_parts(pieces)).take(back)


def analyses_of(ctx: Any) -> TextAnalyses:
    """The analyses of a program call's documents: the context's, else the live analyzer's.

    Raises:
        ValueError: the context's analyses are not one per document.

    """
    source = DeployedInputs.of(ctx).text_analyses
    if source is None:
        return LIVE_ANALYZER.analyses(ctx.doc_texts)
    analyses: TextAnalyses = source.analyses()
    if analyses.n_docs != len(ctx.doc_texts):
        raise ValueError(
            f"the context's text analyses hold {analyses.n_docs} documents, "
            f"not its {len(ctx.doc_texts)}"
        )
    return analyses
