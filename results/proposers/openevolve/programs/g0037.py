import numpy as np
from embedding_ttc.programs.primitives.channels import bm25_scores, chunk_scores, fuse, prefix_scores, prf_scores, query_view_scores, view_scores
from embedding_ttc.programs.primitives.scores import candidate_mask, zscore_rows, zscore_cols

def program(Q, D, S, ctx):
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

    # Compute cosine scores without the need for bm25DenseRRF
    cos_scores = np.dot(Q, D.T)

    # Add a small constant to avoid division by zero in the reciprocal rank fusion
    cos_scores += 1e-9

    # Apply reciprocal rank fusion with BM25
    top_k = 60
    bm25_scores = bm25_scores(ctx)
    fused_scores = fuse(cos_scores, bm25_scores, method='zscore')

    return fused_scores