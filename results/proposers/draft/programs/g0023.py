"""Novelty: introduces Rocchio pseudo-relevance feedback with colbert maxsim over sentences.
Hypothesis: adds a second round fed by the first one's ranking to the cosine scores, then fuse the channels with S."""

from embedding_ttc.programs.primitives.channels import fuse, chunk_scores, prf_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, top_k_indices

K = 3
ALPHA = 0.7
K2 = 2
ALPHA2 = 0.5


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)  # moved query's cosine matrix
    P2 = prf_scores(Q, D, P, k=K2, alpha=ALPHA2, mask=mask)  # second round fed by the first one's ranking
    M = chunk_scores(Q, ctx, "sentence", "max", mask)  # score each document by its best sentence
    M2 = chunk_scores(Q, ctx, "paragraph", "topmean", mask)  # second granularity (chunk_scores(Q, ctx, "paragraph", "topmean", mask))
    return fuse([S, P, P2, M, M2], [1.0, 1.0, 1.0, 1.0, 1.0], mask=mask)
