"""adds Document substructure decomposition (the suggested idea)

Novelty: adds Document substructure decomposition (the suggested idea)
Hypothesis: 
Parent: g0002
Edit: the reply's whole program (no block applied)
"""

import numpy as np
from embedding_ttc.programs.primitives.channels import chunk_scores, fuse
from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf


def program(Q, D, S, ctx):
    # Add the idea of Document substructure decomposition as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    chunk_paragraphs = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, n_d) chunk scores for paragraphs
    chunk_sentence_pairs = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_d) chunk scores for sentence pairs
    merged_chunks = merge_chunks(chunk_paragraphs, chunk_sentence_pairs)  # (n_q, n_d) merged chunk scores
    fused_scores = fuse([S, merged_chunks], [1, 0], mask)  # float32 (n_q, n_d)
    return fused_scores


def merge_chunks(chunk_paragraphs, chunk_sentence_pairs):
    # Merge the best chunk from each paragraph and the mean chunk from each sentence pair
    merged_scores = []
    for i in range(chunk_paragraphs.shape[0]):
        paragraph = chunk_paragraphs[i]
        mean_chunk = chunk_sentence_pairs[i]
        merged_chunk = (paragraph + mean_chunk) / 2  # Average the scores of the paragraph and sentence pair
        merged_scores.append(merged_chunk)
    return np.array(merged_scores)
