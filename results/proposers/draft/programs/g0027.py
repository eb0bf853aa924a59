from embedding_ttc.programs.primitives.chunking import chunk_documents
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores, zscore_rows
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query

W_S = 1.0
W_CHUNKS = 0.5
W_ZSCORE = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    chunks = chunk_documents(ctx.doc_texts, "sentence_pair", reduce="max")
    scores_chunk1 = chunk_scores(Q, ctx, "sentence_pair", reduce="max", mask=mask)
    scores_chunk2 = chunk_scores(Q, ctx, "paragraph", reduce="max", mask=mask)

    # Calculate z-scores
    z_scores_chunk1 = zscore_rows(scores_chunk1, mask)
    z_scores_chunk2 = zscore_rows(scores_chunk2, mask)

    # Measure how peaked each row is (gap between its best and 10th best score)
    peaks_chunk1 = np.argsort(z_scores_chunk1)[-10] - np.argsort(z_scores_chunk1)
    peaks_chunk2 = np.argsort(z_scores_chunk2)[-10] - np.argsort(z_scores_chunk2)

    # Mix the two channels with per-query weights that depend on that gap
    weights_chunk1 = peaks_chunk1 / np.sum(peaks_chunk1)
    weights_chunk2 = peaks_chunk2 / np.sum(peaks_chunk2)

    # Fuse the channels with weights
    S_chunk1 = chunk_scores(Q, ctx, "sentence_pair", reduce="max", mask=mask)
    S_chunk2 = chunk_scores(Q, ctx, "paragraph", reduce="max", mask=mask)

    S_merged = fuse([S, S_chunk1, S_chunk2], [W_S, W_CHUNKS, W_ZSCORE], mask=mask)
    return S_merged.astype(np.float32)
