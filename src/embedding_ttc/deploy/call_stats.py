"""Where one :class:`~embedding_ttc.deploy.reranker.Reranker` call's time and encoder work went.

A call fills one :class:`CallStats` as it runs: the query encodes, the program call (its live
encodes, what the index served), the documents given as texts whose index-time work was computed
live, and the seconds of each part (``benchmarks/rerank_latency.py`` reads them).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CallStats:
    """Where one call's time and encoder work went.

    Attributes:
        queries: live queries scored.
        query_encodes: query texts encoded for the queries' own embeddings.
        program_encodes: texts the program sent to the live encoder (query-time encodes).
        live_calls: encoder calls, both kinds.
        store_texts: texts the program's ``encode_fn`` served from the index.
        index_misses: document-side texts the index lacked (encoded live; 0 normally).
        live_documents: documents given as texts that the index does not hold, whose
            index-time work was computed live (:meth:`Reranker.rerank_texts`).
        program_calls: program invocations.
        encode_seconds: seconds in the live encoder (query embeddings and program encodes).
        program_seconds: seconds inside the program, its live encodes included.
        program_encode_seconds: the part of ``program_seconds`` spent in the live encoder.

    """

    queries: int = 0
    query_encodes: int = 0
    program_encodes: int = 0
    live_calls: int = 0
    store_texts: int = 0
    index_misses: int = 0
    live_documents: int = 0
    program_calls: int = 0
    encode_seconds: float = 0.0
    program_seconds: float = 0.0
    program_encode_seconds: float = 0.0

    @property
    def algebra_seconds(self) -> float:
        """Seconds in the program outside the encoder (its matrix algebra and text work)."""
        return max(self.program_seconds - self.program_encode_seconds, 0.0)
