"""Adds the document substructure decomposition score (chunk_scores(Q, ctx, "sentence_pair", "topmean", mask) as a new channel. The best piece and the mean piece are then fused with S using the rrf function.

Novelty: Adds the document substructure decomposition score (chunk_scores(Q, ctx, "sentence_pair", "topmean", mask) as a new channel. The best piece and the mean piece are then fused with S using the rrf function.
Hypothesis: This modification increases the nDCG@10 score significantly for many tasks, including financebench_pages, aila_statutes, and lemb_needle. The chunk_scores functions effectively capture the main structure of documents by considering both large paragraphs and sentence-level pairs, which are more discriminative than the original BM25 scores. The fusion of these scores with the original S improves the overall retrieval performance across these tasks.
Parent: g0002
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import chunk_scores
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Matryoshka cascading (dimension truncation) as a new channel
    chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    return rrf([lexical, S], mask)  # float32 (n_q, n_d)
