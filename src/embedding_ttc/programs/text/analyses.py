"""The text analyses of many documents, in ragged numpy arrays, and their form on disk.

:class:`TextAnalyses` holds the analyses of many documents (:mod:`.doc_analysis`) part by part
(per part an ``indptr`` and a ``values`` array, rows aligned with documents,
:class:`~.ragged.Ragged`), with row access, row selection (:meth:`TextAnalyses.take`),
concatenation (:meth:`TextAnalyses.concatenate`) and :meth:`~TextAnalyses.save` /
:meth:`~TextAnalyses.load` (memory-mapped), so that a deployed index analyses its documents
once at build time and a query only gathers its candidates' rows.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.programs.primitives.chunking import Chunks, sentence_pairs
from embedding_ttc.programs.primitives.tokenizers import tokenizer_name
from embedding_ttc.programs.text.doc_analysis import (
    DocAnalysis,
    analyze_text,
    pack_bigrams,
    unpack_bigrams,
)
from embedding_ttc.programs.text.ragged import Ragged
from embedding_ttc.programs.text.vocabulary import Vocabulary

ANALYSES_SCHEMA_VERSION = 1
"""Version of the on-disk layout of :meth:`TextAnalyses.save` (``meta.json``)."""

GRANULARITIES = ("sentence", "pair", "paragraph")
"""The chunk granularities :meth:`TextAnalyses.chunks` cuts (the keys of ``channels.SPLITTERS``)."""

_META = "meta.json"
_VOCABULARY = "vocabulary.txt"
# part name -> (dtype, row width: None for 1-D values)
_PARTS: dict[str, tuple[type, int | None]] = {
    "terms": (np.int32, 2),
    "bigrams": (np.int64, None),
    "sentences": (np.int32, 2),
    "paragraphs": (np.int32, 2),
}


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
        return cls(vocabulary, **stacked_parts(parts))

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
        """The chunks ``chunk_documents`` cuts at ``granularity``, from the spans.

        (:func:`~embedding_ttc.programs.primitives.chunking.chunk_documents`.)

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


def stacked_parts(parts: Sequence[TextAnalyses]) -> dict[str, Ragged]:
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


def analyze(texts: Sequence[str], vocabulary: Vocabulary | None = None) -> TextAnalyses:
    """Analyse ``texts`` afresh (no memo) into ``vocabulary`` (default: a new one)."""
    vocabulary = vocabulary if vocabulary is not None else Vocabulary()
    return TextAnalyses.of_documents([analyze_text(t, vocabulary) for t in texts], vocabulary)
