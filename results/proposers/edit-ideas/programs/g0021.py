"""Document substructure decomposition adds a new channel to the retrieval program, allowing for the scoring of documents by their pieces at two granularities: chunk_scores(Q, ctx, "paragraph", "max", mask) and chunk_scores(Q, ctx, "sentence_pair", "topmean", mask). This new channel enhances the retrieval program's ability to score documents and potentially improves recall and precision in retrieval tasks.

Novelty: Document substructure decomposition adds a new channel to the retrieval program, allowing for the scoring of documents by their pieces at two granularities: chunk_scores(Q, ctx, "paragraph", "max", mask) and chunk_scores(Q, ctx, "sentence_pair", "topmean", mask). This new channel enhances the retrieval program's ability to score documents and potentially improves recall and precision in retrieval tasks.
Hypothesis: By incorporating document substructure decomposition, the retrieval program can score documents by their pieces at two granularities: chunk_scores(Q, ctx, "paragraph", "max", mask) and chunk_scores(Q, ctx, "sentence_pair", "topmean", mask). This new channel enhances the retrieval program's ability to score documents and potentially improves recall and precision in retrieval tasks. '''
Parent: g0000-P0
Edit: 1 block(s) placed (exact)
"""
from embedding_ttc.programs.primitives.channels import chunk_scores, fuse


def program(Q, D, S, ctx):
    A = chunk_scores(Q, ctx, "paragraph", "max")  # scores of the best pieces at paragraph granularity
    B = chunk_scores(Q, ctx, "sentence_pair", "topmean")  # scores of the mean pieces at sentence pair granularity
    S = fuse([S, A, B], [weights])  # fuse the channels with the cosine scores
    return S.copy()
