"""Novelty: decomposes the document substructure into chunks and fuses S with both.
Hypothesis: each chunk contributes to the document's score, and the scores of chunks are normalized to reflect their relative importance.
"""
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25
from embedding_ttc.programs.primitives.chunking import Chunks, chunk_documents, split_sentences
W_S = 1.0
W_BM25 = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    chunks = chunk_documents(ctx.doc_texts, split_sentences)

    # Score documents by their best sentence
    M = chunk_scores(Q, ctx, "sentence", "max", mask)

    # Score documents by their best paragraph (top mean)
    A = chunk_scores(Q, ctx, "paragraph", "topmean", mask)

    # Fuse S with both scores
    fused = fuse([S, M, A], [W_S, W_BM25, W_BM25], mask=mask)
    return fused.astype(np.float32)
