"""Reciprocal rank fusion of BM25 and the cosine scores (the library's BM25DenseRRF).

Novelty: the plain sparse-dense hybrid, RRF with k = 60 over each query's candidates.
Hypothesis: BM25 finds the exact-term matches the dense cosine misses.
"""

from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # EVOLVE-BLOCK-START
    mask = mask_for(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
    # EVOLVE-BLOCK-END
