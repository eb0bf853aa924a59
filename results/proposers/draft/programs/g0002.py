"""Novelty: decomposes the documents into chunks at two granularities, scores them, and fuses with S.
Hypothesis: by combining the best chunk and the mean chunk of each document, the score improves."""

import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, chunk_scores
from embedding_ttc.programs.primitives.scores import candidate_mask

W_S = 1.0
W_PARAGRAPH = 0.5
W_SENTENCE_PAIR = 0.5

def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    A = chunk_scores(Q, ctx, "paragraph", "max", mask)
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)
    return fuse([S, A, B], [W_S, W_PARAGRAPH, W_SENTENCE_PAIR], mask=mask)
