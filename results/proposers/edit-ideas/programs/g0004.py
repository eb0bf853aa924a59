"""Rocchio pseudo-relevance feedback Move each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask) is the moved query's cosine matrix. Add a second round fed by the first one's ranking, P2 = prf_scores(Q, D, P, k=k2, alpha=ALPHA2, mask=mask), and fuse the channels with S: fuse([S, P, P2], [weights], mask). Keep the program's channels and add this one to its fusion (a new line computing the channel, and the channel added to the list the program fuses).

Novelty: Rocchio pseudo-relevance feedback Move each query toward its top-ranked documents: P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask) is the moved query's cosine matrix. Add a second round fed by the first one's ranking, P2 = prf_scores(Q, D, P, k=k2, alpha=ALPHA2, mask=mask), and fuse the channels with S: fuse([S, P, P2], [weights], mask). Keep the program's channels and add this one to its fusion (a new line computing the channel, and the channel added to the list the program fuses).
Hypothesis: The program does not use the bm25_scores(ctx), chunk_scores(Q, ctx, "paragraph", "topmean", mask), view_scores(Q, ctx, "classification"), or zscore_cols(S, mask) in its fusion.
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Matryoshka cascading (dimension truncation) as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # an example: this block changes only the comment
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask=mask)  # float32 (n_q, n_d)
