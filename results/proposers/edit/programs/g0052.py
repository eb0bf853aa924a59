"""An edit of g0002

Novelty: 
Hypothesis: The new channel scores the query based on the cosine similarity of the documents, which helps the program to rank the documents based on the relevance of the query to the documents, which can lead to better nDCG@10.
Parent: g0002
Edit: 1 block(s) placed (exact)
"""

import numpy as np
from embedding_ttc.programs.primitives.channels import fuse
from embedding_ttc.programs.primitives.scores import zscore_rows
from embedding_ttc.programs.primitives.channels import query_view_scores
from embedding_ttc.programs.primitives.channels import bm25_scores, mask_for
from embedding_ttc.programs.primitives.scores import rrf

def program(Q, D, S, ctx):
    # Add a new channel that scores the query based on the cosine similarity of the documents
    query_cosines = query_view_scores(D, ctx, view='text-matching')
    mask = mask_for(ctx, query_cosines)  # an example: this block adds a new channel
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    # Normalise the query scores
    query_cosines = zscore_rows(query_cosines)
    # Add the normalised query scores to the cosine similarity channel
    S = np.hstack((S, query_cosines))  # an example: this block changes the code
    # Fuse the channels using the zscore_rows method
    S = fuse([lexical, S], method='zscore')
    return rrf(S, mask=mask)  # float32 (n_q, n_d)
