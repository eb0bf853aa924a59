"""Adds Document substructure decomposition as a new channel. The program scores documents by their pieces at two granularities: `chunk_scores(Q, ctx, "paragraph", "max", mask)` and `chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)`. These scores are then fused with the original cosine scores `S` using a weighted sum.

Novelty: Adds Document substructure decomposition as a new channel. The program scores documents by their pieces at two granularities: `chunk_scores(Q, ctx, "paragraph", "max", mask)` and `chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)`. These scores are then fused with the original cosine scores `S` using a weighted sum.
Hypothesis: The addition of Document substructure decomposition should raise nDCG@10, as the new scores should capture the semantic relationships between the pieces of documents more effectively than the original scores, which only consider the overall content of the documents.
Parent: g0002
Edit: 1 block(s) placed (code)
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
