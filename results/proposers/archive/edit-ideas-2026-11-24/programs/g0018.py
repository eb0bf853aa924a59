"""adds Rocchio pseudo-relevance feedback (the suggested idea)

Novelty: adds Rocchio pseudo-relevance feedback (the suggested idea)
Hypothesis: 
Parent: g0017
Edit: 1 block(s) placed (exact)
"""

import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores, fuse, prefix_scores
# Add the idea of Rocchio pseudo-relevance feedback as ONE new channel
from embedding_ttc.programs.primitives.channels import prf_scores
from embedding_ttc.programs.primitives.scores import top_k_indices

def program(Q, D, S, ctx):
    # Add the idea of Rocchio pseudo-relevance feedback as a new channel
    prefix1 = prefix_scores(Q, D, Q.shape[1] // 4)  # (n_q, Q.shape[1] // 4)
    prefix2 = prefix_scores(Q, D, Q.shape[1] // 2)  # (n_q, Q.shape[1] // 2)
    mask = mask_for(ctx, S)  # an example: this block changes only the comment
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    chunk_paragraphs = chunk_scores(Q, ctx, "paragraph", "max", mask)  # (n_q, n_d) chunk scores for paragraphs
    chunk_sentence_pairs = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # (n_q, n_d) chunk scores for sentence pairs
    merged_chunks = merge_chunks(chunk_paragraphs, chunk_sentence_pairs)  # (n_q, n_d) merged chunk scores
    fused_scores = fuse([S, merged_chunks], [1, 0], mask)  # float32 (n_q, n_d)

    # Rocchio pseudo-relevance feedback
    k = 10  # number of top documents to move toward
    alpha = 0.5  # weight for the original document
    top_indices = top_k_indices(S, k, mask=mask)

    # Compute the moved query's cosine matrix
    P = np.zeros_like(S)
    for i in range(S.shape[0]):
        P[i, top_indices[i]] = alpha * S[i, top_indices[i]] + (1 - alpha) * S[i, i]

    # Add the second round of pseudo-relevance feedback
    k2 = 5  # number of top documents to move toward
    alpha2 = 0.3  # weight for the original document
    top_indices2 = top_k_indices(P, k2, mask=mask)

    # Compute the final moved query's cosine matrix
    P2 = np.zeros_like(S)
    for i in range(S.shape[0]):
        P2[i, top_indices2[i]] = alpha2 * P[i, top_indices2[i]] + (1 - alpha2) * P[i, i]

    # Fuse the channels with S
    fused_scores = fuse([S, P, P2], [1, 0, 0], mask)  # float32 (n_q, n_d)

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
