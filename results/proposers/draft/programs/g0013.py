from embedding_ttc.programs.primitives.channels import chunk_scores, prefix_scores
import numpy as np
from embedding_ttc.programs.primitives.channels import fuse, prefix_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query
from embedding_ttc.programs.primitives.lexical import BM25, query_term_coverage


def program(Q, D, S, ctx):
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)  # prefix_scores(Q, D, Q.shape[1] // 4) — Cosine over the first Q.shape[1] // 4 dimensions, each row renormalised (Matryoshka prefix).
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)  # prefix_scores(Q, D, Q.shape[1] // 2) — Cosine over the first Q.shape[1] // 2 dimensions, each row renormalised (Matryoshka prefix).
    A = chunk_scores(Q, ctx, "paragraph", "max", mask)  # chunk_scores(Q, ctx, "paragraph", "max", mask) — Documents scored by pieces (unit sentence|sentence…)
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean", mask)  # chunk_scores(Q, ctx, "sentence_pair", "topmean", mask) — Documents scored by pieces (unit sentence|sentence…
    return fuse([S, P2, P1, A, B], [1.0, 1.0, 1.0, 1.0, 1.0], mask=mask, method='rrf')  # fuse([S, P2, P1, A, B], [1.0, 1.0, 1.0, 1.0, 1.0], mask, 'rrf')
