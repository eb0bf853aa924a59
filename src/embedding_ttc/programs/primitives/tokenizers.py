"""The tokenizers of the lexical channels: a registry, and the one setting that picks one.

Every lexical channel (BM25 through ``bm25s``, bigram overlap, query-term coverage, rare-term
IDF), the text analyses an index stores and the search programs' primitives turn text into
tokens through :func:`~.lexical.tokenize`, which asks this module which tokenizer is active.

Registered tokenizers (:data:`TOKENIZERS`):

* ``unicode`` (the default): NFKC and case folding; bidi controls, zero-width characters and
  the soft hyphen removed (so a ZWNJ inside a Persian or Arabic word joins it); Arabic
  normalised as Lucene's ``ArabicNormalizer`` does (tatweel and harakat removed, alef variants
  to bare alef, alef maqsura to yeh, teh marbuta to heh), plus the superscript alef, alef wasla
  and the Quranic annotation marks; words of spaced scripts as runs of letters, digits and
  marks; scripts written without spaces (Han, Kana, Thai, Lao, Khmer, Myanmar) as overlapping
  character bigrams, a single-letter run as that letter, as Lucene's ``CJKAnalyzer`` does
  (``CJKBigramFilter``). The choice of bigrams and its measurement are in
  ``benchmarks/segmenters.py`` and ``docs/multilingual.md``.
* ``letters``: the tokenizer before ``unicode``: the same words, but one token per letter of
  an unspaced script, no Arabic normalisation, and invisible characters split words.
* ``ascii``: the paper's tokenizer: runs of lower-cased ASCII letters and digits, so text in
  another script yields no token (the "before" column of the multilingual study).

On ASCII text the three give the same tokens (the ``[a-z0-9]+`` runs of the lower-cased
text), so English scores do not depend on the choice.

The active tokenizer is, in order: the innermost :func:`use_tokenizer` block, else the
:data:`TOKENIZER_ENV` environment variable, else :data:`DEFAULT_TOKENIZER`. The environment
variable is what child processes (the sandbox, Ray and server workers) inherit; the sandbox
passes the parent's active tokenizer on explicitly (``program_files/sandbox/limits.py``).
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise

import regex

from embedding_ttc.registry import Registry

__all__ = [
    "DEFAULT_TOKENIZER",
    "TOKENIZERS",
    "TOKENIZER_ENV",
    "Tokenizer",
    "get_tokenizer",
    "select_tokenizer",
    "tokenizer_name",
    "use_tokenizer",
]

TOKENIZER_ENV = "EMBEDDING_TTC_TOKENIZER"
"""Environment variable naming the active tokenizer when no :func:`use_tokenizer` block is."""

DEFAULT_TOKENIZER = "unicode"
"""The tokenizer used when nothing else is chosen."""


@dataclass(frozen=True)
class Tokenizer:
    """A named text-to-tokens function.

    Attributes:
        name: its registry name (recorded with results and in an index's manifest).
        summary: one line on what it does.
        split: the function: text to its tokens, in order, repeats kept; a token is never
            empty and holds no whitespace.

    """

    name: str
    summary: str
    split: Callable[[str], tuple[str, ...]]


TOKENIZERS: Registry[Tokenizer] = Registry("tokenizer")
"""Every tokenizer by name."""


def get_tokenizer(name: str) -> Tokenizer:
    """The tokenizer registered as ``name`` (an unknown name suggests the closest)."""
    return TOKENIZERS.get(name)


# --- the active tokenizer ----------------------------------------------------------------------

_lock = threading.Lock()
_overrides: list[str] = []  # the use_tokenizer blocks, innermost last


# os.environ.get of an absent variable raises and catches a KeyError inside, about 3 us, which
# tripled the cost of a cached tokenize call; CPython's os.environ keeps its variables in the
# dict ``_data`` (encoded keys), read directly when it is there.
_ENV_DATA = getattr(os.environ, "_data", None)
_ENV_KEY = os.environ.encodekey(TOKENIZER_ENV) if isinstance(_ENV_DATA, dict) else None


def _environment_value() -> str | None:
    """The value of :data:`TOKENIZER_ENV` in ``os.environ`` (``None`` when unset)."""
    if _ENV_KEY is None:
        return os.environ.get(TOKENIZER_ENV)
    raw = _ENV_DATA.get(_ENV_KEY)  # type: ignore[union-attr]
    return None if raw is None else os.environ.decodevalue(raw)


_checked: set[str] = set()  # names from the environment found registered (a fast path)


def tokenizer_name() -> str:
    """The name of the active tokenizer (checked: an unknown name raises with suggestions).

    Called for every text a lexical channel tokenises, cached or not, so it is kept to a
    dictionary lookup or two: use_tokenizer checks its name on entry, and a name read from the
    environment is checked once.
    """
    if _overrides:
        return _overrides[-1]
    name = _environment_value() or DEFAULT_TOKENIZER
    if name not in _checked:
        _checked.add(get_tokenizer(name).name)  # raises UnknownNameError naming the closest
    return name


@contextmanager
def use_tokenizer(name: str) -> Iterator[Tokenizer]:
    """Make ``name`` the active tokenizer of the process inside the block.

    Process-wide rather than per thread, like the environment variable it overrides: a
    program's helper threads tokenise as the caller does.
    """
    tokenizer = get_tokenizer(name)
    with _lock:
        _overrides.append(name)
    try:
        yield tokenizer
    finally:
        with _lock:
            _overrides.reverse()
            _overrides.remove(name)  # the innermost block of that name
            _overrides.reverse()


def select_tokenizer(name: str) -> Tokenizer:
    """Make ``name`` the tokenizer of this process and of the processes it starts.

    Sets :data:`TOKENIZER_ENV`, which child processes inherit (what ``--tokenizer`` does).
    """
    tokenizer = get_tokenizer(name)
    os.environ[TOKENIZER_ENV] = name
    return tokenizer


# --- the tokenizers ----------------------------------------------------------------------------

_ASCII_WORD = re.compile(r"[a-z0-9]+")

# Scripts written without spaces between words. By Script, not Script_Extensions (which would
# also claim shared Latin marks such as U+0323), plus the Japanese letters of the Common script:
# 〆, the vertical kana repeat marks and the prolonged sound mark ー.
_UNSPACED = (
    r"\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}"
    r"\u3006\u3031-\u3035\u30fc"
)
_LETTERS_TOKEN = regex.compile(
    rf"(?V1)[[\p{{L}}\p{{N}}]&&[{_UNSPACED}]]\p{{M}}*"  # one letter of an unspaced script
    rf"|[[\p{{L}}\p{{N}}]--[{_UNSPACED}]][[\p{{L}}\p{{N}}\p{{M}}]--[{_UNSPACED}]]*"  # a word
)
# The same tokens with runs of unspaced letters kept whole (``unicode`` cuts them in bigrams).
_RUN_OR_WORD = regex.compile(
    rf"(?V1)(?:[[\p{{L}}\p{{N}}]&&[{_UNSPACED}]]\p{{M}}*)+"  # a run of unspaced letters
    rf"|[[\p{{L}}\p{{N}}]--[{_UNSPACED}]][[\p{{L}}\p{{N}}\p{{M}}]--[{_UNSPACED}]]*"  # a word
)
_UNSPACED_LETTER = regex.compile(rf"(?V1)[[\p{{L}}\p{{N}}]&&[{_UNSPACED}]]\p{{M}}*")
# Faster patterns that give the same tokens when they apply (the set operations above halve
# the speed): words of any script when no unspaced-script character can occur.
_WORD = regex.compile(r"[\p{L}\p{N}][\p{L}\p{N}\p{M}]*")
# Unicode blocks that hold every letter, digit and mark of _UNSPACED (a superset, checked by
# a test): a text with none of them takes the _WORD path.
_MAY_BE_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3005-\u30ff\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua9e0-\ua9ff\uaa60-\uaa7f\uf900-\ufaff\uff66-\uff9f"
    "\U000116d0-\U000116ff\U00016fe0-\U00016fff\U0001aff0-\U0001b16f\U00020000-\U0003ffff]"
)

#: Characters that are invisible in running text and must neither split nor appear in a
#: token: zero-width space, non-joiner and joiner, the bidi marks and embeddings (LRM, RLM,
#: LRE..RLO, the isolates), the Arabic letter mark, the word joiner, the byte-order mark
#: (zero-width no-break space) and the soft hyphen.
IGNORABLE = (
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u2066\u2067\u2068\u2069\u061c\u2060\ufeff\u00ad"
)
# Arabic: tatweel, harakat (fathatan .. sukun and the further marks to U+065F), superscript
# alef and the Quranic annotation signs are removed; the alef forms become bare alef, alef
# maqsura yeh, teh marbuta heh (Lucene's ArabicNormalizer, with alef wasla added).
_ARABIC_MARKS = (
    "\u0640"
    + "".join(map(chr, range(0x064B, 0x0660)))
    + "\u0670"
    + "".join(map(chr, range(0x06D6, 0x06DD)))
    + "".join(map(chr, range(0x06DF, 0x06E9)))
    + "".join(map(chr, range(0x06EA, 0x06EE)))
)
_UNICODE_TABLE: dict[int, str | None] = {ord(c): None for c in IGNORABLE + _ARABIC_MARKS}
_UNICODE_TABLE.update(
    {
        0x0622: "\u0627",  # alef with madda above
        0x0623: "\u0627",  # alef with hamza above
        0x0625: "\u0627",  # alef with hamza below
        0x0671: "\u0627",  # alef wasla
        0x0649: "\u064a",  # alef maqsura -> yeh
        0x0629: "\u0647",  # teh marbuta -> heh
    }
)
_NEEDS_TABLE = re.compile(f"[{IGNORABLE}\u0600-\u06ff]")


def _fold(text: str) -> str:
    """NFKC, then case folding, then NFKC again (folding can leave a text unnormalised)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def ascii_tokens(text: str) -> tuple[str, ...]:
    """The paper's tokens: runs of ASCII letters and digits of the lower-cased text."""
    return tuple(_ASCII_WORD.findall(text.lower()))


def letters_tokens(text: str) -> tuple[str, ...]:
    """Words of spaced scripts; each letter of an unspaced script a token of its own."""
    if text.isascii():  # NFKC and case folding of ASCII are lower-casing
        return ascii_tokens(text)
    folded = _fold(text)
    pattern = _WORD if _MAY_BE_UNSPACED.search(folded) is None else _LETTERS_TOKEN
    return tuple(pattern.findall(folded))


def _bigrams_of_run(run: str) -> list[str]:
    """A run of unspaced letters as its overlapping letter bigrams (one letter: itself)."""
    letters: list[str] = _UNSPACED_LETTER.findall(run)
    if len(letters) == 1:
        return letters
    return list(map("".join, pairwise(letters)))


def unicode_tokens(text: str) -> tuple[str, ...]:
    """The default tokens (module docstring): normalised words and CJK-style bigrams."""
    if text.isascii():
        return ascii_tokens(text)
    folded = _fold(text)
    if _NEEDS_TABLE.search(folded) is not None:
        folded = _fold(folded.translate(_UNICODE_TABLE))
    if _MAY_BE_UNSPACED.search(folded) is None:
        return tuple(_WORD.findall(folded))
    out: list[str] = []
    for piece in _RUN_OR_WORD.findall(folded):
        if _UNSPACED_LETTER.match(piece) is None:  # a word
            out.append(piece)
        else:
            out.extend(_bigrams_of_run(piece))
    return tuple(out)


TOKENIZERS.register(
    "unicode",
    Tokenizer(
        "unicode",
        "NFKC + casefold, Arabic normalised, invisible marks ignored, CJK/Thai letter bigrams",
        unicode_tokens,
    ),
)
TOKENIZERS.register(
    "letters",
    Tokenizer(
        "letters", "NFKC + casefold words; one token per letter of unspaced scripts", letters_tokens
    ),
)
TOKENIZERS.register(
    "ascii",
    Tokenizer("ascii", "the paper's: lower-cased ASCII letters and digits only", ascii_tokens),
)
