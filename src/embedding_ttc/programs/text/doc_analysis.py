"""One document's text analysis: its terms and counts, bigrams, sentence and paragraph spans.

Tokens are ids into a :class:`~.vocabulary.Vocabulary`; a bigram is the pair of its token ids
packed into one ``int64``, ``first << 32 | second``. Distinct tokens and bigrams are kept in the
order of their first occurrence in the document, the order in which
:class:`~.incidence.TermIncidence` numbers terms, so that the channels computed from analyses
(:mod:`embedding_ttc.programs.primitives.lexical_analysed`) equal those computed from texts bit
for bit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.primitives.chunking import paragraph_spans, sentence_spans
from embedding_ttc.programs.text.tokens import tokenize
from embedding_ttc.programs.text.vocabulary import Vocabulary

_BIGRAM_SHIFT = 32  # token ids stay below 2**31, so a packed pair fits an int64
_LOW_BITS = (1 << _BIGRAM_SHIFT) - 1


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class DocAnalysis:
    """The analysis of one text (ids into the vocabulary it was analysed with).

    Attributes:
        terms: ``(n, 2)``: each distinct token id and its count, in order of first occurrence.
        bigrams: each distinct bigram (``first << 32 | second``), in order of first occurrence.
        sentences: ``(m, 2)`` character spans of
            :func:`~embedding_ttc.programs.primitives.chunking.split_sentences`.
        paragraphs: ``(p, 2)`` character spans of
            :func:`~embedding_ttc.programs.primitives.chunking.split_paragraphs`.

    """

    terms: NDArray[np.int64]
    bigrams: NDArray[np.int64]
    sentences: NDArray[np.int64]
    paragraphs: NDArray[np.int64]


def analyze_text(text: str, vocabulary: Vocabulary) -> DocAnalysis:
    """Analyse one text: its tokens' ids and counts, its bigrams, its sentence and paragraph spans.

    Args:
        text: the document text (title and text joined, as the programs see it).
        vocabulary: where its tokens get their ids (new ones are added).

    Returns:
        Its analysis.

    """
    ids = vocabulary.add(tokenize(text))
    counts = Counter(ids.tolist())  # counted in C, keys in order of first occurrence
    keys = ((ids[:-1] << _BIGRAM_SHIFT) | ids[1:]).tolist()
    return DocAnalysis(
        terms=np.array([list(counts), list(counts.values())], dtype=np.int64).T.reshape(-1, 2),
        bigrams=np.array(list(dict.fromkeys(keys)), dtype=np.int64),
        sentences=np.array(sentence_spans(text), dtype=np.int64).reshape(-1, 2),
        paragraphs=np.array(paragraph_spans(text), dtype=np.int64).reshape(-1, 2),
    )


def pack_bigrams(first: NDArray[np.int64], second: NDArray[np.int64]) -> NDArray[np.int64]:
    """Bigram keys of token-id pairs (the packing :class:`TextAnalyses` stores)."""
    return (np.asarray(first, dtype=np.int64) << _BIGRAM_SHIFT) | np.asarray(second, np.int64)


def unpack_bigrams(keys: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The token ids of bigram keys."""
    keys = np.asarray(keys, dtype=np.int64)
    return keys >> _BIGRAM_SHIFT, keys & _LOW_BITS
