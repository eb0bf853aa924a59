"""The haystack: real texts cut into word windows, and a fact inserted at a depth."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence

from embedding_ttc.tasks.generated.draw import Draw

_WORD = re.compile(r"\S+")
_SENTENCE_END = (".", "?", "!")


class Haystack:
    """The haystack texts, cut into word windows.

    A window is a run of consecutive words from one text, starting at a line start where the
    text allows. When no text is long enough, the texts are joined and repeated so that short
    haystacks (tests, tiny inputs) still give windows of any length.
    """

    def __init__(self, texts: Sequence[str], max_words: int) -> None:
        self._texts = [t for t in texts if t.strip()]
        if not self._texts:
            raise ValueError("the haystack has no words")
        self._counts = [len(t.split()) for t in self._texts]
        self._parsed: dict[int, tuple[list[tuple[int, int]], list[int]]] = {}
        self._stream_words = 0
        if max(self._counts) < max_words:
            joined = "\n".join(self._texts)
            self._stream_words = len(joined.split())
            repeats = -(-max_words // self._stream_words) + 1
            self._texts.append("\n".join([joined] * repeats))
            self._counts.append(-1)  # never eligible as an ordinary text

    def _parse(self, index: int) -> tuple[list[tuple[int, int]], list[int]]:
        """Word spans of text ``index`` and the indices of words that begin a line."""
        if index not in self._parsed:
            text = self._texts[index]
            spans = [m.span() for m in _WORD.finditer(text)]
            line_starts = [
                i
                for i in range(len(spans))
                if i == 0 or "\n" in text[spans[i - 1][1] : spans[i][0]]
            ]
            self._parsed[index] = (spans, line_starts)
        return self._parsed[index]

    def window(self, draw: Draw, n_words: int) -> str:
        """Draw ``n_words`` consecutive words (original whitespace kept)."""
        eligible = [i for i, c in enumerate(self._counts) if c >= n_words]
        if eligible:
            index = draw.choice(eligible)
            last_start = self._counts[index] - n_words
        else:  # the joined, repeated stream: start anywhere in its first copy
            index = len(self._texts) - 1
            last_start = self._stream_words - 1
        spans, line_starts = self._parse(index)
        n_starts = bisect.bisect_right(line_starts, last_start)
        start = line_starts[draw.below(n_starts)] if n_starts else draw.below(last_start + 1)
        text = self._texts[index]
        return text[spans[start][0] : spans[start + n_words - 1][1]]


def first_words(text: str, n_words: int) -> str:
    """Return the first ``n_words`` words of ``text`` (original whitespace kept)."""
    if n_words == 0:
        return ""
    ends = [m.end() for m in itertools.islice(_WORD.finditer(text), n_words)]
    return text[: ends[-1]]


def insert(window: str, sentence: str, depth: float) -> tuple[str, float]:
    """Insert ``sentence`` on its own line at the boundary nearest to ``depth`` (0..1).

    Boundaries are line breaks and sentence ends, as Needle-in-a-Haystack backs up to a sentence
    end; the window's start and end always count. Returns the text and the realised depth.
    """
    spans = [m.span() for m in _WORD.finditer(window)]
    n = len(spans)
    if n == 0:
        return sentence, 0.0
    candidates = [0, n]
    for b in range(1, n):
        gap = window[spans[b - 1][1] : spans[b][0]]
        if "\n" in gap or window[spans[b - 1][1] - 1] in _SENTENCE_END:
            candidates.append(b)
    target = depth * n
    b = min(sorted(candidates), key=lambda c: abs(c - target))
    if b == 0:
        return f"{sentence}\n{window}", 0.0
    if b == n:
        return f"{window}\n{sentence}", 1.0
    before, after = window[: spans[b - 1][1]], window[spans[b][0] :]
    return f"{before}\n{sentence}\n{after}", b / n
