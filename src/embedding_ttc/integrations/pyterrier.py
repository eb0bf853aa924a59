"""A deployed program as a PyTerrier re-ranking transformer (the ``pyterrier`` extra).

    import pyterrier as pt
    from embedding_ttc.integrations.pyterrier import EmbeddingTTCReranker

    rerank = EmbeddingTTCReranker.from_index("runs/scifact-sc")
    pipeline = bm25 >> pt.text.get_text(dataset, "text") >> rerank % 10

The standard re-ranker contract: the input is a result frame (``qid``, ``query``, ``docno``, the
document ``text`` and, when the frame has one, its ``title``); the output is the same rows with
the program's ``score`` and each query's ``rank`` (:func:`pyterrier.model.add_ranks`; ties:
earlier row first), queries in the order they first appear, each best first. Every row is
kept (cut with ``% k``). A row's ``docno`` is the id the index may hold it under: a document
the index holds under that id with the same text (title and text joined as the index joined
them) uses its stored work; any other is computed live. One program call per query.

The transformer is pure Python: neither importing PyTerrier nor running it starts Java (only
Terrier's own indexes and retrievers need the JVM).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from embedding_ttc.deploy.errors import CandidateRequestError
from embedding_ttc.deploy.reranker import Reranker
from embedding_ttc.encoders.base import Encoder
from embedding_ttc.integrations.candidates import missing_framework

try:
    import pandas as pd
    import pyterrier as pt
except ModuleNotFoundError as exc:
    raise missing_framework(
        exc, "pyterrier", "pyterrier", "pyterrier", "the PyTerrier adapter"
    ) from None


def _missing(value: object) -> bool:
    """A frame's empty cell: ``None`` or NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))


class EmbeddingTTCReranker(pt.Transformer):
    """Re-rank each query's documents of a result frame with a deployed program.

    Attributes:
        reranker: the deployed program (:class:`~embedding_ttc.deploy.Reranker`).
        text_field: the column holding a document's text.
        title_field: the column holding its title, used when the frame has it (``None``:
            never), joined with the text as the index joined them.

    """

    def __init__(
        self, reranker: Reranker, *, text_field: str = "text", title_field: str | None = "title"
    ) -> None:
        self.reranker = reranker
        self.text_field = text_field
        self.title_field = title_field

    @classmethod
    def from_index(
        cls,
        directory: Path | str,
        *,
        text_field: str = "text",
        title_field: str | None = "title",
        encoder: Encoder | None = None,
        cache_dir: Path | str | None = None,
        verify: bool = False,
    ) -> EmbeddingTTCReranker:
        """Open the index at ``directory`` (:meth:`Reranker.load`) and wrap it."""
        reranker = Reranker.load(directory, encoder=encoder, verify=verify, cache_dir=cache_dir)
        return cls(reranker, text_field=text_field, title_field=title_field)

    def __repr__(self) -> str:
        return f"EmbeddingTTCReranker({self.reranker!r})"

    def transform(self, inp: pd.DataFrame) -> pd.DataFrame:
        """The rows of ``inp`` with the program's ``score`` and each query's ``rank``.

        Raises:
            pyterrier.validate.InputValidationError: a column the contract needs is missing.
            ValueError: a query id comes with more than one query text.
            CandidateRequestError: a malformed document (an empty text, a non-string docno, a docno
                given twice for a query); the message names the query id.

        """
        pt.validate.result_frame(inp, extra_columns=["query", self.text_field])
        out = inp.drop(columns=["score", "rank"], errors="ignore").copy()
        scores = np.zeros(len(out), dtype=np.float64)
        titled = self.title_field is not None and self.title_field in out.columns
        for qid, rows in out.groupby("qid", sort=False).indices.items():
            frame = out.iloc[rows]
            queries = frame["query"].unique()
            if len(queries) != 1:
                raise ValueError(
                    f"query id {qid!r} comes with {len(queries)} query texts; give one per qid"
                )
            titles = frame[self.title_field] if titled else [None] * len(frame)
            records = [
                self._record(docno, text, title)
                for docno, text, title in zip(
                    frame["docno"], frame[self.text_field], titles, strict=True
                )
            ]
            try:
                scored = self.reranker.score_texts(queries[0], records)
            except CandidateRequestError as err:
                raise CandidateRequestError(
                    f"query id {qid!r}: {err}", position=err.position
                ) from None
            scores[rows] = scored.scores
        out["score"] = scores
        pt.model.add_ranks(out)
        order = np.lexsort((out["rank"].to_numpy(), pd.factorize(out["qid"])[0]))
        return out.iloc[order].reset_index(drop=True)

    @staticmethod
    def _record(docno: object, text: object, title: object) -> dict[str, Any]:
        """A row as the reranker's ``{"text", "id"?, "title"?}`` record (checked there).

        An empty docno cell (``None``, or the NaN pandas may turn it into) is a document
        without id, matched by its text.
        """
        record: dict[str, Any] = {"text": text}
        if not _missing(docno):
            record["id"] = docno
        if not _missing(title):
            record["title"] = title
        return record
