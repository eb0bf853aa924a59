"""The program interface of the paper (§3.1): ``P(Q, D, S, ctx) -> S'``.

``Q`` (|Q|×d) and ``D`` (|D|×d) are L2-normalised query and document embeddings from the frozen
encoder, ``S = Q Dᵀ`` the cosine matrix, and ``ctx`` a :class:`Context` with the metered
``encode_fn``, the raw texts and ids. A program returns a *new* finite float matrix of shape
|Q|×|D|; it is deterministic and never mutates its inputs. Nothing in ``ctx`` identifies the
task, so a program cannot branch on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.encoders.base import Embeddings

if TYPE_CHECKING:  # from its own module: analysis_sources reads DeployedInputs from here
    from embedding_ttc.programs.text.analyses import TextAnalyses

Matrix = NDArray[np.float32]


class EncodeFn(Protocol):
    """The metered encoder a program may call: one text encoded is one unit of cost."""

    def __call__(
        self,
        texts: Sequence[str],
        view: str = ...,
        dim: int | None = None,
        max_length: int | None = None,
    ) -> Embeddings:
        """Encode ``texts`` under ``view`` (default ``retrieval.query``)."""
        ...


class TextAnalysisSource(Protocol):
    """Where a program finds the query-independent text analyses of its documents.

    A deployed index computes them at build time and hands its program the rows of the call's
    columns (:class:`~embedding_ttc.programs.primitives.text_analysis.ColumnAnalyses`).
    """

    def analyses(self) -> TextAnalyses:
        """The analyses of ``ctx.doc_texts``, one per column, in column order."""
        ...


class StoredEmbeddingSource(Protocol):
    """Where a program finds its documents' index-time embeddings by row, no text keyed.

    A deployed index knows, per document, the store rows of its index-time encodes (its
    sentences, sentence pairs and paragraphs, or the document under another view: its chunk
    tables, written at build time), so it hands its program those of the call's columns by
    index arithmetic (:class:`~embedding_ttc.deploy.chunk_rows.ColumnEmbeddings`).
    """

    def embeddings(
        self, unit: str, view: str, max_length: int | None, max_per_doc: int | None
    ) -> tuple[NDArray[np.intp], Embeddings] | None:
        """The owner (column) and embedding of each text of an index-time encode, or ``None``.

        ``unit`` is ``document`` (each column's text: one per column) or a granularity of
        :data:`~embedding_ttc.programs.primitives.channels.SPLITTERS`, whose texts are those
        :func:`~embedding_ttc.programs.primitives.chunking.chunk_documents` cuts from
        ``ctx.doc_texts``, the first ``max_per_doc`` of each document; encoded under ``view``
        at ``max_length`` tokens. In column order; ``None`` when the index does not store them.
        """
        ...


@dataclass(frozen=True)
class DeployedInputs:
    """What a deployed index hands its program beyond what every program may use.

    Only :class:`~embedding_ttc.deploy.reranker.Reranker` sets ``ctx.deployed``; the
    evaluation path, the search's sandbox and the transfer matrix leave it at ``None``. Each
    field only saves work: a program gives the same scores with it as without it, so a library
    program reads it and a program file never sees it (the static checks reject it).

    Attributes:
        scored_rows: when set, only the first ``scored_rows`` rows of the output are used. The
            rows after them are reference queries, present only for statistics a program takes
            over the batch of queries (a deployed query alone is scored with the index's
            reference sample). A program may skip their per-row work and leave them at 0, as
            long as the first rows are those the whole call would give; ``None``: every row.
        text_analyses: when set, the documents' text analyses (tokens, bigrams, sentence and
            paragraph spans), computed ahead of the call; programs that use them compute
            them from ``doc_texts`` otherwise
            (:func:`~embedding_ttc.programs.primitives.text_analysis.analyses_of`), with the
            same values.
        stored_embeddings: when set, the documents' index-time embeddings by stored row (a
            deployed index's); programs encode them from ``doc_texts`` otherwise
            (:func:`~embedding_ttc.programs.primitives.channels.encode_granularity` and
            :func:`~embedding_ttc.programs.primitives.channels.encode_documents`), with the
            same values.

    """

    scored_rows: int | None = None
    text_analyses: TextAnalysisSource | None = None
    stored_embeddings: StoredEmbeddingSource | None = None

    @staticmethod
    def of(ctx: object) -> DeployedInputs:
        """``ctx.deployed``, or an empty record when it has none.

        Empty for the evaluation path's context and a sandboxed program's (whose
        ``deployed`` is ``None``), and for a context-like object without the attribute.
        """
        deployed = getattr(ctx, "deployed", None)
        return deployed if deployed is not None else _NOT_DEPLOYED


_NOT_DEPLOYED = DeployedInputs()


@contextmanager
def _no_scope() -> Iterator[None]:
    yield


@dataclass(frozen=True)
class Context:
    """What a program may use besides ``Q``, ``D`` and ``S``.

    Every field but ``deployed`` is what every program may use, wherever it runs (evaluated,
    searched in the sandbox, deployed); ``deployed`` is what a deployed index adds.

    Attributes:
        encode_fn: the metered frozen encoder, ``encode_fn(texts, view, dim, max_length)``.
            Calls count as query-time work unless made inside :meth:`index_time`.
        query_texts: raw query texts, aligned with the rows of ``S``.
        doc_texts: raw document texts (title and text joined), aligned with the columns.
        query_ids: query identifiers.
        doc_ids: document identifiers.
        candidates: for pool tasks, per query, the column indices it ranks (programs that use
            the ranking, such as feedback, must look only at these); ``None`` when every
            query ranks the whole corpus.
        views: the encoder's view names with their realisations described, and whether they
            collapse (a program may skip a view that is identical to another).
        index_time: a context manager; encodes inside it are document-side, amortisable work.
            Every program may use it (program files and the search's prompts write
            ``with ctx.index_time():``); the evaluation meters index-time cost with it, and a
            deployed index's build records the encodes made inside it.
        deployed: what a deployed index hands its program (:class:`DeployedInputs`: scored
            rows, text analyses, stored embeddings); ``None`` everywhere else.

    """

    encode_fn: EncodeFn
    query_texts: Sequence[str]
    doc_texts: Sequence[str]
    query_ids: Sequence[str]
    doc_ids: Sequence[str]
    candidates: Sequence[NDArray[np.intp]] | None = None
    views_collapsed: bool = False
    index_time: Callable[[], AbstractContextManager[None]] = field(default=_no_scope)
    deployed: DeployedInputs | None = None

    @property
    def doc_lengths(self) -> NDArray[np.int64]:
        """Whitespace word count of each document (corpus metadata)."""
        return np.array([len(t.split()) for t in self.doc_texts], dtype=np.int64)


@runtime_checkable
class Program(Protocol):
    """A deterministic rescoring program.

    A program may also carry an integer class attribute ``version`` (read with
    :func:`program_version`; absent means 1), raised whenever its scores change for the same
    inputs: transfer cells and deployed indexes record it, so that a stored result of an older
    version is recomputed or refused rather than mixed with new ones. A program read from a
    file has no version to raise: it carries ``source_sha256``, the sha256 of its source (read
    with :func:`program_source_sha256`), which transfer cells record in its place. A program
    that can be deployed declares how as its class attribute ``recipe``
    (:class:`~embedding_ttc.programs.recipe.Recipe`); every library program does.
    """

    name: str

    def __call__(self, Q: Matrix, D: Matrix, S: Matrix, ctx: Context) -> Matrix:
        """Return a new |Q|×|D| finite score matrix."""
        ...


def program_version(program: object) -> int:
    """The program's ``version`` attribute (1 when it has none)."""
    version = getattr(program, "version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise TypeError(f"a program version is a positive int, got {version!r}")
    return version


def program_source_sha256(program: object) -> str | None:
    """The sha256 of the source a program was read from (``None``: a library program)."""
    digest = getattr(program, "source_sha256", None)
    if digest is not None and not isinstance(digest, str):
        raise TypeError(f"a program's source_sha256 is a hex string, got {digest!r}")
    return digest
