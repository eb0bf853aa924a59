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

A program finds its documents' analyses through its context (:func:`analyses_of`):
``ctx.deployed.text_analyses`` when the caller holds them (:class:`ColumnAnalyses`), else computed
from ``ctx.doc_texts`` by the process's :class:`TextAnalyzer`, which remembers each text's analysis,
so that an evaluation does not re-tokenise a document for every batch of queries.
"""

from __future__ import annotations

import functools
import json
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.primitives.chunking import (
    Chunks,
    paragraph_spans,
    sentence_pairs,
    sentence_spans,
)
from embedding_ttc.programs.primitives.lexical import tokenize
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name

ANALYSES_SCHEMA_VERSION = 1
"""Version of the on-disk layout of :meth:`TextAnalyses.save` (``meta.json``)."""

GRANULARITIES = ("sentence", "pair", "paragraph")
"""The chunk granularities :meth:`TextAnalyses.chunks` cuts (the keys of ``channels.SPLITTERS``)."""

ANALYSIS_CACHE_TEXTS = 1 << 16
"""Texts whose analyses a :class:`TextAnalyzer` remembers; past this it starts afresh."""

_BIGRAM_SHIFT = 32  # token ids stay below 2**31, so a packed pair fits an int64
_LOW_BITS = (1 << _BIGRAM_SHIFT) - 1
_META = "meta.json"
_VOCABULARY = "vocabulary.txt"
# part name -> (dtype, row width: None for 1-D values)
_PARTS: dict[str, tuple[type, int | None]] = {
    "terms": (np.int32, 2),
    "bigrams": (np.int64, None),
    "sentences": (np.int32, 2),
    "paragraphs": (np.int32, 2),
}


class Vocabulary:
    """Token strings and their ids, append-only; optionally extending a base vocabulary.

    An extension (``base=``) gives every token of its base the base's id and numbers new
    tokens after them, without copying the base: documents the base never saw (a deployed
    index's live documents, the documents an addition brings) are analysed into it.
    """

    def __init__(self, tokens: Iterable[str] = (), base: Vocabulary | None = None) -> None:
        self._base = base
        self._offset = len(base) if base is not None else 0
        self._tokens: list[str] = []
        self._ids: dict[str, int] = {}
        if base is None:
            self._tokens = list(tokens)
            self._ids = {token: i for i, token in enumerate(self._tokens)}
            if len(self._ids) != len(self._tokens):
                raise ValueError("a vocabulary holds each token once")
        else:
            self.add(list(tokens))

    def __len__(self) -> int:
        return self._offset + len(self._tokens)

    def id(self, token: str) -> int | None:
        """The id of ``token``, or ``None`` if it has none."""
        if self._base is not None:
            found = self._base.id(token)
            if found is not None and found < self._offset:
                return found
        return self._ids.get(token)

    def token(self, token_id: int) -> str:
        """The token of ``token_id``."""
        if token_id < self._offset:
            assert self._base is not None
            return self._base.token(token_id)
        return self._tokens[token_id - self._offset]

    @property
    def tokens(self) -> list[str]:
        """Every token, in id order."""
        head = self._base.tokens[: self._offset] if self._base is not None else []
        return [*head, *self._tokens]

    def add(self, tokens: Sequence[str]) -> NDArray[np.int64]:
        """The id of each token, new tokens appended."""
        ids = self._ids
        if self._base is None:  # one dict: the lookups run in C
            for token in [t for t in dict.fromkeys(tokens) if t not in ids]:
                self._append(token)
            return np.fromiter(map(ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        out = np.empty(len(tokens), dtype=np.int64)
        for i, token in enumerate(tokens):
            found = self.id(token)
            out[i] = self._append(token) if found is None else found
        return out

    def _append(self, token: str) -> int:
        new = len(self)
        if new >= 1 << 31:
            raise ValueError("a vocabulary holds fewer than 2**31 tokens")
        self._ids[token] = new
        self._tokens.append(token)
        return new

    def lookup(self, tokens: Sequence[str]) -> NDArray[np.int64]:
        """The id of each token, ``-1`` for a token it does not hold."""
        ids = [self.id(token) for token in tokens]
        return np.array([-1 if i is None else i for i in ids], dtype=np.int64)


def ragged_positions(starts: NDArray[np.int64], lengths: NDArray[np.int64]) -> NDArray[np.int64]:
    """``starts[i] .. starts[i] + lengths[i] - 1`` for every ``i``, concatenated."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def take_rows(values: NDArray[Any], positions: NDArray[np.integer]) -> NDArray[Any]:
    """``values[positions]`` (rows of a 1-D or 2-D array) as a new plain array.

    ``np.take`` on the array under a memory map, skipping the subclass's fancy indexing; the
    rows of a C-contiguous 2-D array of 1, 2, 4 or 8 bytes a row (a pair of int32) are moved
    as one unsigned integer each, about 6 times faster than taking rows of two items.
    """
    array = np.asarray(values)
    if array.ndim == 2 and array.flags.c_contiguous:
        width = array.itemsize * array.shape[1]
        if width in (1, 2, 4, 8):
            words = array.view(np.dtype(f"u{width}")).reshape(-1)
            picked: NDArray[Any] = np.take(words, positions).view(array.dtype)
            return picked.reshape(-1, array.shape[1])
    return np.take(array, positions, axis=0)


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class Ragged:
    """Rows of varying length in one array: row ``i`` is ``values[indptr[i]:indptr[i + 1]]``."""

    indptr: NDArray[np.int64]
    values: NDArray[Any]

    @classmethod
    def of(cls, rows: Sequence[NDArray[Any]], dtype: type, width: int | None) -> Ragged:
        """Stack ``rows`` (each ``(n_i,)`` or ``(n_i, width)``)."""
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=indptr[1:])
        shape = (-1,) if width is None else (-1, width)
        if not rows:
            return cls(indptr, np.empty((0,) if width is None else (0, width), dtype=dtype))
        values: NDArray[Any] = np.concatenate(rows).astype(dtype, copy=False)
        return cls(indptr, values.reshape(shape))

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> NDArray[Any]:
        """Row ``i``."""
        return self.values[int(self.indptr[i]) : int(self.indptr[i + 1])]

    def owners(self) -> NDArray[np.intp]:
        """The row of each value."""
        return np.repeat(np.arange(len(self), dtype=np.intp), np.diff(self.indptr))

    def take(self, rows: NDArray[np.intp]) -> Ragged:
        """The given rows, in the order given (a new array, not a view)."""
        rows = np.asarray(rows, dtype=np.intp)
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        return Ragged(indptr, take_rows(self.values, ragged_positions(starts, lengths)))

    @classmethod
    def concatenate(cls, parts: Sequence[Ragged]) -> Ragged:
        """The rows of ``parts``, one after the other."""
        offsets = np.cumsum([0, *(int(p.indptr[-1]) for p in parts[:-1])])
        tails = [p.indptr[1:] + o for p, o in zip(parts, offsets, strict=True)]
        indptr = np.concatenate([np.zeros(1, np.int64), *tails])
        return cls(indptr.astype(np.int64), np.concatenate([np.asarray(p.values) for p in parts]))


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class DocAnalysis:
    """The analysis of one text (ids into the vocabulary it was analysed with).

    Attributes:
        terms: ``(n, 2)``: each distinct token id and its count, in order of first occurrence.
        bigrams: each distinct bigram (``first << 32 | second``), in order of first occurrence.
        sentences: ``(m, 2)`` character spans of :func:`~.chunking.split_sentences`.
        paragraphs: ``(p, 2)`` character spans of :func:`~.chunking.split_paragraphs`.

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


@dataclass(frozen=True, eq=False)  # array fields have no boolean equality
class TextAnalyses:
    """The analyses of many documents, stored part by part as :class:`Ragged` rows.

    Attributes:
        vocabulary: the token ids' vocabulary.
        terms: per document, ``(token id, count)`` rows (``int32``), first occurrence first.
        bigrams: per document, distinct bigram keys (``int64``), first occurrence first.
        sentences: per document, sentence spans ``(start, end)`` (``int32``).
        paragraphs: per document, paragraph spans ``(start, end)`` (``int32``).

    """

    vocabulary: Vocabulary
    terms: Ragged
    bigrams: Ragged
    sentences: Ragged
    paragraphs: Ragged

    def __post_init__(self) -> None:
        """Check that every part has one row per document."""
        n = len(self.terms)
        if any(len(getattr(self, part)) != n for part in _PARTS):
            raise ValueError("every part of a text analysis has one row per document")

    @classmethod
    def of_documents(cls, docs: Sequence[DocAnalysis], vocabulary: Vocabulary) -> TextAnalyses:
        """Stack single-document analyses made with ``vocabulary``."""
        parts = {
            part: Ragged.of([getattr(d, part) for d in docs], dtype, width)
            for part, (dtype, width) in _PARTS.items()
        }
        return cls(vocabulary, **parts)

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return len(self.terms)

    @functools.cached_property
    def lengths(self) -> NDArray[np.int64]:
        """Tokens per document, repeats counted (BM25's document length)."""
        cumulative = np.zeros(len(self.terms.values) + 1, dtype=np.int64)
        np.cumsum(self.terms.values[:, 1], out=cumulative[1:])
        indptr = self.terms.indptr
        lengths: NDArray[np.int64] = cumulative[indptr[1:]] - cumulative[indptr[:-1]]
        return lengths

    def row(self, i: int) -> DocAnalysis:
        """The analysis of document ``i``."""
        return DocAnalysis(**{part: getattr(self, part).row(i) for part in _PARTS})

    def take(self, rows: NDArray[np.intp]) -> TextAnalyses:
        """The analyses of the documents ``rows``, in that order (same vocabulary)."""
        return TextAnalyses(
            self.vocabulary, **{part: getattr(self, part).take(rows) for part in _PARTS}
        )

    @classmethod
    def concatenate(cls, parts: Sequence[TextAnalyses]) -> TextAnalyses:
        """The documents of ``parts`` in order, over one vocabulary.

        Parts sharing the first part's vocabulary are stacked as they are; the token ids of
        any other are mapped into an extension of it (which costs one lookup per token of
        that part's vocabulary).
        """
        if not parts:
            raise ValueError("concatenate needs at least one text analysis")
        first = parts[0].vocabulary
        vocabulary = first
        if any(p.vocabulary is not first for p in parts):
            vocabulary = Vocabulary(base=first)
            parts = [p if p.vocabulary is first else p._mapped(vocabulary) for p in parts]
        return cls(vocabulary, **_stacked(parts))

    def _mapped(self, vocabulary: Vocabulary) -> TextAnalyses:
        """These analyses with token ids of ``vocabulary`` (tokens added to it as needed)."""
        ids = vocabulary.add(self.vocabulary.tokens)
        terms = np.array(self.terms.values)
        terms[:, 0] = ids[terms[:, 0]]
        first, second = unpack_bigrams(self.bigrams.values)
        bigrams = pack_bigrams(ids[first], ids[second])
        return TextAnalyses(
            vocabulary,
            Ragged(self.terms.indptr, terms),
            Ragged(self.bigrams.indptr, bigrams),
            self.sentences,
            self.paragraphs,
        )

    def chunks(self, doc_texts: Sequence[str], granularity: str, max_per_doc: int | None) -> Chunks:
        """The chunks :func:`~.chunking.chunk_documents` cuts at ``granularity``, from the spans.

        Args:
            doc_texts: the documents' texts (those analysed, in the same order).
            granularity: ``sentence``, ``pair`` (consecutive sentences joined by a space) or
                ``paragraph``.
            max_per_doc: keep each document's first this many chunks (``None``: all).

        Returns:
            The same chunks and owners as ``chunk_documents`` with the granularity's splitter.

        Raises:
            ValueError: an unknown granularity, or texts not aligned with the analyses.

        """
        if granularity not in GRANULARITIES:
            raise ValueError(f"unknown granularity {granularity!r}; one of {GRANULARITIES}")
        if len(doc_texts) != self.n_docs:
            raise ValueError(f"{len(doc_texts)} texts for {self.n_docs} analysed documents")
        spans = self.paragraphs if granularity == "paragraph" else self.sentences
        keep = None if max_per_doc is None else max_per_doc + (granularity == "pair")
        starts = spans.indptr.tolist()
        bounds = spans.values.tolist()
        texts: list[str] = []
        counts: list[int] = []
        for i, doc in enumerate(doc_texts):
            stop = starts[i + 1] if keep is None else min(starts[i + 1], starts[i] + keep)
            pieces = [doc[a:b] for a, b in bounds[starts[i] : stop]]
            if granularity == "pair":
                pieces = sentence_pairs(pieces)
            pieces = pieces[:max_per_doc] if pieces else [doc.strip()]
            texts.extend(pieces)
            counts.append(len(pieces))
        owner = np.repeat(np.arange(len(counts), dtype=np.intp), counts).astype(np.intp)
        return Chunks(texts=texts, owner=owner, n_docs=len(counts))

    # --- on disk -----------------------------------------------------------------------------

    def save(self, directory: Path | str) -> None:
        """Write the analyses into ``directory`` (created): one ``.npy`` per array, the vocabulary.

        Each file is written atomically; ``meta.json`` (schema version, counts) last.
        """
        from embedding_ttc.durable import save_array, write_atomic

        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        for part in _PARTS:
            ragged: Ragged = getattr(self, part)
            save_array(root / f"{part}.indptr.npy", np.asarray(ragged.indptr, dtype=np.int64))
            save_array(root / f"{part}.values.npy", np.asarray(ragged.values))
        # Tokens hold letters, digits and marks only: no line break can occur in one.
        write_atomic(root / _VOCABULARY, "\n".join(self.vocabulary.tokens))
        meta = {
            "schema_version": ANALYSES_SCHEMA_VERSION,
            "documents": self.n_docs,
            "vocabulary": len(self.vocabulary),
            # The tokenizer active when saving, the one they were analysed with (the index
            # manifest records it too and refuses to serve under another).
            "tokenizer": tokenizer_name(),
        }
        write_atomic(root / _META, json.dumps(meta, indent=2) + "\n")

    @classmethod
    def load(cls, directory: Path | str, mmap: bool = True) -> TextAnalyses:
        """Read analyses written by :meth:`save` (arrays memory-mapped when ``mmap``).

        Raises:
            ValueError: a missing or malformed file, or another schema version (the message
                names the file).

        """
        root = Path(directory)
        try:
            meta = json.loads((root / _META).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"text analyses {root / _META} are unreadable ({exc})") from None
        expected = {"schema_version", "documents", "vocabulary"}  # "tokenizer" added later
        if not isinstance(meta, dict) or not expected <= set(meta) <= {*expected, "tokenizer"}:
            raise ValueError(f"text analyses {root / _META} has unexpected fields")
        if meta["schema_version"] != ANALYSES_SCHEMA_VERSION:
            raise ValueError(
                f"text analyses {root} have schema version {meta['schema_version']}, "
                f"not {ANALYSES_SCHEMA_VERSION}"
            )
        text = (root / _VOCABULARY).read_text(encoding="utf-8")
        tokens = text.split("\n") if text else []
        if len(tokens) != meta["vocabulary"]:
            raise ValueError(
                f"text analyses {root / _VOCABULARY}: {len(tokens)} tokens, not "
                f"{meta['vocabulary']}"
            )
        parts = {}
        for part, (dtype, width) in _PARTS.items():
            indptr = _load(root / f"{part}.indptr.npy", np.int64, mmap)
            values = _load(root / f"{part}.values.npy", dtype, mmap)
            shape_ok = values.ndim == (1 if width is None else 2) and (
                width is None or values.shape[1] == width
            )
            if len(indptr) != meta["documents"] + 1 or not shape_ok or indptr[-1] != len(values):
                raise ValueError(f"text analyses {root / part}.*.npy do not fit together")
            parts[part] = Ragged(indptr, values)
        return cls(Vocabulary(tokens), **parts)


def _stacked(parts: Sequence[TextAnalyses]) -> dict[str, Ragged]:
    """Each part of ``parts`` (ids of one vocabulary) stacked, by part name."""
    return {part: Ragged.concatenate([getattr(p, part) for p in parts]) for part in _PARTS}


def _load(path: Path, dtype: type, mmap: bool) -> NDArray[Any]:
    try:
        array: NDArray[Any] = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"text analyses {path} is not a readable array ({exc})") from None
    if array.dtype != np.dtype(dtype):
        raise ValueError(f"text analyses {path} holds {array.dtype}, not {np.dtype(dtype)}")
    return array


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


