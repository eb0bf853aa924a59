"""Tokens: the Unicode-aware tokenizer every lexical channel goes through, and word bigrams.

The paper notes that its tokenizer "matches ASCII word characters", so the lexical channels
degrade on non-Latin scripts (Appendix A, preamble); :func:`tokenize` here uses the active
tokenizer of :mod:`embedding_ttc.programs.primitives.tokenizers`, by default one that knows
each script. A text's tokens are remembered per tokenizer (:data:`TOKEN_CACHE_TEXTS` texts).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from itertools import pairwise

from embedding_ttc.programs.primitives.tokenizers import get_tokenizer, tokenizer_name


def tokenize(text: str) -> list[str]:
    """Split a text into lower-cased word tokens in any script.

    The active tokenizer decides how. The default, ``unicode``, NFKC-normalises and
    case-folds the text (so full-width ``ＡＢＣ`` is ``abc`` and ``Straße`` is
    ``strasse``), ignores invisible marks, normalises Arabic
    letters and diacritics, keeps a word of a spaced script (Latin, Cyrillic, Greek, Arabic,
    Devanagari, Hangul, ...) whole with its combining marks, and cuts runs of scripts written
    without spaces (Han, Kana, Thai, Lao, Khmer, Myanmar) into overlapping letter bigrams.
    Every lexical channel tokenises through here, so one setting
    (:mod:`embedding_ttc.programs.primitives.tokenizers`:
    :func:`~embedding_ttc.programs.primitives.tokenizers.use_tokenizer`,
    ``EMBEDDING_TTC_TOKENIZER``) switches them all.

    No stemming and no stopword list: both are language-specific, and the channels built on
    these tokens already discount common terms through IDF (BM25, rare-term IDF) or are
    ratios over the query's own terms.

    Args:
        text: any text.

    Returns:
        The tokens in text order, with repeats.

    """
    return list(cached_tokens(tokenizer_name(), text))


TOKEN_CACHE_TEXTS = 1 << 16
"""Texts whose tokens are remembered (least recently used first out): a deployed lexical
program tokenises the same candidate documents for every query."""


@functools.lru_cache(maxsize=TOKEN_CACHE_TEXTS)
def cached_tokens(tokenizer: str, text: str) -> tuple[str, ...]:
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
