"""Text chunking: sentences, paragraphs, sentence pairs, and chunk-to-document ownership.

The granularity programs of the paper split documents into pieces, encode the pieces and pool
their similarities back to the document: sentences for SentMaxSim (Appendix A.2), paragraphs
and sentences for AdaptGranularity (A.3), and sentences, consecutive sentence pairs and
paragraphs for CoverageTriple (A.4). The paper's splitter "assumes Latin terminal punctuation"
(Appendix A, preamble); this one is rule-based but script-aware, so those programs keep their
granularity channels on Chinese, Japanese, Hindi, Arabic, Amharic and Armenian text.

Sentence rules, in order:

* a *blank line* (a line of only whitespace) is a hard break: it ends a paragraph;
* a single line break is whitespace, as in the paper's ``[.!?]`` splitter: PDF and OCR text
  breaks lines inside sentences, and a split there leaves fragments that carry no evidence;
* a *terminator run* is one or more characters with the Unicode ``Sentence_Terminal``
  property (UAX #29: ``. ! ?``, ``。！？｡``, Devanagari ``। ॥``, Arabic ``؟ ۔``, Ethiopic
  ``። ፧``, Armenian ``։``, Myanmar ``။``, Khmer ``។`` and others) or the ellipsis ``…``,
  followed by any closing quotes or brackets, which stay with the sentence;
* a run followed by whitespace ends a sentence, unless the next word starts with a lower-case
  letter (``e.g. this``, ``"Stop!" she said``), or the run is a single ``.`` after a known
  abbreviation (``Dr.``), a dotted abbreviation (``U.S.``, ``e.g.``, ``Ph.D.``) or a single
  upper-case initial (``J. Smith``);
* a run with no whitespace after it ends a sentence only in scripts written without spaces:
  when it contains an ideographic terminator (``。！？｡``), unless a closing bracket is
  followed by more text (``「本当？」と彼は聞いた``), or when a non-``.`` run is followed by
  a Han, Hiragana or Katakana character (``你好!我很好``);
* so a ``.`` (or a full-width ``．``) inside a token never splits: decimals (``3.14``,
  ``３．１４``), versions, URLs; commas never split, the Arabic ``،`` included (a clause
  boundary, as ``,`` is: splitting there would cut a sentence's evidence in two);
* in Thai, which separates sentences by a space rather than a full stop, whitespace between
  two Thai letters ends a sentence (not around the repetition mark ``ๆ`` or after ``ฯ``, which
  are spaced off inside a sentence);
* zero-width spaces (U+200B, U+FEFF) count as whitespace after a terminator and are stripped
  from a sentence's ends, as are full-width (U+3000) and other Unicode spaces;
* a piece without a letter (``$``, ``5,363``, ``(370)``, ``—``) is not a sentence: it joins
  the piece before it (or, first in the text, the piece after it). Tables extracted from PDFs
  put each cell between blank lines; this rule turns their rows ("Net income $ 5,363 $ 4,869")
  into the sentences.

The rules err towards not splitting (``in the U.S. The`` stays one sentence): a merged
sentence still carries its evidence into MaxSim, while a wrong split cuts it in two.

All functions are pure and deterministic; none calls an encoder.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import regex
from numpy.typing import NDArray

from embedding_ttc.programs.primitives.tokenizers import IGNORABLE
from embedding_ttc.programs.served_texts import ServedTexts

__all__ = [
    "MAX_CHUNKS_PER_DOC",
    "PARAGRAPH_SENTENCES",
    "Chunks",
    "chunk_documents",
    "sentence_pairs",
    "split_paragraphs",
    "split_sentences",
]

#: Sentences per paragraph when a text has no line structure at all (one line of prose):
#: non-overlapping windows of this many consecutive sentences. Four sits in the usual three
#: to five sentences of an expository paragraph, so the paragraph channel stays between the
#: sentence and the whole-document granularity. A global choice, never tuned per task.
PARAGRAPH_SENTENCES = 4

#: Cap on chunks per document that programs pass as ``max_chunks_per_doc`` to bound their
#: encoder cost: the first 32 chunks. It covers every sentence of typical retrieval passages
#: (a few to a few dozen sentences) and caps the long tail of book-length documents, whose
#: cost would otherwise grow with their length. A global choice, never tuned per task.
MAX_CHUNKS_PER_DOC = 32

# Abbreviations after which a "." does not end a sentence, casefolded and without the final
# period. Titles and reference words that are followed by a name or a number; ordinary words
# ("no", "sat", "art") are left out because they end sentences too. Dotted forms ("e.g.",
# "U.S.") and single initials are recognised by shape, not listed.
_ABBREVIATIONS = frozenset(
    {
        # titles and ranks (English, French, German, Spanish)
        *("mr", "mrs", "ms", "mx", "dr", "prof", "sr", "jr", "st", "mt", "rev", "hon"),
        *("capt", "lt", "sgt", "gov", "sen", "pres", "mme", "mlle", "hr", "fr", "sra", "dra"),
        # reference and Latin abbreviations
        *("vs", "cf", "al", "approx", "ca", "fig", "figs", "eq", "eqs", "vol", "vols", "pp"),
        *("ref", "refs", "dept", "univ", "inc", "ltd", "corp", "viz", "nr", "bzw", "usw"),
        # months
        *("jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
    }
)

# A terminator run, the closing quotes or brackets attached to it, and (looked at, not
# consumed) the whitespace and the character that follow it on the line.
_CANDIDATE = regex.compile(
    r"""(?P<run>[\p{Sentence_Terminal}\u2026]+)(?P<close>[\p{Pe}\p{Pf}\p{Pi}"']*)"""
    r"(?=(?P<space>[\s\u200b\ufeff]*)(?P<next>.?))",
    regex.DOTALL,
)
# Terminators of scripts written without spaces: they end a sentence with no space after.
_WIDE_TERMINATORS = frozenset("\u3002\uff01\uff1f\uff61")  # 。！？｡
_UNSPACED_LETTER = regex.compile(r"[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\u30fc]")
# Thai writes a space, not a full stop, between sentences: a space between two Thai letters is
# a sentence end. Not after or before the repetition mark ๆ or after the abbreviation mark ฯ,
# which Thai spaces off inside a sentence ("เด็ก ๆ").
_THAI_SPACE = regex.compile(
    r"(?<=[\p{sc=Thai}&&[\p{L}\p{M}]--[\u0e2f\u0e46]])[\s\u200b]+(?=[\p{sc=Thai}&&\p{L}--[\u0e46]])",
    regex.V1,
)
_MAY_BE_THAI = regex.compile(r"[\u0e00-\u0e7f]")
# Whitespace and the invisible characters the tokenizers ignore (zero-width spaces and joiners,
# bidi marks, the soft hyphen), stripped from the ends of a sentence.
_STRIPPED = "".join(c for c in map(chr, range(0x3001)) if c.isspace()) + IGNORABLE
_DOTTED = regex.compile(r"(?:[\p{L}\p{M}]{1,3}\.)+[\p{L}\p{M}]{1,3}")
# A run of line breaks with only whitespace between them that contains a blank line.
_BLANK_LINE = regex.compile(r"\R[^\S\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*\R\s*")
_LETTER = regex.compile(r"\p{L}")


def _is_word_char(char: str) -> bool:
    """A letter or a combining mark (the characters of an abbreviation)."""
    return char.isalpha() or unicodedata.category(char).startswith("M")


def _is_abbreviation(text: str, period: int) -> bool:
    """Whether the ``.`` at ``text[period]`` closes an abbreviation rather than a sentence."""
    # The word before the period: letters and marks with internal periods ("U.S", "Dr"),
    # found by walking back, which is faster than a regular expression anchored at the end.
    start = period
    while start > 0 and (_is_word_char(text[start - 1]) or text[start - 1] == "."):
        start -= 1
    word = text[start:period].lstrip(".")
    if not word or word.endswith(".") or (start > 0 and text[start - 1].isdigit()):
        return False
    if word.casefold() in _ABBREVIATIONS:
        return True
    if len(word) == 1:
        return word.isupper()  # an initial, "J. Smith"
    return "." in word and _DOTTED.fullmatch(word) is not None


def _is_boundary(text: str, match: Any, block_end: int) -> bool:
    """Whether a terminator run (a ``_CANDIDATE`` match) ends a sentence; see module rules."""
    run, close, space, following = match.groups()  # positional: faster than by name
    if not following or match.end() + len(space) >= block_end:  # end of the block
        return True
    if space:
        if following.islower():
            return False
        return not (run == "." and _is_abbreviation(text, match.start()))
    if not _WIDE_TERMINATORS.isdisjoint(run):
        return not (close and following.isalnum())
    # A full stop (ASCII or full-width) with no space after is inside a token: 3.14, ３．１４.
    return run.strip(".\uff0e") != "" and _UNSPACED_LETTER.match(following) is not None


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to exclude surrounding whitespace."""
    piece = text[start:end]
    left = len(piece) - len(piece.lstrip(_STRIPPED))
    right = len(piece.rstrip(_STRIPPED))
    return start + left, start + max(left, right)


def _blocks(text: str) -> list[tuple[int, int]]:
    """Spans of the blank-line separated blocks of ``text`` (possibly blank themselves)."""
    blocks: list[tuple[int, int]] = []
    start = 0
    for gap in _BLANK_LINE.finditer(text):
        blocks.append((start, gap.start()))
        start = gap.end()
    blocks.append((start, len(text)))
    return blocks


def _join_letterless(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge every span without a letter into the span before it (the first into the next)."""
    merged: list[tuple[int, int]] = []
    pending: int | None = None  # start of leading letterless spans waiting for a successor
    for start, end in spans:
        if _LETTER.search(text, start, end) is not None:
            merged.append((start if pending is None else pending, end))
            pending = None
        elif merged:
            merged[-1] = (merged[-1][0], end)
        elif pending is None:
            pending = start
    if pending is not None:  # no letter anywhere: one piece
        merged.append((pending, spans[-1][1]))
    return merged


def _block_sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentence spans of one block, stripped and non-empty."""
    cuts = [m.end() for m in _CANDIDATE.finditer(text, start, end) if _is_boundary(text, m, end)]
    if _MAY_BE_THAI.search(text, start, end) is not None:
        cuts = sorted({*cuts, *(m.end() for m in _THAI_SPACE.finditer(text, start, end))})
    spans: list[tuple[int, int]] = []
    cut = start
    for boundary in cuts:
        spans.append(_strip_span(text, cut, boundary))
        cut = boundary
    spans.append(_strip_span(text, cut, end))
    return [(a, b) for a, b in spans if b > a]


SPLIT_CACHE_TEXTS = 1 << 16
"""Texts whose sentence spans are remembered (least recently used first out).

A deployed program splits the same candidate documents for every query; measured on
LexicalHybridRRF over 100 SciFact candidates, the splitting was 40% of a query's time."""


@functools.lru_cache(maxsize=SPLIT_CACHE_TEXTS)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Character spans of the sentences of ``text``, stripped, non-empty, in order."""
    spans = [s for a, b in _blocks(text) for s in _block_sentences(text, a, b)]
    return tuple(_join_letterless(text, spans)) if spans else ()


def split_sentences(text: str) -> list[str]:
    """Split a text into sentences with script-aware, rule-based boundaries.

    The rules are in the module docstring. Blank lines always split, single line breaks never
    do; a text with no terminator and no blank line is one sentence; an empty or blank text
    gives no sentence.

    Args:
        text: any text, in any script.

    Returns:
        The sentences in order, stripped of surrounding whitespace, none empty.

    """
    return [text[start:end] for start, end in _sentence_spans(text)]


def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The character spans ``(start, end)`` of :func:`split_sentences`'s sentences."""
    return _sentence_spans(text)


def split_paragraphs(text: str) -> list[str]:
    """Split a text into paragraphs: blank-line blocks, else windows of sentences.

    Blocks separated by blank (whitespace-only) lines are paragraphs when there are at least
    two of them; a block without a letter joins the block before it, as in
    :func:`split_sentences`. Single line breaks do not separate paragraphs (PDF and OCR text
    breaks lines inside them). Otherwise the text is one block of prose, and its paragraphs are
    non-overlapping windows of :data:`PARAGRAPH_SENTENCES` consecutive sentences, each taken
    verbatim from the text (so a Chinese window keeps its sentences unspaced).

    Args:
        text: any text, in any script.

    Returns:
        The paragraphs in order, stripped of surrounding whitespace, none empty.

    """
    return [text[start:end] for start, end in paragraph_spans(text)]


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """The character spans ``(start, end)`` of :func:`split_paragraphs`'s paragraphs."""
    blocks = [_strip_span(text, a, b) for a, b in _blocks(text)]
    blocks = _join_letterless(text, [(a, b) for a, b in blocks if b > a]) if blocks else []
    if len(blocks) >= 2:
        return blocks
    spans = _sentence_spans(text)
    return [
        (spans[i][0], spans[min(i + PARAGRAPH_SENTENCES, len(spans)) - 1][1])
        for i in range(0, len(spans), PARAGRAPH_SENTENCES)
    ]


def sentence_pairs(sentences: Sequence[str]) -> list[str]:
    """Join each two consecutive sentences with a space (CoverageTriple, Appendix A.4).

    Args:
        sentences: the sentences of one text, in order.

    Returns:
        ``n - 1`` pairs for ``n >= 2`` sentences; ``[sentence]`` for one; ``[]`` for none.

    """
    if len(sentences) == 1:
        return [sentences[0]]
    return [f"{first} {second}" for first, second in pairwise(sentences)]


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class Chunks:
    """Pieces of a corpus with the document each belongs to.

    Every document owns at least one chunk and a document's chunks are contiguous, so
    ``owner`` is non-decreasing and runs over ``0 .. n_docs - 1`` without gaps. Per-document
    pooling is then a segmented reduction, e.g. ``np.maximum.reduceat(sim, chunks.starts,
    axis=1)`` for MaxSim.

    Attributes:
        texts: the chunk texts, in document order (a list; a program file's chunks of its
            served documents read them from the parent on first use, see
            :func:`chunk_documents`).
        owner: the document index of each chunk, ``intp`` of length ``len(texts)``.
        n_docs: the number of documents.

    """

    texts: Sequence[str]
    owner: NDArray[np.intp]
    n_docs: int

    def __post_init__(self) -> None:
        """Check the ownership invariant (contiguous, gap-free, every document present)."""
        if self.owner.shape != (len(self.texts),):
            raise ValueError(f"owner has shape {self.owner.shape}, expected ({len(self.texts)},)")
        if self.n_docs == 0:
            if len(self.texts):
                raise ValueError("chunks without documents")
            return
        steps = np.diff(self.owner)
        if (
            len(self.texts) == 0
            or self.owner[0] != 0
            or self.owner[-1] != self.n_docs - 1
            or np.any((steps != 0) & (steps != 1))
        ):
            raise ValueError("owner must run over 0..n_docs-1, non-decreasing and without gaps")

    @property
    def starts(self) -> NDArray[np.intp]:
        """Index of each document's first chunk (length ``n_docs``), for ``reduceat``."""
        return np.searchsorted(self.owner, np.arange(self.n_docs, dtype=np.intp)).astype(np.intp)


def chunk_documents(
    doc_texts: Sequence[str],
    splitter: Callable[[str], Sequence[str]],
    *,
    max_chunks_per_doc: int | None = None,
) -> Chunks:
    """Apply a splitter to every document and record which document owns each chunk.

    A document from which the splitter yields nothing contributes its whole text, stripped
    (``""`` for an empty document), so every document owns at least one chunk.

    Args:
        doc_texts: the document texts.
        splitter: a text splitter such as :func:`split_sentences` or :func:`split_paragraphs`.
        max_chunks_per_doc: keep only the first this many chunks of each document; programs
            pass :data:`MAX_CHUNKS_PER_DOC` to bound their cost. ``None`` keeps all.

    Served documents (:class:`~embedding_ttc.programs.served_texts.ServedTexts`: a program file's
    ``ctx.doc_texts`` in the sandbox) are cut by their holder when the splitter is
    :func:`split_sentences` or :func:`split_paragraphs`: the same chunks, from its stored spans,
    their texts sent only if read (an encode of them is then served by stored row).

    Returns:
        The chunks with their owners.

    Raises:
        ValueError: if ``max_chunks_per_doc`` is smaller than 1.

    """
    if max_chunks_per_doc is not None and max_chunks_per_doc < 1:
        raise ValueError(f"max_chunks_per_doc must be at least 1, got {max_chunks_per_doc}")
    granularity = SERVED_GRANULARITIES.get(splitter)
    plain_cap = max_chunks_per_doc is None or type(max_chunks_per_doc) is int  # not a bool
    if granularity is not None and plain_cap and isinstance(doc_texts, ServedTexts):
        owner, served = doc_texts.served_chunks(granularity, max_chunks_per_doc)
        return Chunks(texts=served, owner=owner, n_docs=len(doc_texts))
    texts: list[str] = []
    counts: list[int] = []
    for doc in doc_texts:
        pieces = list(splitter(doc)) or [doc.strip()]
        if max_chunks_per_doc is not None:
            pieces = pieces[:max_chunks_per_doc]
        texts.extend(pieces)
        counts.append(len(pieces))
    owner = np.repeat(np.arange(len(counts), dtype=np.intp), counts).astype(np.intp)
    return Chunks(texts=texts, owner=owner, n_docs=len(counts))


SERVED_GRANULARITIES: dict[Callable[[str], Sequence[str]], str] = {
    split_sentences: "sentence",
    split_paragraphs: "paragraph",
}
"""The splitters whose chunks of served documents are served, by the granularity name the stored
analyses and chunk tables use (:class:`~embedding_ttc.programs.served_texts.ServedTexts`)."""