def analyze(texts: Sequence[str], vocabulary: Vocabulary | None = None) -> TextAnalyses:
    """Analyse ``texts`` afresh (no memo) into ``vocabulary`` (default: a new one)."""
    vocabulary = vocabulary if vocabulary is not None else Vocabulary()
    return TextAnalyses.of_documents([analyze_text(t, vocabulary) for t in texts], vocabulary)


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
                held = TextAnalyses(live.vocabulary, **_stacked([held, live]))
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
        return TextAnalyses(self.vocabulary, **_stacked(pieces)).take(back)


def analyses_of(ctx: Any) -> TextAnalyses:
    """The analyses of a program call's documents: the context's, else the live analyzer's.

    Raises:
        ValueError: the context's analyses are not one per document.

    """
    # DeployedInputs.of(ctx), written out: programs.base imports this module's types.
    deployed = getattr(ctx, "deployed", None)  # a sandboxed program's context has none
    source = None if deployed is None else deployed.text_analyses
    if source is None:
        return LIVE_ANALYZER.analyses(ctx.doc_texts)
    analyses: TextAnalyses = source.analyses()
    if analyses.n_docs != len(ctx.doc_texts):
        raise ValueError(
            f"the context's text analyses hold {analyses.n_docs} documents, "
            f"not its {len(ctx.doc_texts)}"
        )
    return analyses
