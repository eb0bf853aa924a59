"""Adds ColBERT MaxSim over sentences Score each document by its best sentence: M = chunk_scores(Q, ctx, "sentence", "max", mask). Fuse M with S and with a second granularity (chunk_scores(Q, ctx, "paragraph", "topmean", mask)): fuse([S, M, M2], [weights], mask). Keep the program's channels and add this one to its fusion (a new line computing the channel, and the channel added to the list the program fuses).

Novelty: Adds ColBERT MaxSim over sentences Score each document by its best sentence: M = chunk_scores(Q, ctx, "sentence", "max", mask). Fuse M with S and with a second granularity (chunk_scores(Q, ctx, "paragraph", "topmean", mask)): fuse([S, M, M2], [weights], mask). Keep the program's channels and add this one to its fusion (a new line computing the channel, and the channel added to the list the program fuses).
Hypothesis: The idea to add: ColBERT MaxSim over sentences
Parent: g0043
Edit: 1 block(s) placed (exact)
"""
import numpy as np

from embedding_ttc.programs.primitives.channels import bm25_scores, fuse
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols, ranks, rrf, top_k_indices, bottom_k_indices
from embedding_ttc.programs.primitives.feedback import soft_centroid_query, fisher_direction
from embedding_ttc.programs.primitives.late import maxsim, topmeansim
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, sentence_pairs, split_paragraphs, split_sentences
from embedding_ttc.programs.primitives.lexical import BM25, bigram_overlap, query_term_coverage, rare_term_idf, tokenize
from embedding_ttc.programs.primitives.channels import prf_scores

def program(Q, D, S, ctx):
    B = bm25_scores(ctx)  # an example: this block changes only the comment
    C = query_term_coverage(ctx.query_texts, ctx.doc_texts)  # C: Fraction of each query's distinct terms that occur in each document
    channels = [S, B, C]  # list of channels
    weights = [1.0, 0.5, 0.5]  # weights for each channel
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)  # build the candidate mask from ctx.candidates
    P = prf_scores(Q, D, S, k=3, alpha=0.5, mask=mask)  # P: prf scores of each query's top 3 documents
    P2 = prf_scores(Q, D, P, k=3, alpha=0.5, mask=mask)  # P2: prf scores of each query's top 3 documents after being moved toward its top 3 documents
    channels.append(P2)  # add the second round of prf scores
    weights.append(0.5)  # add the weight for the second round of prf scores
    S = fuse(channels, weights, mask=mask, method="rrf")  # fuse channels with S by rank (Cormack et al. 2009), or by z-scores with weights
    # Score-distribution analysis
    zscore_S = zscore_rows(S, mask)  # zscore the rows of S
    zscore_C = zscore_cols(S, mask)  # zscore the columns of S
    scores = []
    for row in zscore_S:
        scores.append(np.max(row) - np.partition(row, 10)[10])
    scores = np.array(scores)
    per_query_weights = 1 / scores[0]
    per_query_weights /= np.sum(per_query_weights)
    S = fuse([S, zscore_C], [per_query_weights, 1], mask=mask, method="zscore")
    return S.copy()  # an example: this block changes only the comment
