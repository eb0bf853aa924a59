"""Documents a caller gives as texts: which the index holds, and the columns of a call over them.

Documents the index does not hold (:meth:`~embedding_ttc.deploy.reranker.Reranker.rerank_texts`,
a caller whose first stage is another system): each is given as its text, and its index-time
work (its ``retrieval.passage`` row of ``D``, the program's document-side encodes) is computed
live by the recording pass ``index build`` runs
(:func:`~embedding_ttc.deploy.recording.record_encodes`), through the encoder (its on-disk cache,
when it has one, so a repeated document is not re-encoded); it is then scored in the same
program call as the documents the index holds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from embedding_ttc.deploy.call_stats import CallStats
from embedding_ttc.deploy.doc_table import text_hash
from embedding_ttc.deploy.index import Index
from embedding_ttc.deploy.index_texts import RowTexts
from embedding_ttc.deploy.live_scoring import Columns, LiveScorer
from embedding_ttc.deploy.recording import record_encodes
from embedding_ttc.deploy.store import StoreBuilder
from embedding_ttc.deploy.text_documents import TextDocument
from embedding_ttc.encoders.base import PASSAGE, Embeddings
from embedding_ttc.encoders.encode import encode_texts


class CallerTexts:
    """Finds a caller's documents in an index and builds the columns of a call over them.

    Not thread-safe: the reranker's lock serialises its calls.
    """

    def __init__(self, index: Index, row: dict[str, int], scorer: LiveScorer) -> None:
        self.index = index
        self._row = row  # id -> index row (the reranker's)
        self._scorer = scorer
        # Text hashes, sorted, with their rows (16 bytes a document): built on the first call
        # with texts; a bare text is found by its hash and confirmed by reading the row.
        self._hash_order: tuple[NDArray[np.uint64], NDArray[np.intp]] | None = None

    def held(self, docs: Sequence[TextDocument]) -> NDArray[np.intp]:
        """Each document's index row if the index holds it (same id and text), else -1.

        A bare text is the first row (in index order) holding that text.
        """
        rows = np.full(len(docs), -1, dtype=np.intp)
        for p, doc in enumerate(docs):
            if doc.id is None:
                rows[p] = self._row_of_text(doc.text)
                continue
            row = self._row.get(doc.id)
            if row is not None and self.index.document(row).joined == doc.text:
                rows[p] = row
        return rows

    def _row_of_text(self, text: str) -> int:
        if self._hash_order is None:
            hashes = np.concatenate([s.table.hashes for s in self.index.segments])
            order = np.argsort(hashes, kind="stable").astype(np.intp)  # equal hashes: row order
            self._hash_order = (hashes[order], order)
        hashes, order = self._hash_order
        h = np.uint64(text_hash(text))
        lo, hi = np.searchsorted(hashes, h, "left"), np.searchsorted(hashes, h, "right")
        for row in order[lo:hi]:
            if self.index.document(int(row)).joined == text:
                return int(row)
        return -1

    def columns(
        self, query: str, docs: Sequence[TextDocument], rows: NDArray[np.intp], stats: CallStats
    ) -> tuple[Columns, NDArray[np.intp]]:
        """The columns of a call over texts, and the document of each column.

        Held documents come first in ascending row order (so a call of held documents only
        has the columns of :meth:`Reranker.score`'s call over their ids), then the live ones.
        """
        held = np.flatnonzero(rows >= 0)
        held = held[np.argsort(rows[held], kind="stable")]
        live = np.flatnonzero(rows < 0)
        D = np.empty((len(docs), self.index.manifest.encoder.dim), dtype=np.float32)
        D[: held.size] = self.index.vectors(rows[held])
        recorded = None
        texts = list(dict.fromkeys(docs[int(p)].text for p in live))
        if texts:
            embeddings, recorded = self._compute_live(query, texts, stats)
            where = {t: i for i, t in enumerate(texts)}
            D[held.size :] = embeddings[[where[docs[int(p)].text] for p in live]]
        live_texts = tuple(docs[int(p)].text for p in live)
        columns = Columns(
            D,
            RowTexts(self.index, rows[held], live_texts),
            tuple(self.index.doc_ids[int(j)] for j in rows[held])
            + tuple(f"live-{int(p)}" for p in live),
            rows[held],
            live_texts,
            recorded,
            self._scorer.analyses(rows[held], live_texts),
        )
        return columns, np.concatenate([held, live])

    def _compute_live(
        self, query: str, texts: list[str], stats: CallStats
    ) -> tuple[Embeddings, StoreBuilder]:
        """The index-time work of documents the index lacks, as ``index build`` computes it.

        Their ``D`` rows, then the build's recording pass over them (with this query as its
        sample query), against the index's store: encodes the store already holds are served
        from it, and a cached encoder serves texts it has seen before.
        """
        encoder, program = self._scorer.encoder, self._scorer.program
        D = encode_texts(encoder, texts, PASSAGE)
        rec = record_encodes(program, encoder, texts, D, [query], self.index.store, None)
        stats.live_documents += len(texts)
        return D, rec.recorded
