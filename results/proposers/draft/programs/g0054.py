"""Novelty: combines Rocchio pseudo-relevance feedback with colbert maxsim over sentences.
Hypothesis: the best sentence of each document shares the vocabulary the query lacks."""
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.channels import chunk_scores, prf_scores
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, bm25_scores
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
from embedding_ttc.programs.primitives.late import maxsim
W_S = 1.0
W_BM25 = 0.5
ALPHA = 0.7

K = 3
K2 = 2
ALPHA2 = 0.75

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    # Move each query toward its top-ranked documents
    P = prf_scores(Q, D, S, k=K, alpha=ALPHA, mask=mask)
    # Score each document by its best sentence
    M = chunk_scores(Q, ctx, "sentence", "max", mask)
    # Fuse M with S
    M2 = zscore_rows(M)
    S2 = zscore_rows(S, mask)
    fused = fuse([S, M, M2], [W_S, 0.0, W_BM25], mask=mask)
    # Second idea: Score each document by its best sentence (again) and fuse with a second granularity
    M3 = chunk_scores(Q, ctx, "sentence", "topmean", mask)
    M4 = zscore_rows(M3)
    S3 = zscore_rows(S, mask)
    fused2 = fuse([S2, M4, M2], [W_S, 0.0, W_BM25], mask=mask)
    return fused2.astype(np.float32)
