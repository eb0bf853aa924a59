import numpy as np
import math
import re
from collections import defaultdict
from itertools import chain

def improved_program(Q, D, S, ctx):
    """Return a new |Q|x|D| float32 matrix of scores (higher is better).

    Q: (|Q|, d) float32, L2-normalised query embeddings (view "retrieval.query").
    D: (|D|, d) float32, L2-normalised document embeddings (view "retrieval.passage").
    S: (|Q|, |D|) float32, the cosine matrix Q @ D.T (do not modify it in place).
    ctx.encode_fn(texts, view="retrieval.query", dim=None, max_length=None) -> (n, d) float32
        unit rows; views: "retrieval.query", "retrieval.passage", "text-matching",
        "classification"; every text encoded costs one unit.
    ctx.index_time(): context manager; encodes of document-side text inside it are
        amortisable index-time work.
    ctx.query_texts, ctx.doc_texts: raw texts aligned with the rows / columns of S.
    ctx.query_ids, ctx.doc_ids: identifiers.
    ctx.candidates: None, or per query an int array of the column indices it ranks
        (feedback must only look at these).
    ctx.views_collapsed: True when all views are the same encoding.
    ctx.doc_lengths: int64 word count per document.
    """
    # EVOLVE-BLOCK-START
    mask = candidate_mask(ctx, S)  # None, or (n_q, n_d) bool: each query's candidates
    lexical = bm25_scores(ctx)  # (n_q, n_d) BM25 of the query and document texts
    cosine_prefix_scores = prefix_scores(Q, D, dims=3)  # Cosine over the first 3 dimensions, renormalised
    feedback_scores = prf_scores(Q, D, S, k=3, alpha=0.5)  # Soft centrality
    improved_scores = fuse([cosine_prefix_scores, feedback_scores], weights=[1, 1])  # Reciprocal rank fusion
    return improved_scores  # float32 (n_q, n_d)
    # EVOLVE-BLOCK-END