from embedding_ttc.programs.primitives.channels import prefix_scores
from embedding_ttc.programs.primitives.channels import fuse, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask
from embedding_ttc.programs.primitives.feedback import soft_centroid_query


def program(Q, D, S, ctx):
    P1 = prefix_scores(Q, D, Q.shape[1] // 4)
    P2 = prefix_scores(Q, D, Q.shape[1] // 2)
    S = S
    mask = candidate_mask(S.shape[0], S.shape[1], ctx.candidates)
    return fuse([S, P2, P1], [1.0, 1.0, 1.0], mask=mask)
