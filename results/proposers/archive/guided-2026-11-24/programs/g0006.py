"""Structural program: dense + reverse + bm25 by reciprocal rank fusion, 0 feedback rounds.

Novelty: Relative to g0001, adds the Matryoshka half-dimension cosine (row z-scores); replaces the Matryoshka half-dimension cosine with the reversed perspective (documents encoded as queries); (the chosen change alone repeats a known program) [genome dense:row+reverse:row+bm25:row|rrf|0].
Hypothesis: The addition of the Matryoshka half-dimension cosine channel (row z-scores) to the retrieval program could potentially raise nDCG@10 on every task because this channel effectively normalizes the relevance of the cosine scores, making it easier for the retrieval system to compare and rank documents.
Parent: g0001
Genome: {"channels": {"dense": "row", "reverse": "row", "bm25": "row"}, "fusion": "rrf", "rounds": 0, "refine": "rocchio"}
"""

import numpy as np

from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.scores import RRF_K, candidate_mask, rrf, zscore_rows


def program(Q, D, S, ctx):
    n_q, n_d = S.shape
    mask = candidate_mask(n_q, n_d, ctx.candidates)
    with ctx.index_time():
        docs_as_queries = ctx.encode_fn(list(ctx.doc_texts), "retrieval.query")
    reverse = Q @ docs_as_queries.T
    bm25 = BM25.fit(ctx.doc_texts).scores(ctx.query_texts)
    channels = [
        zscore_rows(S, mask),
        zscore_rows(reverse, mask),
        zscore_rows(bm25, mask),
    ]
    fused = rrf(channels, mask, k=RRF_K)
    if mask is not None:
        fused = np.where(mask, fused, 0.0)
    return fused.astype(np.float32)
